package singletable

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/cursor"
	"github.com/singletable-go/singletable/internal/expr"
)

// Cursors: the wire format is internal/cursor; a Table supplies the keys,
// TTL and clock of its options, and turns a cursor that does not decode
// into ErrInvalidCursor.

// cursorBinding hashes what a cursor is bound to.
func cursorBinding(parts ...string) [16]byte { return cursor.Binding(parts...) }

// binding is what a cursor is bound to: the hash new cursors carry and,
// for a multi-attribute partition, the hash cursors issued before the
// binding became injective carry.
type binding struct {
	bind, legacy [16]byte
	hasLegacy    bool
}

// partitionBinding binds a cursor to table, index, reader (an entity type
// or "\x00collection"), the partition's key values and the direction.
// Each value of a multi-attribute partition is its own length-prefixed
// part, so ("x\x00Sy", "z") and ("x", "y\x00Sz") bind apart; cursors
// issued when the values were joined with NUL still decode (legacy): the
// key condition check that follows the decode refuses one whose key is
// in another partition.
func partitionBinding(table, index, reader string, parts []string, dir string) binding {
	if len(parts) == 1 {
		return binding{bind: cursorBinding(table, index, reader, parts[0], dir)}
	}
	all := make([]string, 0, len(parts)+5)
	all = append(all, table, index, reader, "\x00multi")
	all = append(all, parts...)
	return binding{
		bind:      cursorBinding(append(all, dir)...),
		legacy:    cursorBinding(table, index, reader, strings.Join(parts, "\x00"), dir),
		hasLegacy: true,
	}
}

func (t *Table) cursorCodec() *cursor.Codec {
	return &cursor.Codec{Keys: t.opts.CursorKeys, TTL: t.opts.CursorTTL, Now: t.opts.Now}
}

// cursorErr returns a cursor that does not decode as ErrInvalidCursor.
// internal/cursor returns its *InvalidError unwrapped; a type assertion
// rather than errors.As keeps the success path free of allocations.
func cursorErr(err error) error {
	if ie, ok := err.(*cursor.InvalidError); ok {
		return wrapSentinel(ErrInvalidCursor, ie.Reason, nil)
	}
	return err
}

func (t *Table) encodeCursor(bind [16]byte, attrs []string, key map[string]types.AttributeValue) (string, error) {
	return t.cursorCodec().Encode(bind, attrs, key)
}

func (t *Table) decodeCursor(s string, bind [16]byte, attrs []string) (map[string]types.AttributeValue, error) {
	key, err := t.cursorCodec().Decode(s, bind, attrs)
	return key, cursorErr(err)
}

// decodeBoundCursor decodes a cursor bound to b, accepting b's legacy
// binding when it has one, of a read whose key condition is conds (see
// checkCursorKey).
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

func (t *Table) encodeShardCursor(bind [16]byte, attrs []string, pos []cursor.ShardPos) (string, error) {
	return t.cursorCodec().EncodeShards(bind, attrs, pos)
}

func (t *Table) decodeShardCursor(s string, bind [16]byte, attrs []string, shards int) ([]cursor.ShardPos, error) {
	pos, err := t.cursorCodec().DecodeShards(s, bind, attrs, shards)
	return pos, cursorErr(err)
}

// checkCursorKey refuses, before the request, a cursor whose key the
// query's key condition does not hold for: a cursor forged for another
// partition (the binding covers the partition, but a plain cursor's key
// values can be rewritten with its checksum), or a cursor reused with
// another sort condition (the binding does not cover it). DynamoDB would
// refuse either start key with a raw ValidationException. The first
// nPart conditions are the partition's.
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
