// Package cursor is the wire format of pagination cursors: the binding hash,
// the key encoding, the header, the checksum of plain cursors and the
// AES-GCM seal of sealed ones, and the positions of a sharded query. The
// root package turns an *InvalidError into its ErrInvalidCursor.
//
// Cursors are opaque strings: base64url of a version byte and a payload.
//
//	payload = binding(16) | issued unix seconds(8) | n(1) | n × (type(1) | uvarint len | bytes)
//
// The binding is a hash of the query's table, index, entity, partition and
// direction, so a cursor only resumes the query it came from. The key
// attributes are written in the index's fixed order, without names.
//
// Version 1 (no keys): payload | sha256(payload)[:8]. The checksum catches
// corruption and casual edits, not forgery: the key values are readable and
// a determined client can rebuild a valid cursor for the same partition.
// Version 2 (keys set): nonce(12) | AES-256-GCM(payload), which both hides
// and authenticates the key values.
//
// A sharded cursor has the shape byte 0xFF instead of n, followed by
// uvarint(shards) and per shard a state byte, and the key (as above) for
// [ShardAfter].
package cursor

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
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

const (
	versionPlain  = 1
	versionSealed = 2
)

// InvalidError is a cursor string that does not decode: corrupt, edited,
// for another query, expired or sealed with an unknown key. Reason says
// which.
type InvalidError struct {
	Reason string
}

func (e *InvalidError) Error() string { return "invalid cursor: " + e.Reason }

func invalid(format string, args ...any) error {
	return &InvalidError{Reason: fmt.Sprintf(format, args...)}
}

// Codec encodes and decodes the cursors of one table.
type Codec struct {
	// Keys, when set, seal cursors: Keys[0] seals new ones, every key
	// opens them.
	Keys [][]byte
	// TTL, when positive, makes cursors older than this invalid.
	TTL time.Duration
	// Now is the clock (issue time, expiry).
	Now func() time.Time
}

// Binding hashes what a cursor is bound to.
func Binding(parts ...string) [16]byte {
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

// appendKey appends key's attributes, in attrs order, without names.
func appendKey(p []byte, attrs []string, key map[string]types.AttributeValue) ([]byte, error) {
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

// readKey reads a key written by appendKey and returns the rest.
func readKey(p []byte, attrs []string) (map[string]types.AttributeValue, []byte, error) {
	key := make(map[string]types.AttributeValue, len(attrs))
	for _, a := range attrs {
		if len(p) < 1 {
			return nil, nil, invalid("truncated")
		}
		typ := p[0]
		l, m := binary.Uvarint(p[1:])
		if m <= 0 || uint64(len(p)-1-m) < l {
			return nil, nil, invalid("truncated")
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
			return nil, nil, invalid("bad attribute type")
		}
	}
	return key, p, nil
}

// header starts a payload: binding, issue time, and the shape byte (the
// number of key attributes, or shardedShape).
func (c *Codec) header(bind [16]byte, shape byte) []byte {
	p := append([]byte(nil), bind[:]...)
	p = binary.BigEndian.AppendUint64(p, uint64(c.Now().Unix()))
	return append(p, shape)
}

// Encode returns the cursor resuming after key, whose attributes attrs
// lists in the index's fixed order.
func (c *Codec) Encode(bind [16]byte, attrs []string, key map[string]types.AttributeValue) (string, error) {
	p, err := appendKey(c.header(bind, byte(len(attrs))), attrs, key)
	if err != nil {
		return "", err
	}
	return c.seal(p)
}

// Decode returns the key a cursor made by Encode with the same binding
// and attrs resumes after.
func (c *Codec) Decode(s string, bind [16]byte, attrs []string) (map[string]types.AttributeValue, error) {
	p, err := c.open(s, bind, byte(len(attrs)))
	if err != nil {
		return nil, err
	}
	key, rest, err := readKey(p, attrs)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, invalid("trailing bytes")
	}
	return key, nil
}

// seal turns a payload into the cursor string: checksummed (version 1) or
// sealed with the first key (version 2).
func (c *Codec) seal(p []byte) (string, error) {
	if len(c.Keys) == 0 {
		sum := sha256.Sum256(p)
		out := append([]byte{versionPlain}, p...)
		out = append(out, sum[:8]...)
		return base64.RawURLEncoding.EncodeToString(out), nil
	}
	aead, err := newAEAD(c.Keys[0])
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := append([]byte{versionSealed}, nonce...)
	out = aead.Seal(out, nonce, p, []byte{versionSealed})
	return base64.RawURLEncoding.EncodeToString(out), nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
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

// open checks a cursor string (version, checksum or seal, binding, expiry,
// shape) and returns the payload after the header.
func (c *Codec) open(s string, bind [16]byte, shape byte) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) < 2 {
		return nil, invalid("not a cursor")
	}
	var p []byte
	switch raw[0] {
	case versionPlain:
		if len(c.Keys) > 0 {
			return nil, invalid("unsigned cursor; this table seals its cursors")
		}
		if len(raw) < 1+8 {
			return nil, invalid("truncated")
		}
		p = raw[1 : len(raw)-8]
		sum := sha256.Sum256(p)
		if !bytes.Equal(sum[:8], raw[len(raw)-8:]) {
			return nil, invalid("checksum mismatch")
		}
	case versionSealed:
		if len(c.Keys) == 0 {
			return nil, invalid("sealed cursor; this table has no cursor keys")
		}
		for _, k := range c.Keys {
			aead, err := newAEAD(k)
			if err != nil {
				return nil, err
			}
			if len(raw) < 1+aead.NonceSize() {
				return nil, invalid("truncated")
			}
			if p, err = aead.Open(nil, raw[1:1+aead.NonceSize()], raw[1+aead.NonceSize():], []byte{versionSealed}); err == nil {
				break
			}
		}
		if p == nil {
			return nil, invalid("authentication failed")
		}
	default:
		return nil, invalid("unknown cursor version %d", raw[0])
	}
	if len(p) < 16+8+1 {
		return nil, invalid("truncated")
	}
	if !bytes.Equal(p[:16], bind[:]) {
		return nil, invalid("cursor belongs to another query")
	}
	issued := int64(binary.BigEndian.Uint64(p[16:24]))
	if c.TTL > 0 && c.Now().Unix()-issued > int64(c.TTL.Seconds()) {
		return nil, invalid("expired")
	}
	if p[24] != shape {
		return nil, invalid("wrong key shape")
	}
	return p[25:], nil
}

// shardedShape marks a cursor over a write-sharded index: one position per
// shard instead of one key.
const shardedShape = 0xFF

// Shard states in a sharded cursor.
const (
	ShardNotStarted = 0 // nothing read from the shard yet
	ShardAfter      = 1 // resume after Key
	ShardDone       = 2 // the shard is exhausted
)

// ShardPos is where a sharded query stands in one shard.
type ShardPos struct {
	State byte
	Key   map[string]types.AttributeValue // for ShardAfter
}

// EncodeShards returns the cursor of a sharded query standing at pos, one
// position per shard.
func (c *Codec) EncodeShards(bind [16]byte, attrs []string, pos []ShardPos) (string, error) {
	p := c.header(bind, shardedShape)
	p = binary.AppendUvarint(p, uint64(len(pos)))
	for _, sp := range pos {
		p = append(p, sp.State)
		if sp.State == ShardAfter {
			var err error
			if p, err = appendKey(p, attrs, sp.Key); err != nil {
				return "", err
			}
		}
	}
	return c.seal(p)
}

// DecodeShards returns the positions of a cursor made by EncodeShards,
// which must hold exactly shards positions.
func (c *Codec) DecodeShards(s string, bind [16]byte, attrs []string, shards int) ([]ShardPos, error) {
	p, err := c.open(s, bind, shardedShape)
	if err != nil {
		return nil, err
	}
	n, m := binary.Uvarint(p)
	if m <= 0 || n != uint64(shards) {
		return nil, invalid("wrong shard count")
	}
	p = p[m:]
	pos := make([]ShardPos, shards)
	for i := range pos {
		if len(p) < 1 {
			return nil, invalid("truncated")
		}
		pos[i].State, p = p[0], p[1:]
		switch pos[i].State {
		case ShardNotStarted, ShardDone:
		case ShardAfter:
			if pos[i].Key, p, err = readKey(p, attrs); err != nil {
				return nil, err
			}
		default:
			return nil, invalid("bad shard state")
		}
	}
	if len(p) != 0 {
		return nil, invalid("trailing bytes")
	}
	return pos, nil
}

// Bound is what a cursor is bound to: the hash new cursors carry and, for
// a multi-attribute partition, the legacy one older cursors carry.
type Bound struct {
	Bind, Legacy [16]byte
	HasLegacy    bool
}

// PartitionBinding binds a cursor to table, index, reader (an entity
// type or "\x00collection"), the partition's key values and the
// direction. The legacy binding joins a multi-attribute partition's
// values with NUL.
func PartitionBinding(table, index, reader string, parts []string, dir string) Bound {
	if len(parts) == 1 {
		return Bound{Bind: Binding(table, index, reader, parts[0], dir)}
	}
	all := make([]string, 0, len(parts)+5)
	all = append(all, table, index, reader, "\x00multi")
	all = append(all, parts...)
	return Bound{
		Bind:      Binding(append(all, dir)...),
		Legacy:    Binding(table, index, reader, strings.Join(parts, "\x00"), dir),
		HasLegacy: true,
	}
}

// DecodeBound is Decode of a cursor bound to b or, failing that, to its
// legacy binding.
func (c *Codec) DecodeBound(s string, b Bound, attrs []string) (map[string]types.AttributeValue, error) {
	key, err := c.Decode(s, b.Bind, attrs)
	if err != nil && b.HasLegacy {
		if k, lerr := c.Decode(s, b.Legacy, attrs); lerr == nil {
			key, err = k, nil
		}
	}
	return key, err
}
