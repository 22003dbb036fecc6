package singletable

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Cursors are opaque strings: base64url of a version byte and a payload.
//
//	payload = binding(16) | issued unix seconds(8) | n(1) | n × (type(1) | uvarint len | bytes)
//
// The binding is a hash of the query's table, index, entity, partition and
// direction, so a cursor only resumes the query it came from. The key
// attributes are written in the index's fixed order, without names.
//
// Version 1 (no CursorKeys): payload | sha256(payload)[:8]. The checksum
// catches corruption and casual edits, not forgery: the key values are
// readable and a determined client can rebuild a valid cursor for the same
// partition. Version 2 (CursorKeys set): nonce(12) | AES-256-GCM(payload),
// which both hides and authenticates the key values.
const (
	cursorPlain  = 1
	cursorSealed = 2
)

func invalidCursor(format string, args ...any) error {
	return wrapSentinel(ErrInvalidCursor, fmt.Sprintf(format, args...), nil)
}

// cursorBinding hashes what a cursor is bound to.
func cursorBinding(parts ...string) [16]byte {
	h := sha256.New()
	for _, p := range parts {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	var out [16]byte
	copy(out[:], h.Sum(nil))
	return out
}

// appendCursorKey appends key's attributes, in attrs order, without names.
func appendCursorKey(p []byte, attrs []string, key map[string]types.AttributeValue) ([]byte, error) {
	for _, a := range attrs {
		var typ byte
		var val []byte
		switch v := key[a].(type) {
		case *types.AttributeValueMemberS:
			typ, val = 'S', []byte(v.Value)
		case *types.AttributeValueMemberN:
			typ, val = 'N', []byte(v.Value)
		case *types.AttributeValueMemberB:
			typ, val = 'B', v.Value
		default:
			return nil, fmt.Errorf("singletable: cursor: key attribute %s missing or not a scalar", a)
		}
		p = append(p, typ)
		p = binary.AppendUvarint(p, uint64(len(val)))
		p = append(p, val...)
	}
	return p, nil
}

// readCursorKey reads a key written by appendCursorKey and returns the rest.
func readCursorKey(p []byte, attrs []string) (map[string]types.AttributeValue, []byte, error) {
	key := make(map[string]types.AttributeValue, len(attrs))
	for _, a := range attrs {
		if len(p) < 1 {
			return nil, nil, invalidCursor("truncated")
		}
		typ := p[0]
		l, m := binary.Uvarint(p[1:])
		if m <= 0 || uint64(len(p)-1-m) < l {
			return nil, nil, invalidCursor("truncated")
		}
		val := p[1+m : 1+m+int(l)]
		p = p[1+m+int(l):]
		switch typ {
		case 'S':
			key[a] = &types.AttributeValueMemberS{Value: string(val)}
		case 'N':
			key[a] = &types.AttributeValueMemberN{Value: string(val)}
		case 'B':
			key[a] = &types.AttributeValueMemberB{Value: bytes.Clone(val)}
		default:
			return nil, nil, invalidCursor("bad attribute type")
		}
	}
	return key, p, nil
}

// cursorHeader starts a payload: binding, issue time, and the shape byte
// (the number of key attributes, or shardedShape).
func (t *Table) cursorHeader(bind [16]byte, shape byte) []byte {
	p := append([]byte(nil), bind[:]...)
	p = binary.BigEndian.AppendUint64(p, uint64(t.opts.Now().Unix()))
	return append(p, shape)
}

func (t *Table) encodeCursor(bind [16]byte, attrs []string, key map[string]types.AttributeValue) (string, error) {
	p, err := appendCursorKey(t.cursorHeader(bind, byte(len(attrs))), attrs, key)
	if err != nil {
		return "", err
	}
	return t.sealCursor(p)
}

func (t *Table) decodeCursor(s string, bind [16]byte, attrs []string) (map[string]types.AttributeValue, error) {
	p, err := t.openCursor(s, bind, byte(len(attrs)))
	if err != nil {
		return nil, err
	}
	key, rest, err := readCursorKey(p, attrs)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, invalidCursor("trailing bytes")
	}
	return key, nil
}

// sealCursor turns a payload into the cursor string: checksummed (version
// 1) or sealed with the table's first cursor key (version 2).
func (t *Table) sealCursor(p []byte) (string, error) {
	if len(t.opts.CursorKeys) == 0 {
		sum := sha256.Sum256(p)
		out := append([]byte{cursorPlain}, p...)
		out = append(out, sum[:8]...)
		return base64.RawURLEncoding.EncodeToString(out), nil
	}
	aead, err := cursorAEAD(t.opts.CursorKeys[0])
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := append([]byte{cursorSealed}, nonce...)
	out = aead.Seal(out, nonce, p, []byte{cursorSealed})
	return base64.RawURLEncoding.EncodeToString(out), nil
}

func cursorAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) == 0 {
		return nil, errors.New("singletable: empty cursor key")
	}
	k := sha256.Sum256(key) // any length of secret → an AES-256 key
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// openCursor checks a cursor string (version, checksum or seal, binding,
// expiry, shape) and returns the payload after the header.
func (t *Table) openCursor(s string, bind [16]byte, shape byte) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) < 2 {
		return nil, invalidCursor("not a cursor")
	}
	var p []byte
	switch raw[0] {
	case cursorPlain:
		if len(t.opts.CursorKeys) > 0 {
			return nil, invalidCursor("unsigned cursor; this table seals its cursors")
		}
		if len(raw) < 1+8 {
			return nil, invalidCursor("truncated")
		}
		p = raw[1 : len(raw)-8]
		sum := sha256.Sum256(p)
		if !bytes.Equal(sum[:8], raw[len(raw)-8:]) {
			return nil, invalidCursor("checksum mismatch")
		}
	case cursorSealed:
		if len(t.opts.CursorKeys) == 0 {
			return nil, invalidCursor("sealed cursor; this table has no cursor keys")
		}
		for _, k := range t.opts.CursorKeys {
			aead, err := cursorAEAD(k)
			if err != nil {
				return nil, err
			}
			if len(raw) < 1+aead.NonceSize() {
				return nil, invalidCursor("truncated")
			}
			if p, err = aead.Open(nil, raw[1:1+aead.NonceSize()], raw[1+aead.NonceSize():], []byte{cursorSealed}); err == nil {
				break
			}
		}
		if p == nil {
			return nil, invalidCursor("authentication failed")
		}
	default:
		return nil, invalidCursor("unknown cursor version %d", raw[0])
	}
	if len(p) < 16+8+1 {
		return nil, invalidCursor("truncated")
	}
	if !bytes.Equal(p[:16], bind[:]) {
		return nil, invalidCursor("cursor belongs to another query")
	}
	issued := int64(binary.BigEndian.Uint64(p[16:24]))
	if ttl := t.opts.CursorTTL; ttl > 0 && t.opts.Now().Unix()-issued > int64(ttl.Seconds()) {
		return nil, invalidCursor("expired")
	}
	if p[24] != shape {
		return nil, invalidCursor("wrong key shape")
	}
	return p[25:], nil
}

// shardedShape marks a cursor over a write-sharded index: one position per
// shard instead of one key.
const shardedShape = 0xFF

// Shard positions in a sharded cursor.
const (
	shardNotStarted = 0 // nothing read from the shard yet
	shardAfter      = 1 // resume after the key that follows
	shardDone       = 2 // the shard is exhausted
)

// shardPos is where a sharded query stands in one shard.
type shardPos struct {
	state byte
	key   map[string]types.AttributeValue
}

func (t *Table) encodeShardCursor(bind [16]byte, attrs []string, pos []shardPos) (string, error) {
	p := t.cursorHeader(bind, shardedShape)
	p = binary.AppendUvarint(p, uint64(len(pos)))
	for _, sp := range pos {
		p = append(p, sp.state)
		if sp.state == shardAfter {
			var err error
			if p, err = appendCursorKey(p, attrs, sp.key); err != nil {
				return "", err
			}
		}
	}
	return t.sealCursor(p)
}

func (t *Table) decodeShardCursor(s string, bind [16]byte, attrs []string, shards int) ([]shardPos, error) {
	p, err := t.openCursor(s, bind, shardedShape)
	if err != nil {
		return nil, err
	}
	n, m := binary.Uvarint(p)
	if m <= 0 || n != uint64(shards) {
		return nil, invalidCursor("wrong shard count")
	}
	p = p[m:]
	pos := make([]shardPos, shards)
	for i := range pos {
		if len(p) < 1 {
			return nil, invalidCursor("truncated")
		}
		pos[i].state, p = p[0], p[1:]
		switch pos[i].state {
		case shardNotStarted, shardDone:
		case shardAfter:
			if pos[i].key, p, err = readCursorKey(p, attrs); err != nil {
				return nil, err
			}
		default:
			return nil, invalidCursor("bad shard state")
		}
	}
	if len(p) != 0 {
		return nil, invalidCursor("trailing bytes")
	}
	return pos, nil
}
