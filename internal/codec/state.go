package codec

import (
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// encState carries the allocation blocks of one Encode call. Attribute
// values are taken from blocks (one allocation for many values), and the
// text of numbers and times is appended to one buffer that becomes a single
// string when the item is complete: each value then refers to its part of
// that string. The state itself is pooled; the blocks and the string belong
// to the item and are never reused.
type encState struct {
	s            []types.AttributeValueMemberS
	n            []types.AttributeValueMemberN
	buf          []byte
	fix          []fixup
	sHint, nHint int
	top          []topAttr // EncodeSized: the item's attributes, in field order
}

// fixup records that *dst must be set to text[off:end] once the buffer is
// turned into a string.
type fixup struct {
	dst      *string
	off, end int
}

var statePool = sync.Pool{New: func() any { return new(encState) }}

func getState(sHint, nHint int) *encState {
	st := statePool.Get().(*encState)
	st.sHint, st.nHint = sHint, nHint
	return st
}

// finish resolves the deferred strings and returns the state to the pool.
func (st *encState) finish() {
	st.resolve()
	st.release()
}

// resolve sets the deferred strings.
func (st *encState) resolve() {
	if len(st.fix) > 0 {
		text := string(st.buf)
		for _, f := range st.fix {
			*f.dst = text[f.off:f.end]
		}
	}
}

// release returns the state to the pool without resolving strings (after an
// error the item is discarded).
func (st *encState) release() {
	st.s, st.n = nil, nil
	clear(st.fix)
	st.fix = st.fix[:0]
	st.buf = st.buf[:0]
	clear(st.top)
	st.top = st.top[:0]
	if cap(st.top) > 4096 {
		st.top = nil
	}
	if cap(st.buf) > 64<<10 {
		st.buf = nil
	}
	if cap(st.fix) > 4096 {
		st.fix = nil
	}
	statePool.Put(st)
}

func (st *encState) newS(v string) *types.AttributeValueMemberS {
	if len(st.s) == cap(st.s) {
		st.s = make([]types.AttributeValueMemberS, 0, max(st.sHint, 4))
		st.sHint = 8
	}
	st.s = st.s[:len(st.s)+1]
	av := &st.s[len(st.s)-1]
	av.Value = v
	return av
}

func (st *encState) newN() *types.AttributeValueMemberN {
	if len(st.n) == cap(st.n) {
		st.n = make([]types.AttributeValueMemberN, 0, max(st.nHint, 4))
		st.nHint = 8
	}
	st.n = st.n[:len(st.n)+1]
	return &st.n[len(st.n)-1]
}

// deferText arranges for *dst to receive the text appended to st.buf since
// off.
func (st *encState) deferText(dst *string, off int) {
	st.fix = append(st.fix, fixup{dst: dst, off: off, end: len(st.buf)})
}
