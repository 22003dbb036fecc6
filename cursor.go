package singletable

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/cursor"
	"github.com/singletable-go/singletable/internal/expr"
)

// binding is what a cursor is bound to: the hash new cursors carry and,
// for a multi-attribute partition, the legacy one older cursors carry.
type binding struct {
	bind, legacy [16]byte
	hasLegacy    bool
}

// partitionBinding binds a cursor to table, index, reader (an entity type
// or "\x00collection"), the partition's key values and the direction. The
// legacy binding joins a multi-attribute partition's values with NUL.
func partitionBinding(table, index, reader string, parts []string, dir string) binding {
	if len(parts) == 1 {
		return binding{bind: cursor.Binding(table, index, reader, parts[0], dir)}
	}
	all := make([]string, 0, len(parts)+5)
	all = append(all, table, index, reader, "\x00multi")
	all = append(all, parts...)
	return binding{
		bind:      cursor.Binding(append(all, dir)...),
		legacy:    cursor.Binding(table, index, reader, strings.Join(parts, "\x00"), dir),
		hasLegacy: true,
	}
}

func (t *Table) cursorCodec() *cursor.Codec {
	return &cursor.Codec{Keys: t.opts.CursorKeys, TTL: t.opts.CursorTTL, Now: t.opts.Now}
}

// cursorErr returns a cursor that does not decode as ErrInvalidCursor (a
// type assertion, not errors.As, keeps the success path allocation-free).
func cursorErr(err error) error {
	if ie, ok := err.(*cursor.InvalidError); ok {
		return wrapSentinel(ErrInvalidCursor, ie.Reason, nil)
	}
	return err
}

// decodeBoundCursor decodes a cursor bound to b (or its legacy binding) of
// a read whose key condition is conds (none for a scan).
func (t *Table) decodeBoundCursor(s string, b binding, attrs []string, conds []expr.KeyCond, nPart int) (map[string]types.AttributeValue, error) {
	c := t.cursorCodec()
	key, err := c.Decode(s, b.bind, attrs)
	if err != nil && b.hasLegacy {
		if k, lerr := c.Decode(s, b.legacy, attrs); lerr == nil {
			key, err = k, nil
		}
	}
	if err != nil {
		return nil, cursorErr(err)
	}
	return key, checkCursorKey(key, conds, nPart)
}

// checkCursorKey refuses a cursor whose key the key condition conds does
// not hold for (forged for another partition, or reused with another sort
// condition), which DynamoDB would refuse with a raw ValidationException.
// The first nPart conditions are the partition's.
func checkCursorKey(key map[string]types.AttributeValue, conds []expr.KeyCond, nPart int) error {
	for i, c := range conds {
		if c.Holds(key[c.Attr]) {
			continue
		}
		if i < nPart {
			return wrapSentinel(ErrInvalidCursor, "cursor key is in another partition than the query's", nil)
		}
		return wrapSentinel(ErrInvalidCursor, "cursor key is outside the query's sort condition (a cursor resumes only the query it came from)", nil)
	}
	return nil
}
