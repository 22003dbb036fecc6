// Package exprcache turns an expression built with the SDK's expression
// package into a template whose values are slots, so that requests of one
// shape (the same key condition, filter, update or condition with different
// values) reuse the expression strings and names instead of running
// expression.Builder.Build each time, which costs more than the rest of
// building a request.
//
// A template is compiled once from a builder function that receives
// placeholder operands for the values that vary; those are made unique
// sentinel strings, found again in the built ExpressionAttributeValues.
package exprcache

import (
	"fmt"
	"maps"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Template is a built expression whose varying values are slots.
type Template struct {
	// KeyCondition, Filter, Projection, Condition and Update are the
	// expression strings, as expression.Expression returns them (nil for
	// the parts the builder did not have).
	KeyCondition, Filter, Projection, Condition, Update *string

	names map[string]string
	fixed map[string]types.AttributeValue // values that do not vary
	slots []string                        // slots[i] is the placeholder (":3") of value i
}

const sentinelPrefix = "\x00exprcache slot "

func sentinel(i int) string { return sentinelPrefix + strconv.Itoa(i) }

// Compile builds the expression once. build receives n operands to use for
// the n values that vary, in order, and returns the builder.
func Compile(n int, build func(slots []expression.ValueBuilder) expression.Builder) (*Template, error) {
	vals := make([]expression.ValueBuilder, n)
	for i := range vals {
		vals[i] = expression.Value(sentinel(i))
	}
	expr, err := build(vals).Build()
	if err != nil {
		return nil, err
	}
	t := &Template{
		KeyCondition: expr.KeyCondition(), Filter: expr.Filter(), Projection: expr.Projection(),
		Condition: expr.Condition(), Update: expr.Update(),
		names: expr.Names(), fixed: map[string]types.AttributeValue{}, slots: make([]string, n),
	}
	found := 0
	for ph, av := range expr.Values() {
		s, ok := av.(*types.AttributeValueMemberS)
		if ok && len(s.Value) > len(sentinelPrefix) && s.Value[:len(sentinelPrefix)] == sentinelPrefix {
			i, err := strconv.Atoi(s.Value[len(sentinelPrefix):])
			if err != nil || i < 0 || i >= n || t.slots[i] != "" {
				return nil, fmt.Errorf("exprcache: slot value %q used twice or malformed", s.Value)
			}
			t.slots[i] = ph
			found++
			continue
		}
		t.fixed[ph] = av
	}
	if found != n {
		return nil, fmt.Errorf("exprcache: %d of %d slots used by the expression", found, n)
	}
	return t, nil
}

// Names returns a copy of the expression's ExpressionAttributeNames.
func (t *Template) Names() map[string]string {
	if t.names == nil {
		return nil
	}
	return maps.Clone(t.names)
}

// Values returns ExpressionAttributeValues with vals in the slots (in the
// order Compile gave them). It panics if len(vals) is not the slot count.
func (t *Template) Values(vals ...types.AttributeValue) map[string]types.AttributeValue {
	if len(vals) != len(t.slots) {
		panic("exprcache: wrong number of values")
	}
	if len(t.slots)+len(t.fixed) == 0 {
		return nil
	}
	m := make(map[string]types.AttributeValue, len(t.slots)+len(t.fixed))
	for ph, av := range t.fixed {
		m[ph] = av
	}
	for i, ph := range t.slots {
		m[ph] = vals[i]
	}
	return m
}

// Cache holds templates by shape key. The zero value is ready to use.
type Cache struct {
	m sync.Map // string → *Template
}

// Get returns the template for key, compiling it with n slots and build on
// first use. The caller must give the same n and an equivalent build for a
// key every time.
func (c *Cache) Get(key string, n int, build func(slots []expression.ValueBuilder) expression.Builder) (*Template, error) {
	if t, ok := c.m.Load(key); ok {
		return t.(*Template), nil
	}
	t, err := Compile(n, build)
	if err != nil {
		return nil, err
	}
	got, _ := c.m.LoadOrStore(key, t)
	return got.(*Template), nil
}
