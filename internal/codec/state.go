package codec

import (
	"sync"
	"unsafe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/itemsize"
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

	// sizing is set by EncodeSized: encoders that know the exact size of
	// the value they make (see itemsize) report it with sized.
	sizing bool
	szAV   types.AttributeValue // the value last reported, nil if none
	szN    int                  // its size
	szBad  bool                 // whether it holds invalid UTF-8

	// The item's size so far, and the smallest name of the attributes
	// holding invalid UTF-8 (hasBad: there is one).
	size    int
	badName string
	hasBad  bool

	trace *[]attrSized // for tests: see Plan.encodeSized

	// verify holds the values DynamoDB may refuse, to be checked once
	// their texts are set (see refused): numbers out of range, sets
	// (duplicates), and values the codec did not make itself (from
	// Marshalers and attributevalue). Values it makes from Go strings,
	// integers, bools and times are always storable, but for UTF-8,
	// which sizing checks.
	verify []types.AttributeValue
}

// suspect notes that av, a value of the item being encoded, may be one
// DynamoDB refuses.
func (st *encState) suspect(av types.AttributeValue) {
	st.verify = append(st.verify, av)
}

// refused returns an *InvalidError naming the attribute of item (the
// smallest name, as checkItem reports it) when a suspect value cannot be
// stored; nil otherwise. The texts must be resolved. UTF-8 is not checked
// here: sizing does that.
func (st *encState) refused(item map[string]types.AttributeValue) error {
	for _, av := range st.verify {
		if reason(av, false) != "" {
			return checkItem(item, false)
		}
	}
	return nil
}

// bad notes that attribute name holds invalid UTF-8, if invalid: the
// attribute EncodeSized reports is the smallest such name, as in
// itemsize.Scan.
func (st *encState) bad(name string, invalid bool) {
	if invalid && (!st.hasBad || itemsize.Less(name, st.badName)) {
		st.badName, st.hasBad = name, true
	}
}

// Size accounting of lists and maps (see itemsize).
const (
	docOverhead  = 3 // every L or M
	elemOverhead = 1 // every element of an L or M
)

// sized reports that av, a value just made and never changed afterwards
// except for its deferred text (already counted), has size n as
// itemsize.ValueChecked computes it, and holds invalid UTF-8 if bad.
func (st *encState) sized(av types.AttributeValue, n int, bad bool) {
	st.szAV, st.szN, st.szBad = av, n, bad
}

// sizedNull makes a NULL and reports its size.
func (st *encState) sizedNull() types.AttributeValue {
	av := newNull()
	if st.sizing {
		st.sized(av, 1, false)
	}
	return av
}

// text is what was appended to st.buf since off, as a string that is
// valid only until st.buf changes (for sizing it at once).
func (st *encState) text(off int) string {
	if off == len(st.buf) {
		return ""
	}
	return unsafe.String(&st.buf[off], len(st.buf)-off)
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
	st.sizing, st.szAV = false, nil
	st.size, st.badName, st.hasBad = 0, "", false
	st.trace = nil
	clear(st.verify)
	st.verify = st.verify[:0]
	if cap(st.verify) > 4096 {
		st.verify = nil
	}
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
