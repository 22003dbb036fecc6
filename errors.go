package singletable

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
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
	// unknown. An attempt got no answer (a lost response, a timeout, a
	// 5xx), the SDK's retry of the same request failed its condition, and
	// the item as it is now does not show this write: the first attempt
	// may have been applied and then overwritten by another writer, or not
	// applied at all. It is not ErrVersionConflict or ErrConditionFailed,
	// so a read-modify-write loop does not blindly apply its change again:
	// treat it like a timeout (see docs/reliability.md).
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

// keyErrorOr returns err when it is a *KeyError already (naming the index
// and key concerned), and otherwise the *KeyError wrapping it the caller
// made.
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

// ErrUnprocessed: DynamoDB still left an item of a batch unprocessed
// (UnprocessedItems or UnprocessedKeys) after the retry budget was spent.
// The item was neither written nor read; it is reported in a *BatchError.
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
	// or a guard item (see Guard).
	Key map[string]types.AttributeValue
	// Guard is "" when the op's own item failed, or says which guard item
	// failed, e.g. "unique Email".
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
	// MaybeApplied is set when an earlier attempt of this transaction got
	// no answer (a lost response, a timeout, a 5xx) and the last attempt
	// was cancelled only by conflicts or throttling: the earlier attempt
	// may have committed. Sending the same request with the same client
	// request token within 10 minutes settles it (success if it had
	// committed); building a new transaction could apply the writes twice.
	// A cancellation by a failed condition is never MaybeApplied: a retry
	// of a committed transaction with its token succeeds instead.
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
			fmt.Fprintf(&b, ": %s", redactMessage(r.Message))
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

// redactAPI returns err, an error of the SDK, with the values DynamoDB's
// message quotes left out of its text: a ValidationException for a set
// with duplicate members lists the members ("Input collection [a, a]
// contains duplicates"), and one for a number that does not parse quotes
// it. Errors never contain non-key attribute values (docs/security.md).
// The result unwraps to err, so errors.As still reaches the SDK's types,
// whose fields hold DynamoDB's message unchanged.
func redactAPI(err error) error {
	var ae smithy.APIError
	if err == nil || !errors.As(err, &ae) {
		return err
	}
	msg := ae.ErrorMessage()
	safe := redactMessage(msg)
	if safe == msg {
		return err
	}
	return &redactedError{text: strings.ReplaceAll(err.Error(), msg, safe), err: err}
}

// redactedError is an SDK error with another text (see redactAPI).
type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

// redactMessage leaves out of a DynamoDB error message the parts that
// quote values: what follows "numeric value:", and what lies between
// brackets (the members of a set) unless it is a list of cancellation
// reason codes, as a TransactionCanceledException's message has.
func redactMessage(msg string) string {
	out := msg
	if i := strings.Index(out, "numeric value:"); i >= 0 {
		out = out[:i+len("numeric value:")] + " (value left out)"
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(out, '[')
		if i < 0 {
			b.WriteString(out)
			break
		}
		j := strings.IndexByte(out[i:], ']')
		if j < 0 {
			b.WriteString(out[:i])
			b.WriteString("[…]")
			break
		}
		inner := out[i+1 : i+j]
		b.WriteString(out[:i+1])
		if reasonCodes(inner) {
			b.WriteString(inner)
		} else {
			b.WriteString("…")
		}
		b.WriteByte(']')
		out = out[i+j+1:]
	}
	return b.String()
}

// reasonCodes reports whether s is a list of DynamoDB's cancellation
// reason codes ("ConditionalCheckFailed, None"), which quote no value.
func reasonCodes(s string) bool {
	for _, c := range strings.Split(s, ",") {
		switch strings.TrimSpace(c) {
		case "None", "ConditionalCheckFailed", "ItemCollectionSizeLimitExceeded", "TransactionConflict",
			"ProvisionedThroughputExceeded", "ThrottlingError", "ValidationError":
		default:
			return false
		}
	}
	return true
}
