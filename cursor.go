package singletable

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/cursor"
	"github.com/singletable-go/singletable/internal/expr"
)

// binding is what a cursor is bound to: bind, and for a multi-attribute
// partition the legacy binding older cursors carry (cursor.Bound).
type binding struct {
	bind   [16]byte
	legacy cursor.Bound
}

// partitionBinding binds a cursor to a partition (cursor.PartitionBinding).
func partitionBinding(table, index, reader string, parts []string, dir string) binding {
	b := cursor.PartitionBinding(table, index, reader, parts, dir)
	return binding{bind: b.Bind, legacy: b}
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
	bound := b.legacy
	bound.Bind = b.bind
	key, err := t.cursorCodec().DecodeBound(s, bound, attrs)
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
