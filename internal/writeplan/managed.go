package writeplan

import (
	"reflect"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/model"
)

// The managed fields' values (the root's plan_managed.go declares them):
// the version, the CreatedAt and UpdatedAt stamps and the TTL.

// IsTime reports whether t is time.Time or *time.Time.
func IsTime(t reflect.Type) bool {
	return t == model.TimeType || (t.Kind() == reflect.Pointer && t.Elem() == model.TimeType)
}

// TTLValue is the epoch-seconds value of the TTL field f of rv, nil when
// zero.
func TTLValue(f *model.Field, rv reflect.Value) types.AttributeValue {
	fv, ok := f.Get(rv)
	if !ok {
		return nil
	}
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return nil
		}
		fv = fv.Elem()
	}
	var n int64
	switch {
	case fv.Type() == model.TimeType:
		t := fv.Interface().(time.Time)
		if t.IsZero() {
			return nil
		}
		n = t.Unix()
	case fv.CanInt():
		n = fv.Int()
	case fv.CanUint():
		n = int64(fv.Uint())
	}
	if n == 0 {
		return nil
	}
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// StampTime is now as the managed timestamps hold it: without its
// monotonic reading, and in UTC when its offset is 0, which is how decoding
// the stored text gives it back ("Z" parses as UTC).
func StampTime(now time.Time) time.Time {
	now = now.Round(0)
	if _, off := now.Zone(); off == 0 {
		return now.UTC()
	}
	return now
}

// Stamp sets the managed timestamp f of rv (nil: none) to now, truncated
// to cut (the precision of the key formats holding it; 0: none); with
// onlyZero, only when it is zero.
func Stamp(rv reflect.Value, f *model.Field, now time.Time, cut time.Duration, onlyZero bool) {
	if f == nil {
		return
	}
	if cut > 0 {
		now = now.Truncate(cut)
	}
	fv := model.FieldAlloc(rv, f.Index)
	if onlyZero && !fv.IsZero() && !(fv.Kind() == reflect.Pointer && fv.Elem().IsZero()) {
		return
	}
	if fv.Kind() == reflect.Pointer {
		t := now
		fv.Set(reflect.ValueOf(&t))
	} else {
		fv.Set(reflect.ValueOf(now))
	}
}

// Version is the integer field f (the version) of rv, 0 when absent.
func Version(f *model.Field, rv reflect.Value) int64 {
	fv, ok := f.Get(rv)
	if !ok {
		return 0
	}
	if fv.CanInt() {
		return fv.Int()
	}
	return int64(fv.Uint())
}

// SetVersion sets the integer field f (the version) of rv to n.
func SetVersion(f *model.Field, rv reflect.Value, n int64) {
	fv := model.FieldAlloc(rv, f.Index)
	if fv.CanInt() {
		fv.SetInt(n)
	} else {
		fv.SetUint(uint64(n))
	}
}
