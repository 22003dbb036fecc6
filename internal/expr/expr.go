// Package expr assembles the DynamoDB expressions of one request — key
// condition, filter, projection, condition and update — straight into
// strings, with the substitution variables they use.
//
// The SDK's expression package builds an expression tree, walks it, and
// formats it through several layers of intermediate values; for the small,
// fixed shapes the library sends on every request (a partition key equal
// to a value, a sort key range, the entity type filter, SET/REMOVE/ADD of
// known attributes) that costs more than the rest of building the request.
// Here the library writes those parts directly. Conditions and filters a
// caller gives as expression.ConditionBuilder values are still built by
// the SDK, once per request, and merged in: the SDK names its placeholders
// "#0", ":0", …, and this package names its own "#n0", ":v0", …, so the two
// never collide.
//
// Every attribute name goes behind a placeholder, even a plain one:
// migrations write raw items whose attribute names may hold dots or be
// reserved words ("Status"), which DynamoDB would otherwise read as
// document paths or reject. No other file writes expression text.
package expr

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Builder collects one request's substitution variables. The zero value is
// ready to use; a Builder is not safe for concurrent use.
type Builder struct {
	names  map[string]string
	values map[string]types.AttributeValue
	attrs  []string // attrs[i] is the attribute behind placeholder nameRef(i)
	nv     int
	sdk    bool // the SDK builder's placeholders are in use
}

// Placeholders for the first few names and values, so that the common
// request formats none.
var (
	nameRefs  [32]string
	valueRefs [32]string
)

func init() {
	for i := range nameRefs {
		nameRefs[i] = "#n" + strconv.Itoa(i)
		valueRefs[i] = ":v" + strconv.Itoa(i)
	}
}

func nameRef(i int) string {
	if i < len(nameRefs) {
		return nameRefs[i]
	}
	return "#n" + strconv.Itoa(i)
}

func valueRef(i int) string {
	if i < len(valueRefs) {
		return valueRefs[i]
	}
	return ":v" + strconv.Itoa(i)
}

// Name returns the placeholder for an attribute name, the same one each
// time the attribute is named.
func (b *Builder) Name(attr string) string {
	for i, a := range b.attrs {
		if a == attr {
			return nameRef(i)
		}
	}
	ref := nameRef(len(b.attrs))
	b.attrs = append(b.attrs, attr)
	if b.names == nil {
		b.names = make(map[string]string, 8)
	}
	b.names[ref] = attr
	return ref
}

// Value returns a new placeholder bound to av.
func (b *Builder) Value(av types.AttributeValue) string {
	ref := valueRef(b.nv)
	b.nv++
	if b.values == nil {
		b.values = make(map[string]types.AttributeValue, 8)
	}
	b.values[ref] = av
	return ref
}

// ValueS is Value for a string.
func (b *Builder) ValueS(s string) string {
	return b.Value(&types.AttributeValueMemberS{Value: s})
}

// ErrTwice is returned when a request's caller-given conditions are built
// a second time: the SDK would reuse its placeholders.
var ErrTwice = errors.New("expr: the SDK expression builder may be used once per request")

// Resolver maps a name a caller wrote at the head of a document path in a
// condition ("Public" in Public, Meta.Tags[0]) to what it stands for, or
// refuses it.
type Resolver func(name string) (Resolution, error)

// Resolution is what a name in a condition stands for.
type Resolution struct {
	// Attr is the attribute the name stands for.
	Attr string
	// Operand, when not nil, re-encodes a value the condition compares
	// the whole attribute with into the form the attribute is stored in
	// (a time stored as a date, as epoch seconds, …), where the SDK's
	// encoding of the caller's value differs from it.
	Operand Operand
	// Key, when not nil, says that no attribute of its own holds the
	// name's field, only keys do: its comparisons are written against
	// them (see [KeyField]), and Attr is only what a projection reads.
	Key *KeyField
}

// Operand re-encodes a value compared with an attribute (see [Resolver]).
// It returns av itself when av is not one it re-encodes.
type Operand func(av types.AttributeValue) (types.AttributeValue, error)

// Conditions builds the caller-given conditions (joined with AND) with the
// SDK's builder and merges their substitution variables into b, returning
// the condition's text. It may be called once per Builder.
//
// resolve (nil: names are attributes) rewrites the first element of each
// name path: the SDK splits expression.Name("Meta.Tags[0]") into
// "#0.#1[0]", and only "#0" is resolved; nested elements and map keys stay
// as written. An SDK placeholder used both at the head of a path and
// nested keeps its name where nested, and the head positions get a
// placeholder of b's own. The first error of resolve is returned as is.
func (b *Builder) Conditions(resolve Resolver, conds ...expression.ConditionBuilder) (string, error) {
	if len(conds) == 0 {
		return "", nil
	}
	if b.sdk {
		return "", ErrTwice
	}
	b.sdk = true
	c := conds[0]
	if len(conds) > 1 {
		c = expression.And(conds[0], conds[1], conds[2:]...)
	}
	e, err := expression.NewBuilder().WithCondition(c).Build()
	if err != nil {
		return "", err
	}
	text, names, values := *e.Condition(), e.Names(), e.Values()
	if resolve != nil {
		if text, err = b.rewriteKeyFields(text, names, values, resolve); err != nil {
			return "", err
		}
		if err := reencode(text, names, values, resolve); err != nil {
			return "", err
		}
		if text, err = b.resolveHeads(text, names, resolve); err != nil {
			return "", err
		}
	}
	for k, v := range names {
		if b.names == nil {
			b.names = make(map[string]string, 8)
		}
		b.names[k] = v
	}
	for k, v := range values {
		if b.values == nil {
			b.values = make(map[string]types.AttributeValue, 8)
		}
		b.values[k] = v
	}
	return text, nil
}

// The comparisons of a whole attribute with values in an SDK condition,
// whose operands reencode re-encodes: #0 = :0 (and <>, <, <=, >, >=),
// :0 = #0, #0 BETWEEN :0 AND :1, #0 IN (:0, :1). A name inside size(),
// or nested in a path (#0.#1, #0[2]), is not followed or preceded by the
// bare space the patterns require, or is preceded by '.', which reencode
// checks.
var (
	nameFirst  = regexp.MustCompile(`(#\d+) (=|<>|<=|>=|<|>) (:\d+)`)
	valueFirst = regexp.MustCompile(`(:\d+) (=|<>|<=|>=|<|>) (#\d+)`)
	between    = regexp.MustCompile(`(#\d+) BETWEEN (:\d+) AND (:\d+)`)
	in         = regexp.MustCompile(`(#\d+) IN \(((?::\d+)(?:, :\d+)*)\)`)
	valueRefRe = regexp.MustCompile(`:\d+`)
)

// reencode replaces, in values, each value an SDK condition text compares
// a whole attribute with by what the attribute's Operand (from resolve)
// makes of it. Names are those of the SDK's placeholders, before
// resolveHeads.
func reencode(text string, names map[string]string, values map[string]types.AttributeValue, resolve Resolver) error {
	type use struct{ name, value string }
	var uses []use
	whole := func(start, end int) bool { return wholeName(text, start, end) }
	for _, m := range nameFirst.FindAllStringSubmatchIndex(text, -1) {
		if whole(m[2], m[3]) {
			uses = append(uses, use{text[m[2]:m[3]], text[m[6]:m[7]]})
		}
	}
	for _, m := range valueFirst.FindAllStringSubmatchIndex(text, -1) {
		if whole(m[6], m[7]) {
			uses = append(uses, use{text[m[6]:m[7]], text[m[2]:m[3]]})
		}
	}
	for _, m := range between.FindAllStringSubmatchIndex(text, -1) {
		if whole(m[2], m[3]) {
			uses = append(uses, use{text[m[2]:m[3]], text[m[4]:m[5]]}, use{text[m[2]:m[3]], text[m[6]:m[7]]})
		}
	}
	for _, m := range in.FindAllStringSubmatchIndex(text, -1) {
		if whole(m[2], m[3]) {
			for _, v := range valueRefRe.FindAllString(text[m[4]:m[5]], -1) {
				uses = append(uses, use{text[m[2]:m[3]], v})
			}
		}
	}
	done := map[string]bool{}
	for _, u := range uses {
		name, ok := names[u.name]
		av, hasValue := values[u.value]
		if !ok || !hasValue || done[u.value] {
			continue
		}
		done[u.value] = true
		r, err := resolve(name)
		if err != nil || r.Operand == nil {
			continue // resolveHeads returns the error
		}
		if values[u.value], err = r.Operand(av); err != nil {
			return err
		}
	}
	return nil
}

// wholeName reports whether text[start:end], a name placeholder, is a
// whole path: not nested after a '.', not followed by a nested element.
func wholeName(text string, start, end int) bool {
	return (start == 0 || text[start-1] != '.') && (end == len(text) || (text[end] != '.' && text[end] != '['))
}

// nameUse is one occurrence of an SDK name placeholder in a condition.
type nameUse struct {
	start, end int  // text[start:end] is the placeholder
	head       bool // the first element of its path (not after a '.')
}

// nameUses lists the name placeholders of an SDK condition in text order.
// The SDK writes nothing else with '#': values are ":<n>" placeholders and
// the rest is operators, functions, parentheses and "[<n>]" indexes.
func nameUses(text string) []nameUse {
	var uses []nameUse
	for i := 0; i < len(text); i++ {
		if text[i] != '#' {
			continue
		}
		j := i + 1
		for j < len(text) && text[j] >= '0' && text[j] <= '9' {
			j++
		}
		if j == i+1 { // "#n0": a placeholder of b's own, in a rewritten clause
			continue
		}
		uses = append(uses, nameUse{start: i, end: j, head: i == 0 || text[i-1] != '.'})
		i = j - 1
	}
	return uses
}

// resolveHeads resolves the names at the heads of the paths of text (an
// SDK condition whose placeholders names holds), updating names in place,
// and returns the text, rewritten only where a placeholder's head and
// nested uses had to part.
func (b *Builder) resolveHeads(text string, names map[string]string, resolve Resolver) (string, error) {
	uses := nameUses(text)
	nested := map[string]bool{}
	for _, u := range uses {
		if !u.head {
			nested[text[u.start:u.end]] = true
		}
	}
	resolved := map[string]string{} // head placeholder -> attribute
	split := map[string]string{}    // placeholder -> b's placeholder for its head uses
	for _, u := range uses {
		ref := text[u.start:u.end]
		if !u.head {
			continue
		}
		if _, done := resolved[ref]; done {
			continue
		}
		name, ok := names[ref]
		if !ok {
			return "", fmt.Errorf("expr: the SDK condition uses %s, which it does not name", ref)
		}
		r, err := resolve(name)
		if err != nil {
			return "", err
		}
		attr := r.Attr
		resolved[ref] = attr
		switch {
		case attr == name:
		case nested[ref]:
			split[ref] = b.Name(attr)
		default:
			names[ref] = attr
		}
	}
	if len(split) == 0 {
		return text, nil
	}
	var out strings.Builder
	out.Grow(len(text) + 8*len(split))
	last := 0
	for _, u := range uses {
		ref := text[u.start:u.end]
		if to, ok := split[ref]; ok && u.head {
			out.WriteString(text[last:u.start])
			out.WriteString(to)
			last = u.end
		}
	}
	out.WriteString(text[last:])
	return out.String(), nil
}

// Names returns the ExpressionAttributeNames (nil when there are none).
func (b *Builder) Names() map[string]string { return b.names }

// Values returns the ExpressionAttributeValues (nil when there are none).
func (b *Builder) Values() map[string]types.AttributeValue { return b.values }

// And joins conditions written as text, parenthesising each when there is
// more than one; empty parts are left out.
func And(parts ...string) string { return join(" AND ", parts) }

// Or joins conditions written as text into one that holds when any of
// them does, parenthesising each when there is more than one; empty parts
// are left out.
func Or(parts ...string) string { return join(" OR ", parts) }

func join(sep string, parts []string) string {
	n, size := 0, 0
	for _, p := range parts {
		if p != "" {
			n++
			size += len(p) + len(sep) + 2
		}
	}
	if n <= 1 {
		for _, p := range parts {
			if p != "" {
				return p
			}
		}
		return ""
	}
	buf := make([]byte, 0, size)
	first := true
	for _, p := range parts {
		if p == "" {
			continue
		}
		if !first {
			buf = append(buf, sep...)
		}
		first = false
		buf = append(buf, '(')
		buf = append(buf, p...)
		buf = append(buf, ')')
	}
	return string(buf)
}
