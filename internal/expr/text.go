package expr

import (
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Comparison operators of key conditions and conditions.
const (
	OpEq = " = "
	OpNe = " <> "
	OpLt = " < "
	OpLe = " <= "
	OpGt = " > "
	OpGe = " >= "
)

// Compare writes "name op value" (op is one of the Op constants).
func Compare(name, op, value string) string { return name + op + value }

// Between writes "name BETWEEN lo AND hi".
func Between(name, lo, hi string) string { return name + " BETWEEN " + lo + " AND " + hi }

// BeginsWith writes "begins_with(name, value)".
func BeginsWith(name, value string) string { return "begins_with(" + name + ", " + value + ")" }

// AttributeExists writes "attribute_exists(name)".
func AttributeExists(name string) string { return "attribute_exists(" + name + ")" }

// AttributeNotExists writes "attribute_not_exists(name)".
func AttributeNotExists(name string) string { return "attribute_not_exists(" + name + ")" }

// Holds writes the condition that attribute attr holds av, or, when av is
// nil, that attr is absent: the check that an attribute is still as it was
// read, present or not.
func (b *Builder) Holds(attr string, av types.AttributeValue) string {
	if av == nil {
		return AttributeNotExists(b.Name(attr))
	}
	return Compare(b.Name(attr), OpEq, b.Value(av))
}

// IfNotExists writes "if_not_exists(name, value)", an operand of SET: the
// attribute's value, or value when it is absent.
func IfNotExists(name, value string) string { return "if_not_exists(" + name + ", " + value + ")" }

// ListAppend writes "list_append(a, b)", an operand of SET: the list a
// followed by the list b.
func ListAppend(a, b string) string { return "list_append(" + a + ", " + b + ")" }

// Plus writes "a + b", an operand of SET.
func Plus(a, b string) string { return a + " + " + b }

// Projection writes a projection expression naming each attribute once.
func (b *Builder) Projection(attrs ...string) string {
	refs := make([]string, 0, len(attrs))
	for _, a := range attrs {
		if ref := b.Name(a); !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	return strings.Join(refs, ", ")
}

// Update writes an update expression clause by clause, in the order
// DynamoDB documents: SET, REMOVE, ADD, DELETE. The zero value is empty.
type Update struct {
	set, remove, add, del []byte
}

func appendAction(clause []byte, parts ...string) []byte {
	if len(clause) > 0 {
		clause = append(clause, ", "...)
	}
	for _, p := range parts {
		clause = append(clause, p...)
	}
	return clause
}

// Set writes "name = value".
func (u *Update) Set(name, value string) {
	u.set = appendAction(u.set, name, " = ", value)
}

// SetIfNotExists writes "name = if_not_exists(name, value)".
func (u *Update) SetIfNotExists(name, value string) {
	u.set = appendAction(u.set, name, " = if_not_exists(", name, ", ", value, ")")
}

// Remove writes "name" in the REMOVE clause.
func (u *Update) Remove(name string) {
	u.remove = appendAction(u.remove, name)
}

// Add writes "name value" in the ADD clause.
func (u *Update) Add(name, value string) {
	u.add = appendAction(u.add, name, " ", value)
}

// Delete writes "name value" in the DELETE clause (elements removed from a
// set).
func (u *Update) Delete(name, value string) {
	u.del = appendAction(u.del, name, " ", value)
}

// String returns the update expression.
func (u *Update) String() string {
	buf := make([]byte, 0, len(u.set)+len(u.remove)+len(u.add)+len(u.del)+28)
	clause := func(kw string, body []byte) {
		if len(body) == 0 {
			return
		}
		if len(buf) > 0 {
			buf = append(buf, ' ')
		}
		buf = append(buf, kw...)
		buf = append(buf, body...)
	}
	clause("SET ", u.set)
	clause("REMOVE ", u.remove)
	clause("ADD ", u.add)
	clause("DELETE ", u.del)
	return string(buf)
}
