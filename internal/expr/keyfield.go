package expr

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// KeyField writes a comparison of a field that only keys hold (a name a
// Resolver resolves with a Key) as a condition on the key attributes,
// through b, or refuses it with an error. Conditions calls it with op
// OpEq and one value (an IN calls it for each value, and <> is written as
// NOT of =), OpBeginsWith and one value, a range (OpLt, OpLe, OpGt, OpGe
// with one value, OpBetween with both bounds), or, with no value, a word
// naming a use that is no comparison with a value ("size",
// "attribute_exists", "a document path into it", …), which it refuses.
type KeyField func(b *Builder, op string, values ...types.AttributeValue) (string, error)

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
	keyed := map[string]KeyField{}
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
		_, err := kf(b, useOf(text, u))
		return "", cmpOr(err, errors.New("expr: a key field's use was neither rewritten nor refused"))
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

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// keyClauses finds the comparisons with values of the keyed names in
// text, in text order.
func keyClauses(text string, keyed map[string]KeyField) []keyClause {
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
func (c keyClause) write(b *Builder, kf KeyField, values map[string]types.AttributeValue) (string, error) {
	avs := make([]types.AttributeValue, len(c.values))
	for i, v := range c.values {
		if avs[i] = values[v]; avs[i] == nil {
			return "", fmt.Errorf("expr: the SDK condition uses %s, which it does not bind", v)
		}
	}
	var parts []string
	switch c.op {
	case "=", "<>", "IN":
		for _, av := range avs {
			s, err := kf(b, OpEq, av)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
	case "begins_with":
		s, err := kf(b, OpBeginsWith, avs...)
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
	default:
		op := OpBetween
		if c.op != "BETWEEN" {
			op = " " + c.op + " "
		}
		s, err := kf(b, op, avs...)
		if err != nil {
			return "", err
		}
		parts = append(parts, s)
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
