package singletable

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/cursor"
)

// Cursors: the wire format is internal/cursor; a Table supplies the keys,
// TTL and clock of its options, and turns a cursor that does not decode
// into ErrInvalidCursor.

// cursorBinding hashes what a cursor is bound to.
func cursorBinding(parts ...string) [16]byte { return cursor.Binding(parts...) }

func (t *Table) cursorCodec() cursor.Codec {
	return cursor.Codec{Keys: t.opts.CursorKeys, TTL: t.opts.CursorTTL, Now: t.opts.Now}
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
	c := t.cursorCodec()
	return c.Encode(bind, attrs, key)
}

func (t *Table) decodeCursor(s string, bind [16]byte, attrs []string) (map[string]types.AttributeValue, error) {
	c := t.cursorCodec()
	key, err := c.Decode(s, bind, attrs)
	return key, cursorErr(err)
}

func (t *Table) encodeShardCursor(bind [16]byte, attrs []string, pos []cursor.ShardPos) (string, error) {
	c := t.cursorCodec()
	return c.EncodeShards(bind, attrs, pos)
}

func (t *Table) decodeShardCursor(s string, bind [16]byte, attrs []string, shards int) ([]cursor.ShardPos, error) {
	c := t.cursorCodec()
	pos, err := c.DecodeShards(s, bind, attrs, shards)
	return pos, cursorErr(err)
}
