package singletable

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/redact"
	"github.com/singletable-go/singletable/internal/schema"
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
	// ErrMaybeApplied: a single-item Put, Update or Delete whose outcome is
	// unknown: an attempt got no answer, the SDK's retry failed its
	// condition, and the item does not show this write. Treat it like a
	// timeout, not a conflict (see docs/reliability.md).
	ErrMaybeApplied = errors.New("singletable: outcome unknown (an attempt got no answer and may have been applied)")
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

// Error names the entity, index, key and missing fields.
func (e *KeyError) Error() string {
	s := "singletable: " + e.Entity
	if e.Index != "" {
		s += " index " + e.Index
	}
	if e.Key != "" {
		s += " key " + e.Key
	}
	if len(e.Missing) > 0 {
		s += ": missing " + strings.Join(e.Missing, ", ")
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *KeyError) Unwrap() error { return e.Err }

// keyErrorOr returns err when it is a *KeyError already, else wrapped.
func keyErrorOr(err error, wrapped *KeyError) error {
	if ke, ok := err.(*KeyError); ok {
		return ke
	}
	return wrapped
}

// ValidationError reports input rejected before any request was sent: an
// unknown field, a schema mistake, an oversized item, a sort condition on a
// non-key attribute, too many transaction items.
type ValidationError struct {
	Entity string // entity type, when known
	Field  string // Go field or attribute concerned, when there is one
	Reason string
	Err    error
}

// Error names the entity, field and reason.
func (e *ValidationError) Error() string {
	s := "singletable: "
	if e.Entity != "" {
		s += e.Entity + ": "
	}
	if e.Field != "" {
		s += e.Field + ": "
	}
	s += e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying cause.
func (e *ValidationError) Unwrap() error { return e.Err }

func validationErr(entity, field, format string, args ...any) *ValidationError {
	return &ValidationError{Entity: entity, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// invalid is err, a *schema.Problem, as the *ValidationError it reports;
// other errors, and nil, as they are.
func invalid(err error) error {
	if p, ok := err.(*schema.Problem); ok {
		return validationOf(p)
	}
	return err
}

func validationOf(p *schema.Problem) *ValidationError {
	return &ValidationError{Entity: p.Entity, Field: p.Field, Reason: p.Reason, Err: p.Err}
}

// opError ties a sentinel to the SDK error it came from, so both errors.Is
// (sentinel) and errors.As (SDK type) work on the result.
type opError struct {
	sentinel error
	detail   string
	cause    error
}

// Error returns the sentinel's text and the detail.
func (e *opError) Error() string {
	s := e.sentinel.Error()
	if e.detail != "" {
		s += ": " + e.detail
	}
	return s
}

// Unwrap returns the sentinel and the SDK error, if any.
func (e *opError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.sentinel}
	}
	return []error{e.sentinel, e.cause}
}

func wrapSentinel(sentinel error, detail string, cause error) error {
	return &opError{sentinel: sentinel, detail: detail, cause: cause}
}

// ErrUnprocessed: DynamoDB still left an item of a batch unprocessed after
// the retry budget was spent; it is reported in a *BatchError.
var ErrUnprocessed = errors.New("singletable: unprocessed after retries")

// withCause returns err with cause attached when err is a sentinel error
// made by wrapSentinel without one; other errors are returned as they are.
func withCause(err, cause error) error {
	switch e := err.(type) {
	case *opError:
		if e.cause == nil {
			return &opError{sentinel: e.sentinel, detail: e.detail, cause: cause}
		}
	case *raceError:
		return &raceError{err: withCause(e.err, cause)}
	}
	return err
}

// TxReason is why DynamoDB refused one operation of a transaction.
type TxReason struct {
	// Index is the op's position among the Tx helper calls (from 0).
	Index int
	// Op is the helper: "Put", "Create", "Update", "Delete" or "Check"
	// for a write transaction, "Get" for [TxGet].
	Op string
	// Entity is the op's entity type.
	Entity string
	// Key is the primary key of the item that failed: the op's own item,
	// or the guard item Guard names ("unique Email"; "" for the op's own).
	Key   map[string]types.AttributeValue
	Guard string
	// Code is DynamoDB's cancellation code, e.g. "ConditionalCheckFailed",
	// "TransactionConflict", "ValidationError".
	Code string
	// Message is DynamoDB's description, when it gave one, as it gave it
	// (Error leaves out the values some descriptions quote).
	Message string
	// Err is the sentinel for the failure (ErrAlreadyExists,
	// ErrConditionFailed, ErrVersionConflict, ErrNotFound), or nil when the
	// code is not a failed condition.
	Err error

	keys keyNames // the table's, to print Key in key order
}

// TransactionError reports a cancelled transaction: which operations
// failed and why, from DynamoDB's CancellationReasons. The first failing
// op's fields are promoted from Reasons[0], so te.Index, te.Op and te.Err
// (its sentinel) describe it.
type TransactionError struct {
	TxReason
	// Reasons lists every op that failed, in transaction order.
	Reasons []TxReason
	// Cause is the SDK's error (a *types.TransactionCanceledException within).
	Cause error
	// MaybeApplied is set when an earlier attempt got no answer and the
	// last was cancelled only by conflicts or throttling: the earlier one
	// may have committed (resend with the same client request token).
	MaybeApplied bool
}

// conditionFailed reports whether an op failed its condition.
func (e *TransactionError) conditionFailed() bool {
	for _, r := range e.Reasons {
		if r.Code == "ConditionalCheckFailed" {
			return true
		}
	}
	return false
}

// Error names every failing op: index, kind, entity, key and reason.
func (e *TransactionError) Error() string {
	var b strings.Builder
	b.WriteString("singletable: transaction cancelled: ")
	for i, r := range e.Reasons {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "op %d (%s %s %s%s): %s", r.Index, r.Op, r.Entity, r.keys.text(r.Key), guardText(r.Guard), r.Code)
		if r.Err != nil {
			fmt.Fprintf(&b, ": %s", strings.TrimPrefix(r.Err.Error(), "singletable: "))
		} else if r.Message != "" {
			fmt.Fprintf(&b, ": %s", redact.Message(r.Message))
		}
	}
	if len(e.Reasons) == 0 {
		b.WriteString("no reason given")
	}
	if e.MaybeApplied {
		b.WriteString(" (an earlier attempt got no answer and may have committed)")
	}
	return b.String()
}

// Unwrap returns the sentinels of the failed ops and the SDK error.
func (e *TransactionError) Unwrap() []error {
	var out []error
	for _, r := range e.Reasons {
		if r.Err != nil {
			out = append(out, r.Err)
		}
	}
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	return out
}
