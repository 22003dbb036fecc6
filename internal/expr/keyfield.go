package expr

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// KeyField is a field that only keys hold (a name a Resolver resolves
// with a Key), whose comparisons Conditions writes as key conditions on
// them: = (IN: for each value) through Equal, <> as NOT of it, begins_with
// through BeginsWith, each ANDed with Where's condition when Where is not
// nil (an entity type). Every other use of the field (a range, size,
// attribute_exists, a path into it, a comparison with an attribute) is
// refused, and every error of Equal and BeginsWith returned, through
// Refuse.
type KeyField struct {
	Equal      func(av types.AttributeValue) ([]KeyCond, error) // any of which holds
	BeginsWith func(prefix string) ([]KeyCond, error)
	Where      func(b *Builder) string
	Refuse     func(why error) error
}

// write writes one comparison: op OpEq or OpBeginsWith and its value, or
// anything else, which it refuses.
func (k *KeyField) write(b *Builder, op string, av types.AttributeValue) (string, error) {
	var conds []KeyCond
	var err error
	prefix, isS := av.(*types.AttributeValueMemberS) // the SDK's begins_with takes a string
	switch {
	case op == OpEq:
		conds, err = k.Equal(av)
	case op == OpBeginsWith && isS:
		conds, err = k.BeginsWith(prefix.Value)
	default:
		err = fmt.Errorf("%s: a key is tested exactly by =, <>, IN and begins_with (a range over a sort key's fields is a Query's sort condition)", strings.TrimSpace(op))
	}
	switch {
	case err != nil:
		return "", k.Refuse(err)
	case len(conds) == 0:
		return "", k.Refuse(errors.New("no key condition"))
	case k.Where != nil:
		return And(k.Where(b), b.AnyKey(conds)), nil
	}
	return b.AnyKey(conds), nil
}

// The SDK's begins_with, whose name KeyField rewrites.
var beginsWith = regexp.MustCompile(`begins_with \((#\d+), (:\d+)\)`)

// keyClause is one comparison of a key field with values in an SDK
// condition: text[start:end], the name ref, the SDK's operator and the
// value placeholders.
type keyClause struct {
	start, end int
	ref, op    string
	values     []string
}

// flipped is the operator of "value op name" as "name flipped[op] value".
var flipped = map[string]string{"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// rewriteKeyFields rewrites the comparisons of the names resolve resolves
// with a Key (see Resolution) in text, an SDK condition whose placeholders
// names and values hold, into conditions on key attributes, and drops the
// names and values no longer used. A use of such a name that is not a
// comparison with values is the KeyField's refusal.
func (b *Builder) rewriteKeyFields(text string, names map[string]string, values map[string]types.AttributeValue, resolve Resolver) (string, error) {
	var keyed map[string]*KeyField // made for the first key field: most conditions have none
	uses := nameUses(text)
	for _, u := range uses {
		ref := text[u.start:u.end]
		if _, seen := keyed[ref]; seen || !u.head || names[ref] == "" {
			continue
		}
		r, err := resolve(names[ref])
		if err != nil {
			return "", err
		}
		if r.Key != nil && keyed == nil {
			keyed = map[string]*KeyField{}
		}
		if r.Key != nil {
			keyed[ref] = r.Key
		}
	}
	if len(keyed) == 0 {
		return text, nil
	}
	clauses := keyClauses(text, keyed)
	for _, u := range uses {
		kf := keyed[text[u.start:u.end]]
		inClause := slices.ContainsFunc(clauses, func(c keyClause) bool { return c.start <= u.start && u.end <= c.end })
		if kf == nil || !u.head || inClause {
			continue
		}
		_, err := kf.write(b, useOf(text, u), nil)
		return "", err
	}
	var out strings.Builder
	last := 0
	for _, c := range clauses {
		cond, err := c.write(b, keyed[c.ref], values)
		if err != nil {
			return "", err
		}
		out.WriteString(text[last:c.start])
		out.WriteString(cond)
		last = c.end
	}
	out.WriteString(text[last:])
	text = out.String()
	dropUnused(text, names, values)
	return text, nil
}

// keyClauses finds the comparisons with values of the keyed names in
// text, in text order.
func keyClauses(text string, keyed map[string]*KeyField) []keyClause {
	var out []keyClause
	add := func(m []int, ref [2]int, op string, vals ...[2]int) {
		r := text[ref[0]:ref[1]]
		if keyed[r] == nil || !wholeName(text, ref[0], ref[1]) {
			return
		}
		c := keyClause{start: m[0], end: m[1], ref: r, op: op}
		for _, v := range vals {
			c.values = append(c.values, text[v[0]:v[1]])
		}
		out = append(out, c)
	}
	for _, m := range nameFirst.FindAllStringSubmatchIndex(text, -1) {
		add(m, [2]int{m[2], m[3]}, text[m[4]:m[5]], [2]int{m[6], m[7]})
	}
	for _, m := range valueFirst.FindAllStringSubmatchIndex(text, -1) {
		add(m, [2]int{m[6], m[7]}, flipped[text[m[4]:m[5]]], [2]int{m[2], m[3]})
	}
	for _, m := range between.FindAllStringSubmatchIndex(text, -1) {
		add(m, [2]int{m[2], m[3]}, "BETWEEN", [2]int{m[4], m[5]}, [2]int{m[6], m[7]})
	}
	for _, m := range in.FindAllStringSubmatchIndex(text, -1) {
		var vals [][2]int
		for _, v := range valueRefRe.FindAllStringIndex(text[m[4]:m[5]], -1) {
			vals = append(vals, [2]int{m[4] + v[0], m[4] + v[1]})
		}
		add(m, [2]int{m[2], m[3]}, "IN", vals...)
	}
	for _, m := range beginsWith.FindAllStringSubmatchIndex(text, -1) {
		add(m, [2]int{m[2], m[3]}, "begins_with", [2]int{m[4], m[5]})
	}
	slices.SortFunc(out, func(a, b keyClause) int { return a.start - b.start })
	return out
}

// write writes the clause through kf.
func (c keyClause) write(b *Builder, kf *KeyField, values map[string]types.AttributeValue) (string, error) {
	avs := make([]types.AttributeValue, len(c.values))
	for i, v := range c.values {
		if avs[i] = values[v]; avs[i] == nil {
			return "", fmt.Errorf("expr: the SDK condition uses %s, which it does not bind", v)
		}
	}
	op := OpEq
	switch c.op {
	case "=", "<>", "IN":
	case "begins_with":
		op = OpBeginsWith
	default: // a range, which no key condition on a key part is exactly
		_, err := kf.write(b, c.op, nil)
		return "", err
	}
	parts := make([]string, len(avs))
	for i, av := range avs {
		s, err := kf.write(b, op, av)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	// Not parenthesised: DynamoDB refuses redundant parentheses, and the
	// SDK parenthesises every operand of AND, OR and NOT (a clause alone is
	// the whole condition, which the library's And parenthesises).
	if c.op == "<>" {
		return "NOT (" + Or(parts...) + ")", nil
	}
	return Or(parts...), nil
}

// useOf names the use u of a key field that is no comparison with values.
func useOf(text string, u nameUse) string {
	if !wholeName(text, u.start, u.end) {
		return "a document path into it"
	}
	for _, fn := range []string{"size", "attribute_exists", "attribute_not_exists", "attribute_type", "contains", "begins_with"} {
		if strings.HasSuffix(text[:u.start], fn+" (") {
			return fn
		}
	}
	return "a comparison with another attribute"
}

// dropUnused deletes the SDK's names and values that text no longer uses.
func dropUnused(text string, names map[string]string, values map[string]types.AttributeValue) {
	used := map[string]bool{}
	for _, u := range nameUses(text) {
		used[text[u.start:u.end]] = true
	}
	for _, v := range valueRefRe.FindAllString(text, -1) {
		used[v] = true
	}
	for ref := range names {
		if !used[ref] {
			delete(names, ref)
		}
	}
	for ref := range values {
		if !used[ref] {
			delete(values, ref)
		}
	}
}

// AnyKey writes the condition that one of conds holds (each a comparison
// of a key attribute, as in a key condition).
func (b *Builder) AnyKey(conds []KeyCond) string {
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = c.write(b)
	}
	return Or(parts...)
}
