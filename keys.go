package singletable

// The generic edge of the key codec: binding a template's placeholders to
// the fields of an entity, rendering keys from struct values and parsing
// them back. The codec itself (templates, escaping, order-preserving
// encodings) is internal/keys.

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/keys"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/schema"
)

// compiledKey is a key template with its placeholders resolved to fields
// (see schema.Key, which compiles it).
type compiledKey struct {
	tpl     keys.Template
	fields  []*model.Field
	places  []*keys.Part
	sort    bool
	reserve int
}

func compiled(k schema.Key) compiledKey {
	return compiledKey{tpl: k.Tpl, fields: k.Fields, places: k.Places, sort: k.Sort, reserve: k.Reserve}
}

func (k compiledKey) schemaKey() schema.Key {
	return schema.Key{Tpl: k.tpl, Fields: k.fields, Places: k.places, Sort: k.sort, Reserve: k.reserve}
}

func (k compiledKey) defined() bool { return k.tpl.Raw != "" }

func (e *entityPlan) compileKey(tpl, index, key string, sort bool) (compiledKey, error) {
	k, err := e.fieldSet().Key(tpl, index, key, sort, e.foreign.loc)
	return compiled(k), invalid(err)
}

// renderKey renders a compiled template from struct value v. Missing or
// empty fields are reported in a *KeyError.
func (e *entityPlan) renderKey(k compiledKey, v reflect.Value, index, attr string) (string, error) {
	var arr [128]byte
	buf, err := appendKey(arr[:0], k, v, e.name, index, attr)
	if err != nil {
		return "", err
	}
	return string(buf), nil
}

// renderPair renders keys pk and sk (sk "" when not defined) from struct
// value rv into one string; with shards > 0, pk ends with rv's write
// shard suffix.
func (e *entityPlan) renderPair(rv reflect.Value, index string, pk, sk compiledKey, pkAttr, skAttr string, shards int) (string, string, error) {
	var arr [192]byte
	buf, err := appendKey(arr[:0], pk, rv, e.name, index, pkAttr)
	if err == nil && shards > 0 {
		var shard int
		shard, err = e.shardOf(rv, shards)
		buf = keys.AppendShard(buf, shard)
	}
	n := len(buf)
	if err == nil && sk.defined() {
		buf, err = appendKey(buf, sk, rv, e.name, index, skAttr)
	}
	if err != nil {
		return "", "", err
	}
	keys := string(buf)
	return keys[:n], keys[n:], nil
}

// appendKey appends the key rendered from k and struct value v to dst,
// through the one key renderer (keys.Template.Append). Missing or empty
// fields are reported in a *KeyError of entity, as is a key over
// DynamoDB's limit. It needs no T: compiled once here, the renderer
// inlines internal/model's unsafe accessors (a generic body instantiated
// in the caller's package could not).
func appendKey(dst []byte, k compiledKey, v reflect.Value, entity, index, attr string) ([]byte, error) {
	start := len(dst)
	dst, err := k.tpl.Append(dst, k.fields, v)
	if err != nil {
		return dst, renderKeyError(entity, index, attr, err)
	}
	if n, limit := len(dst)-start, keyLimit(k.sort); n+k.reserve > limit {
		if k.reserve > 0 {
			return dst, &KeyError{Entity: entity, Index: index, Key: attr,
				Err: fmt.Errorf("rendered key %s is %d bytes; with its write-shard suffix (up to %d bytes) it would be over DynamoDB's %d-byte limit", k.tpl.Raw, n, k.reserve, limit)}
		}
		return dst, &KeyError{Entity: entity, Index: index, Key: attr,
			Err: fmt.Errorf("rendered key %s is %d bytes, over DynamoDB's %d-byte limit", k.tpl.Raw, n, limit)}
	}
	return dst, nil
}

// renderKeyError turns the renderer's *keys.RenderError into a *KeyError.
func renderKeyError(entity, index, attr string, err error) *KeyError {
	re := err.(*keys.RenderError)
	if len(re.Missing) > 0 {
		return &KeyError{Entity: entity, Index: index, Key: attr, Missing: re.Missing}
	}
	return valueKeyError(entity, index, attr, re.Field, re.Err)
}

// valueKeyError reports a key value of field that could not be written:
// missing (a nil pointer, an empty string) or one the encoding refuses (a
// value its placeholder's format cannot write exactly, a NaN, a year past
// 9999).
func valueKeyError(entity, index, attr, field string, err error) *KeyError {
	if errors.Is(err, keys.ErrEmptyValue) || errors.Is(err, keys.ErrMissingValue) {
		return &KeyError{Entity: entity, Index: index, Key: attr, Missing: []string{field}, Err: err}
	}
	return &KeyError{Entity: entity, Index: index, Key: attr, Err: fmt.Errorf("field %s: %w", field, err)}
}

func keyLimit(sort bool) int { return keys.Limit(sort) }

// parseKey fills dst's template fields from a rendered key: the inverse of
// rendering. The fields item has an attribute for are left alone (a
// stored attribute wins over the key's copy); item is nil to fill all.
func (e *entityPlan) parseKey(k compiledKey, key string, dst reflect.Value, item map[string]types.AttributeValue) error {
	vals, err := k.tpl.Split(key)
	if err != nil {
		return err
	}
	for i, f := range k.fields {
		if _, ok := item[f.Attr]; ok {
			continue
		}
		if err := k.places[i].DecodeValue(vals[i], fieldByIndexAlloc(dst, f.Index)); err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
	}
	return nil
}

// ParseKeys fills the fields of the entity's primary key templates from
// rendered PK and SK values (sk is ignored for entities without an SK).
func (e *Entity[T]) ParseKeys(pk, sk string) (T, error) {
	var out T
	v := reflect.ValueOf(&out).Elem()
	if err := e.parseKey(e.pk, pk, v, nil); err != nil {
		return out, &KeyError{Entity: e.name, Key: "PK", Err: err}
	}
	if e.sk.defined() {
		if err := e.parseKey(e.sk, sk, v, nil); err != nil {
			return out, &KeyError{Entity: e.name, Key: "SK", Err: err}
		}
	}
	return out, nil
}

// RenderKeys renders the entity's primary key from v, in each
// placeholder's format: the strings Get and Put use as PK and SK (sk is ""
// for an entity without an SK). It is the inverse of [Entity.ParseKeys]
// and sends nothing; a missing field or a value its format cannot write is
// a *[KeyError].
func (e *Entity[T]) RenderKeys(v T) (pk, sk string, err error) {
	return e.renderPair(reflect.ValueOf(&v).Elem(), "", e.pk, e.sk, "PK", "SK", 0)
}

// RenderIndexKeys renders the keys of the named templated index from v
// (sk is "" for an index without a sort key; a write-sharded index's
// partition key is shown without its shard suffix). It ignores the
// index's When predicate. An unknown or multi-attribute index is a
// *[ValidationError]; a missing field or a value its format cannot write
// is a *[KeyError].
func (e *Entity[T]) RenderIndexKeys(index string, v T) (pk, sk string, err error) {
	p, err := e.index(index)
	if err != nil {
		return "", "", err
	}
	if p.multi {
		return "", "", validationErr(e.name, index, "a multi-attribute index has no rendered keys")
	}
	return e.renderPair(reflect.ValueOf(&v).Elem(), index, p.pk, p.sk, p.pkAttr, p.skAttr, 0)
}
