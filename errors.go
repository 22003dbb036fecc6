package singletable

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Sentinel errors. Match them with [errors.Is]; where DynamoDB returned an
// error, the library's error also wraps it, so errors.As still reaches the
// SDK's type (for example *types.ConditionalCheckFailedException).
var (
	// ErrNotFound: the item does not exist (Get, Update without upsert, Delete with MustExist).
	ErrNotFound = errors.New("singletable: item not found")
	// ErrAlreadyExists: Create found an item with the same primary key, or a
	// unique attribute's value is taken.
	ErrAlreadyExists = errors.New("singletable: item already exists")
	// ErrConditionFailed: a caller-supplied condition did not hold.
	ErrConditionFailed = errors.New("singletable: condition failed")
	// ErrVersionConflict: the item's version is not the one the caller read.
	ErrVersionConflict = errors.New("singletable: version conflict")
	// ErrInvalidCursor: a cursor that is malformed, tampered with, expired, or
	// from another query.
	ErrInvalidCursor = errors.New("singletable: invalid cursor")
)

// KeyError reports a key that cannot be rendered: a template field that is
// missing or empty, or a value the key codec cannot encode. It names the
// entity, the index ("" for the table's primary key) and the fields.
type KeyError struct {
	Entity  string   // entity type, e.g. "UserSkill"
	Index   string   // index name; "" for the primary key
	Key     string   // which key attribute: "PK", "SK", or an index attribute
	Missing []string // Go field names whose values are missing or empty
	Err     error    // the underlying cause, if any
}

func (e *KeyError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: ")
	b.WriteString(e.Entity)
	if e.Index != "" {
		b.WriteString(" index ")
		b.WriteString(e.Index)
	}
	if e.Key != "" {
		b.WriteString(" key ")
		b.WriteString(e.Key)
	}
	if len(e.Missing) > 0 {
		b.WriteString(": missing ")
		b.WriteString(strings.Join(e.Missing, ", "))
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *KeyError) Unwrap() error { return e.Err }

// ValidationError reports input rejected before any request was sent: an
// unknown field, a schema mistake, an oversized item, a sort condition on a
// non-key attribute, too many transaction items.
type ValidationError struct {
	Entity string // entity type, when known
	Field  string // Go field or attribute concerned, when there is one
	Reason string
	Err    error
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: ")
	if e.Entity != "" {
		b.WriteString(e.Entity)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *ValidationError) Unwrap() error { return e.Err }

func validationErr(entity, field, format string, args ...any) *ValidationError {
	return &ValidationError{Entity: entity, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// opError ties a sentinel to the SDK error it came from, so both errors.Is
// (sentinel) and errors.As (SDK type) work on the result.
type opError struct {
	sentinel error
	detail   string
	cause    error
}

func (e *opError) Error() string {
	s := e.sentinel.Error()
	if e.detail != "" {
		s += ": " + e.detail
	}
	return s
}

func (e *opError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}

func wrapSentinel(sentinel error, detail string, cause error) error {
	return &opError{sentinel: sentinel, detail: detail, cause: cause}
}

// conditionFailed maps DynamoDB's ConditionalCheckFailedException to the
// given sentinel; other errors are returned unchanged.
func conditionFailed(err error, sentinel error, detail string) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return wrapSentinel(sentinel, detail, err)
	}
	return err
}

// ErrUnprocessed: DynamoDB still left an item of a batch unprocessed
// (UnprocessedItems or UnprocessedKeys) after the retry budget was spent.
// The item was neither written nor read; it is reported in a *BatchError.
var ErrUnprocessed = errors.New("singletable: unprocessed after retries")

// withCause returns err with cause attached when err is a sentinel error
// made by wrapSentinel without one; other errors are returned as they are.
func withCause(err, cause error) error {
	if oe, ok := err.(*opError); ok && oe.cause == nil {
		return &opError{sentinel: oe.sentinel, detail: oe.detail, cause: cause}
	}
	return err
}
