package cursor

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var update = flag.Bool("update", false, "rewrite testdata/cursors.json with cursors encoded by this code")

// The golden file: cursors as the library issued them, with what each was
// made from. Its first version was written by the code before the cursor
// format moved into this package, so decoding it shows that cursors handed
// out by earlier versions still resume.
type goldenAV struct {
	T string `json:"t"` // S, N or B (V in base64)
	V string `json:"v"`
}

type goldenPos struct {
	State byte                `json:"state"`
	Key   map[string]goldenAV `json:"key,omitempty"`
}

type goldenCursor struct {
	Name   string              `json:"name"`
	Now    int64               `json:"now"`            // the issue time, unix seconds
	Keys   []string            `json:"keys,omitempty"` // cursor keys, base64
	Bind   []string            `json:"bind"`           // the parts of the binding
	Attrs  []string            `json:"attrs"`
	Key    map[string]goldenAV `json:"key,omitempty"`
	Shards []goldenPos         `json:"shards,omitempty"` // a sharded cursor
	Cursor string              `json:"cursor"`
}

func (g *goldenCursor) codec(t *testing.T) *Codec {
	c := &Codec{Now: func() time.Time { return time.Unix(g.Now, 0) }, TTL: time.Minute}
	for _, k := range g.Keys {
		b, err := base64.StdEncoding.DecodeString(k)
		if err != nil {
			t.Fatal(err)
		}
		c.Keys = append(c.Keys, b)
	}
	return c
}

func (g *goldenCursor) positions(t *testing.T) []ShardPos {
	pos := make([]ShardPos, len(g.Shards))
	for i, p := range g.Shards {
		pos[i].State = p.State
		if p.Key != nil {
			pos[i].Key = avs(t, p.Key)
		}
	}
	return pos
}

func avs(t *testing.T, m map[string]goldenAV) map[string]types.AttributeValue {
	out := map[string]types.AttributeValue{}
	for k, v := range m {
		switch v.T {
		case "S":
			out[k] = &types.AttributeValueMemberS{Value: v.V}
		case "N":
			out[k] = &types.AttributeValueMemberN{Value: v.V}
		case "B":
			b, err := base64.StdEncoding.DecodeString(v.V)
			if err != nil {
				t.Fatal(err)
			}
			out[k] = &types.AttributeValueMemberB{Value: b}
		default:
			t.Fatalf("attribute %s: type %q", k, v.T)
		}
	}
	return out
}

func (g *goldenCursor) encode(t *testing.T) string {
	c, bind := g.codec(t), Binding(g.Bind...)
	var s string
	var err error
	if g.Shards != nil {
		s, err = c.EncodeShards(bind, g.Attrs, g.positions(t))
	} else {
		s, err = c.Encode(bind, g.Attrs, avs(t, g.Key))
	}
	if err != nil {
		t.Fatalf("%s: %v", g.Name, err)
	}
	return s
}

func (g *goldenCursor) check(t *testing.T, s string) {
	t.Helper()
	c, bind := g.codec(t), Binding(g.Bind...)
	if g.Shards != nil {
		got, err := c.DecodeShards(s, bind, g.Attrs, len(g.Shards))
		if err != nil {
			t.Fatalf("DecodeShards(%s): %v", s, err)
		}
		if want := g.positions(t); !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeShards(%s) = %v, want %v", s, got, want)
		}
		return
	}
	got, err := c.Decode(s, bind, g.Attrs)
	if err != nil {
		t.Fatalf("Decode(%s): %v", s, err)
	}
	if want := avs(t, g.Key); !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode(%s) = %v, want %v", s, got, want)
	}
}

func TestGoldenCursors(t *testing.T) {
	path := filepath.Join("testdata", "cursors.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCursor
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no golden cursors")
	}
	if *update {
		for i := range cases {
			cases[i].Cursor = cases[i].encode(t)
		}
		b, err := json.MarshalIndent(cases, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range cases {
		t.Run(g.Name, func(t *testing.T) {
			// The stored cursor decodes to what it was made from.
			g.check(t, g.Cursor)
			// This code writes the same bytes: a plain cursor is
			// deterministic, a sealed one differs only in its nonce
			// and decodes the same.
			again := g.encode(t)
			if len(g.Keys) == 0 {
				if again != g.Cursor {
					t.Errorf("encoded %s, the golden cursor is %s", again, g.Cursor)
				}
			} else {
				if len(again) != len(g.Cursor) {
					t.Errorf("sealed cursor is %d characters, the golden one %d", len(again), len(g.Cursor))
				}
				g.check(t, again)
			}
			// Another query, or a changed byte, does not decode.
			c := g.codec(t)
			other := Binding(append(g.Bind, "x")...)
			var err error
			if g.Shards != nil {
				_, err = c.DecodeShards(g.Cursor, other, g.Attrs, len(g.Shards))
			} else {
				_, err = c.Decode(g.Cursor, other, g.Attrs)
			}
			if ie := (*InvalidError)(nil); !errors.As(err, &ie) || ie.Reason != "cursor belongs to another query" {
				t.Errorf("decoding with another binding: %v", err)
			}
			b, _ := base64.RawURLEncoding.DecodeString(g.Cursor)
			b[len(b)/2] ^= 1
			if _, err := c.Decode(base64.RawURLEncoding.EncodeToString(b), Binding(g.Bind...), g.Attrs); !isInvalid(err) {
				t.Errorf("decoding a changed cursor: %v", err)
			}
		})
	}
}

func isInvalid(err error) bool {
	var ie *InvalidError
	return errors.As(err, &ie)
}

// TestCursorKeyRotation: a cursor sealed with an old key opens while the
// key is listed after the new one, and fails once it is dropped.
func TestCursorKeyRotation(t *testing.T) {
	now := func() time.Time { return time.Unix(1700000000, 0) }
	oldKey, newKey := []byte("old"), []byte("new")
	bind := Binding("t", "", "E", "P", "asc")
	attrs := []string{"PK", "SK"}
	key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A"}, "SK": &types.AttributeValueMemberS{Value: "B"}}
	old := &Codec{Keys: [][]byte{oldKey}, Now: now}
	s, err := old.Encode(bind, attrs, key)
	if err != nil {
		t.Fatal(err)
	}
	rotated := &Codec{Keys: [][]byte{newKey, oldKey}, Now: now}
	if got, err := rotated.Decode(s, bind, attrs); err != nil || !reflect.DeepEqual(got, key) {
		t.Fatalf("rotated.Decode = %v, %v", got, err)
	}
	only := &Codec{Keys: [][]byte{newKey}, Now: now}
	if _, err := only.Decode(s, bind, attrs); !isInvalid(err) || !strings.Contains(err.Error(), "authentication failed") {
		t.Fatalf("only new key: %v", err)
	}
	plain := &Codec{Now: now}
	if _, err := plain.Decode(s, bind, attrs); !isInvalid(err) || !strings.Contains(err.Error(), "this table has no cursor keys") {
		t.Fatalf("no keys: %v", err)
	}
	if _, err := (&Codec{Keys: [][]byte{{}}, Now: now}).Encode(bind, attrs, key); err == nil || isInvalid(err) {
		t.Fatalf("an empty key is a configuration error, not an invalid cursor: %v", err)
	}
}

// TestCursorExpiry: a cursor older than the TTL is refused.
func TestCursorExpiry(t *testing.T) {
	issued := time.Unix(1700000000, 0)
	clock := issued
	c := &Codec{TTL: time.Minute, Now: func() time.Time { return clock }}
	bind, attrs := Binding("q"), []string{"PK"}
	s, err := c.Encode(bind, attrs, map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A"}})
	if err != nil {
		t.Fatal(err)
	}
	clock = issued.Add(time.Minute)
	if _, err := c.Decode(s, bind, attrs); err != nil {
		t.Fatalf("at the TTL: %v", err)
	}
	clock = issued.Add(time.Minute + time.Second)
	if _, err := c.Decode(s, bind, attrs); !isInvalid(err) || err.(*InvalidError).Reason != "expired" {
		t.Fatalf("after the TTL: %v", err)
	}
}

// TestCursorMalformed: every way a cursor string can be damaged is an
// *InvalidError, never a panic.
func TestCursorMalformed(t *testing.T) {
	c := &Codec{Now: func() time.Time { return time.Unix(1700000000, 0) }}
	bind, attrs := Binding("q"), []string{"PK", "SK"}
	good, err := c.Encode(bind, attrs, map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "A"}, "SK": &types.AttributeValueMemberN{Value: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	payload := raw[1 : len(raw)-8]
	plain := func(p []byte) string {
		sumOf := func(p []byte) []byte {
			c := &Codec{}
			s, _ := c.seal(p)
			b, _ := base64.RawURLEncoding.DecodeString(s)
			return b[len(b)-8:]
		}
		return base64.RawURLEncoding.EncodeToString(append(append([]byte{versionPlain}, p...), sumOf(p)...))
	}
	cases := map[string]string{
		"not a cursor":       "!!!",
		"unknown version":    base64.RawURLEncoding.EncodeToString([]byte{9, 0, 0}),
		"checksum mismatch":  good[:len(good)-2] + "AA",
		"wrong key shape":    plain(append(bytes.Clone(payload[:24]), 3)),
		"truncated key":      plain(payload[:len(payload)-1]),
		"trailing bytes":     plain(append(bytes.Clone(payload), 0)),
		"bad attribute type": plain(append(bytes.Clone(payload[:25]), 'X', 1, 'a', 'S', 1, 'b')),
		"truncated header":   plain(payload[:10]),
	}
	for name, s := range cases {
		if _, err := c.Decode(s, bind, attrs); !isInvalid(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := c.Encode(bind, attrs, map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "A"}}); err == nil || isInvalid(err) {
		t.Errorf("encoding a key without its sort attribute: %v", err)
	}
}
