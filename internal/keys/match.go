package keys

// Conditions on a field held only in keys (Schema.KeyOnly: no attribute
// of its own stores it, every read parses it back from a key). A filter or
// condition on such a field is written against the key attributes whose
// templates hold it when that is exact, and refused otherwise: exact means
// the written condition holds on an item exactly when the field parsed
// back from its key satisfies the caller's. Two comparisons can be exact,
// both resting on the codec's invariant that a value never holds the
// delimiter that follows its placeholder:
//
//   - equality with v: the key holds one of v's encodings (the one
//     AppendValue writes, and for isoformat the naive spelling it reads
//     too; every other format reads only what it writes). When the key
//     around the field is known (every other placeholder's value, as in a
//     write's condition, whose item's key the request names; or none,
//     the field being the template's only placeholder) the key equals
//     that text. When the field is the template's first placeholder and
//     others follow, the key begins with the literal before it, the
//     encoding and the delimiter after it.
//   - begins_with(field, s) on a string placeholder (escaped or raw): the
//     key begins with the literal before it and s as the placeholder
//     writes it (escaping keeps prefixes of valid UTF-8, and a raw prefix
//     holding the delimiter is refused).
//
// A field after another placeholder cannot be tested in a filter (where
// its value starts in the key depends on the value before it), nor a key
// attribute that holds a suffix after its template (a write shard) by
// equality of the whole key, nor, in a Query's filter, a key attribute
// the Query reads by (DynamoDB refuses those). Such conditions are errors wrapping
// ErrInexact; the caller refuses them before the network.

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/format"
	"github.com/singletable-go/singletable/internal/model"
)

// ErrInexact is wrapped by the errors of Equal and BeginsWith when no
// condition on the key attributes holding a field matches exactly the
// items whose field satisfies the caller's condition.
var ErrInexact = errors.New("no condition on the key matches exactly")

// Holder is a key attribute whose template holds a field that no
// attribute of its own stores.
type Holder struct {
	Attr  string    // the key attribute
	Tpl   *Template // its template
	Place int       // the field's placeholder in Tpl, counting placeholders from 0
	// Always: every item of the entity has the attribute (a table key).
	// An index key attribute is missing from the items outside the index;
	// a field held only in index keys then reads as its zero value.
	Always bool
	// Suffixed: the attribute holds text after the template's key (a
	// write shard's suffix), so it never equals a rendered key.
	Suffixed bool
	// Known is the attribute's value on the one item the condition is
	// evaluated on, when the request names it (a write's key); "" when
	// unknown (a filter).
	Known string
	// Queried: the request is a Query of the table or index this is a key
	// attribute of, and DynamoDB refuses a Query's filter on those.
	Queried bool
}

// Held names the key attributes hs and their templates, for errors.
func Held(hs []Holder) string {
	held := make([]string, len(hs))
	for i, h := range hs {
		held[i] = fmt.Sprintf("%s %q", h.Attr, h.Tpl.Raw)
	}
	return strings.Join(held, ", ")
}

// Equal returns the key conditions on the key attributes hs (every holder of
// one field) of which one holds exactly when the field's value is v, the
// field's value as keys render it (model.Field.KeyValue). A value no key
// can hold (empty, unrepresentable in the format) is AppendValue's error.
func Equal(hs []Holder, v reflect.Value) ([]expr.KeyCond, error) {
	return anyHolder(hs, func(h *Holder) ([]expr.KeyCond, error) { return h.equal(v) })
}

// BeginsWith returns the key conditions on the key attributes hs of which
// one holds exactly when the field's value, of type t, begins with prefix.
func BeginsWith(hs []Holder, t reflect.Type, prefix string) ([]expr.KeyCond, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.String || model.UsesText(t) {
		return nil, fmt.Errorf("%w: begins_with tests text, and the field is a %v", ErrInexact, t)
	}
	return anyHolder(hs, func(h *Holder) ([]expr.KeyCond, error) { return h.beginsWith(prefix) })
}

// anyHolder joins the conditions one makes of each holder: a table key
// is on every item, so the first one that has an exact condition is
// enough; a field held only in index keys is read from whichever the
// item has, so each of them must have one, any of which may hold.
func anyHolder(hs []Holder, one func(h *Holder) ([]expr.KeyCond, error)) ([]expr.KeyCond, error) {
	always := false
	for i := range hs {
		always = always || hs[i].Always
	}
	var out []expr.KeyCond
	var first error
	for i := range hs {
		h := &hs[i]
		if h.Always != always {
			continue
		}
		cs, err := one(h)
		if h.Queried {
			cs, err = nil, fmt.Errorf("%w: DynamoDB refuses a Query's filter on %s, a key attribute the Query reads by; its key and sort conditions select on it", ErrInexact, h.Attr)
		}
		switch {
		case err != nil && !always:
			return nil, err
		case err != nil:
			first = cmpOr(first, err)
		case always:
			return cs, nil
		default:
			out = append(out, cs...)
		}
	}
	if len(out) == 0 {
		return nil, cmpOr(first, fmt.Errorf("%w: no key holds the field", ErrInexact))
	}
	return out, nil
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// part returns the field's placeholder and its index in Parts.
func (h *Holder) part() (*Part, int) {
	n := h.Place
	for j := range h.Tpl.Parts {
		if !h.Tpl.Parts[j].IsPlaceholder() {
			continue
		}
		if n == 0 {
			return &h.Tpl.Parts[j], j
		}
		n--
	}
	panic("keys: Holder.Place beyond the template's placeholders")
}

// around returns the key text before the field's placeholder (at Parts
// index j) and after it: the whole rest of the key (whole) when it is
// known, else the literal that follows it, which begins with the
// delimiter its values never hold.
func (h *Holder) around(j int) (before, after string, whole bool, err error) {
	parts := h.Tpl.Parts
	if h.Known != "" {
		if vals, err := h.Tpl.Split(h.Known); err == nil {
			var b strings.Builder
			k := 0
			for i, p := range parts {
				if i == j {
					before = b.String()
					b.Reset()
				}
				switch {
				case !p.IsPlaceholder():
					b.WriteString(p.Literal)
				case i != j:
					b.WriteString(vals[k])
				}
				if p.IsPlaceholder() {
					k++
				}
			}
			return before, b.String(), true, nil
		}
	}
	for i := range j {
		if parts[i].IsPlaceholder() {
			return "", "", false, fmt.Errorf("%w: {%s} follows {%s}, so where its value starts in the key depends on the value before it", ErrInexact, parts[j].Field, parts[i].Field)
		}
		before = parts[i].Literal
	}
	whole = true
	for i := j + 1; i < len(parts); i++ {
		whole = whole && !parts[i].IsPlaceholder()
	}
	if j+1 < len(parts) {
		after = parts[j+1].Literal
	}
	return before, after, whole, nil
}

// equal is Equal for one holder.
func (h *Holder) equal(v reflect.Value) ([]expr.KeyCond, error) {
	p, j := h.part()
	before, after, whole, err := h.around(j)
	if err != nil {
		return nil, err
	}
	forms, err := p.forms(v)
	if err != nil {
		return nil, err
	}
	if whole && h.Suffixed {
		return nil, fmt.Errorf("%w: the key ends with a write shard's suffix after its template", ErrInexact)
	}
	op := expr.OpEq
	if !whole {
		op = expr.OpBeginsWith
	}
	out := make([]expr.KeyCond, len(forms))
	for i, form := range forms {
		out[i] = *expr.KeyCmp(h.Attr, op, before+form+after)
	}
	return out, nil
}

// beginsWith is BeginsWith for one holder.
func (h *Holder) beginsWith(prefix string) ([]expr.KeyCond, error) {
	p, j := h.part()
	before, _, _, err := h.around(j)
	if err != nil {
		return nil, err
	}
	if !utf8.ValidString(prefix) { // escaping would keep no prefix of it
		return nil, fmt.Errorf("%w: begins_with prefix is not valid UTF-8", ErrUnrepresentable)
	}
	key, err := p.AppendPrefix([]byte(before), prefix)
	if err != nil {
		return nil, err
	}
	return []expr.KeyCond{*expr.KeyCmp(h.Attr, expr.OpBeginsWith, string(key))}, nil
}

// forms returns the encodings of v that the placeholder reads back as v:
// the one AppendValue writes and, for isoformat, the naive spelling
// Python writes for a time without a zone, which it reads too.
func (p *Part) forms(v reflect.Value) ([]string, error) {
	b, err := p.AppendValue(nil, v)
	if err != nil {
		return nil, err
	}
	if p.Format == format.ISOFormat {
		t := reflect.Indirect(v).Interface().(time.Time)
		naive := t.UTC()
		if p.Loc != nil {
			naive = wallClock(t.In(p.Loc))
			if back, _ := p.inLoc(naive); !back.Equal(t) {
				return []string{string(b)}, nil // the naive form reads another instant
			}
		}
		return []string{string(b), format.ISOForms(naive)[1]}, nil
	}
	return []string{string(b)}, nil
}
