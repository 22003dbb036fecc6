package model

import (
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/codec"
)

// Encode returns the attribute value the field has in v, a struct of type
// typ, exactly as the item codec stores it (nil when not stored), tag
// options (string, omitempty, unixtime, …) applied as they are in an item.
func (f *Field) Encode(typ reflect.Type, v reflect.Value) (types.AttributeValue, error) {
	fv, ok := f.Get(v)
	if !ok {
		return nil, nil
	}
	// Straight from v when the codec stores this very field under f.Attr
	// (always, unless this package and the codec resolve a name differently).
	if plan := codec.For(typ); plan.HasField(f.Attr, f.Index) {
		return plan.EncodeAttr(v, f.Attr)
	}
	one := reflect.New(typ).Elem()
	FieldAlloc(one, f.Index).Set(fv)
	item, err := codec.For(typ).Encode(one, 0)
	if err != nil {
		return nil, err
	}
	av := item[f.Attr]
	if err := codec.Check(av); err != nil {
		// As EncodeAttr refuses it.
		err.(*codec.InvalidError).Attr = f.Attr
		return nil, err
	}
	return av, nil
}

// IsTime reports whether t is time.Time or *time.Time.
func IsTime(t reflect.Type) bool {
	return t == TimeType || (t.Kind() == reflect.Pointer && t.Elem() == TimeType)
}

// SetTime sets fv, a time.Time or *time.Time, to t: a pointer to a fresh
// copy, so that a caller's time is not changed.
func SetTime(fv reflect.Value, t time.Time) {
	if fv.Kind() == reflect.Pointer {
		fv.Set(reflect.ValueOf(&t))
	} else {
		fv.Set(reflect.ValueOf(t))
	}
}

// TruncateStored sets the times of fields in rv stored in a shape holding
// less than the whole time (unixtime, TTL, rfc3339, date, …) to what a read
// decodes from the stored shape (format.Format.Stored, zone-less ones in loc).
func TruncateStored(fields []*Field, rv reflect.Value, loc *time.Location) {
	for _, f := range fields {
		if f.Form == nil {
			continue
		}
		fv, ok := f.Get(rv)
		if !ok || !fv.CanSet() || !IsTime(fv.Type()) || (fv.Kind() == reflect.Pointer && fv.IsNil()) {
			continue
		}
		// A zero time that omitempty leaves out is read back as zero.
		if t := reflect.Indirect(fv).Interface().(time.Time); !t.IsZero() || !f.OmitEmpty {
			SetTime(fv, f.Form.Stored(t, loc))
		}
	}
}
