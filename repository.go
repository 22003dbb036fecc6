package singletable

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/internal/expr"
	"github.com/singletable-go/singletable/internal/model"
	"github.com/singletable-go/singletable/internal/writeplan"
)

// ReadOptions tunes every read. Set its fields in the option functions
// passed to the read:
//
//	u, err := users.Get(ctx, key, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
type ReadOptions struct {
	// ConsistentRead asks for a strongly consistent read (twice the read
	// capacity of the default eventually consistent read).
	ConsistentRead bool
	// Fields limits the read to the named Go fields (a
	// ProjectionExpression) and the primary key, which gives back the
	// fields of the key templates; the other fields of the result keep
	// their zero values.
	Fields []string
	// StrictDecode makes an item a read selected but cannot decode fail
	// the read with its *DecodeError: a page then ends there, instead of
	// listing it in [Page].Skipped and going on.
	StrictDecode bool
}

// WriteOptions tunes a write of one item ([Repo.Create], [Repo.Put],
// [Repo.Delete] and their op forms [Repo.CreateOp], [Repo.PutOp],
// [Repo.DeleteOp]):
//
//	_, err := users.Put(ctx, u, func(o *singletable.WriteOptions) { o.MustExist = true })
type WriteOptions struct {
	// If, when set, makes the write conditional: it fails with
	// [ErrConditionFailed] when the condition does not hold. Name fields by
	// their Go names, as [Query.Filter] describes.
	If expression.ConditionBuilder
	// MustExist makes Put replace only an existing item, and Delete fail
	// when there is nothing to delete; both return [ErrNotFound]. A
	// Create, which writes only an item that does not exist, refuses it
	// with a *ValidationError before the network.
	MustExist bool
}

// consistentRead is the option of a strongly consistent read.
func consistentRead(o *ReadOptions) { o.ConsistentRead = true }

// writeOptions is WriteOptions as the write builders see it.
type writeOptions struct {
	WriteOptions
	// load is a PutOp's put: managed timestamps kept when set, the version
	// stored as given and not checked.
	load bool
}

// notExists holds when the item does not exist.
func (r *repo) notExists() writeplan.Check {
	return writeplan.AttrNotExists(r.t.opts.PartitionKey)
}

// Get reads the item with key's primary key fields ([GetItem]). It returns
// [ErrNotFound] when there is no such item of this entity.
//
// [GetItem]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_GetItem.html
func (r *Repo[T]) Get(ctx context.Context, key T, optFns ...func(*ReadOptions)) (T, error) {
	var zero T
	o := readOpts(optFns)
	k, err := r.e.key(r.t, key)
	if err != nil {
		return zero, err
	}
	in := &dynamodb.GetItemInput{TableName: &r.t.name, Key: k}
	if o.ConsistentRead {
		in.ConsistentRead = aws.Bool(true)
	}
	if len(o.Fields) > 0 {
		if in.ProjectionExpression, in.ExpressionAttributeNames, err = r.fieldsProjection(o.Fields); err != nil {
			return zero, err
		}
	}
	if v, ok, err := r.getWire(ctx, in); ok {
		return v, err
	}
	out, err := r.t.api(ctx, r.e.name).GetItem(ctx, in)
	if err != nil {
		return zero, getErr(r.e.name, err)
	}
	return r.gotItem(out.Item)
}

// getErr is Get's error for a GetItem that failed.
func getErr(entity string, err error) error {
	return fmt.Errorf("singletable: get %s: %w", entity, err)
}

// isMine reports whether item belongs to this repository's entity.
// An item without the entity type attribute is when the entity matches
// keys and its key parses with the entity's templates ([Schema].MatchKeys).
func (r *repo) isMine(item map[string]types.AttributeValue) bool {
	if s, ok := item[r.t.opts.EntityTypeAttr].(*types.AttributeValueMemberS); ok {
		return s.Value == r.e.name
	}
	return r.e.owns(&r.t.opts, item)
}

// Create writes v as a new item ([PutItem] with attribute_not_exists) and
// returns the item as written, managed fields filled in. It returns
// [ErrAlreadyExists] when an item with the same primary key exists or a
// unique field's value is taken; with [WriteOptions].If it writes only
// when the condition holds as well ([ErrConditionFailed] otherwise).
//
// [PutItem]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_PutItem.html
func (r *Repo[T]) Create(ctx context.Context, v T, optFns ...func(*WriteOptions)) (T, error) {
	o := writeOpts(optFns)
	var w T
	_, err := r.exec(ctx, "Create", func() ([]txItem, error) {
		w = v // each attempt stamps a fresh copy
		return r.createOpItems(&w, o)
	})
	return r.written(w, err)
}

// Put writes v, replacing any item with the same primary key ([PutItem]),
// and returns the item as written, as [Repo.Create] does. With
// [WriteOptions].If it writes only when the condition holds
// ([ErrConditionFailed] otherwise); with MustExist only when the item
// exists ([ErrNotFound]). Put never replaces an item of another entity
// under the same key ([ErrConditionFailed]).
//
// A stale version ([Schema].Version) is [ErrVersionConflict].
func (r *Repo[T]) Put(ctx context.Context, v T, optFns ...func(*WriteOptions)) (T, error) {
	o := writeOpts(optFns)
	var w T
	_, err := r.exec(ctx, "Put", func() ([]txItem, error) {
		w = v // each attempt stamps a fresh copy (a retry must not see its own version)
		return r.putItems(ctx, &w, o)
	})
	return r.written(w, err)
}

// written is what Create and Put return: the value they encoded, with
// times cut as a read of the item decodes them.
func (r *Repo[T]) written(w T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	r.e.truncateSeconds(reflect.ValueOf(&w).Elem())
	return w, nil
}

// Delete removes the item with key's primary key ([DeleteItem]) and returns
// it as it was, or [ErrNotFound] when there was no such item (the delete
// still succeeded). With [WriteOptions].If it deletes only when the
// condition holds; with MustExist the absence is checked in the request.
// Delete never removes an item of another entity under the same key
// ([ErrConditionFailed]); a non-zero version in key is checked
// ([ErrVersionConflict]). When the old item does not decode, it was
// deleted all the same: the error wraps the codec's, not a
// *ValidationError.
//
// [DeleteItem]: https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_DeleteItem.html
func (r *Repo[T]) Delete(ctx context.Context, key T, optFns ...func(*WriteOptions)) (T, error) {
	var zero T
	o := writeOpts(optFns)
	var snap *writeplan.Snapshot
	res, err := r.exec(ctx, "Delete", func() ([]txItem, error) {
		items, s, err := r.deleteItems(ctx, key, o)
		snap = s
		return items, err
	})
	if err != nil {
		return zero, err
	}
	attrs := res.attrs
	if snap != nil {
		attrs = snap.Item
	} else if res.unseen {
		// Deleted by an attempt whose response (and the old item) was lost.
		return zero, nil
	}
	if len(attrs) == 0 && InPreview(ctx) {
		return zero, nil // previewed: nothing was deleted, nothing came back
	}
	if len(attrs) == 0 || !r.isMine(attrs) {
		return zero, ErrNotFound
	}
	v, err := r.e.decode(r.t, attrs)
	return v, appliedDecodeErr("delete", r.e.name, err)
}

// projectionAttrs is a read of fields as attribute names: the entity type
// attribute, the fields' attributes and the primary key attributes (which
// fill the key template fields and tell an untyped item's entity).
func (r *repo) projectionAttrs(fields []string) ([]string, error) {
	attrs := make([]string, 0, len(fields)+4)
	attrs = append(attrs, r.t.opts.EntityTypeAttr)
	for _, name := range fields {
		f, err := r.e.field(name)
		if err != nil {
			return nil, err
		}
		if f.KeyOnly { // read from the keys that hold it
			attrs = r.e.indexKeysHolding(&r.t.opts, attrs, []*model.Field{f}, nil)
		} else {
			attrs = append(attrs, f.Attr)
		}
	}
	attrs = appendAttr(attrs, r.t.opts.PartitionKey)
	return appendAttr(attrs, r.t.opts.SortKey), nil
}

// fieldsProjection writes the projection of a read of fields ([ReadOptions].Fields):
// the entity type, the fields' attributes and then extra attributes,
// checked against DynamoDB's expression limits.
func (r *repo) fieldsProjection(fields []string, extra ...string) (*string, map[string]string, error) {
	attrs, err := r.projectionAttrs(fields)
	if err != nil {
		return nil, nil, err
	}
	proj, names := projectionExpr(append(attrs, extra...))
	if err := checkExprLimits(r.e.name, exprParts{kinds: []string{"projection"},
		exprs: []*string{proj}, names: names}); err != nil {
		return nil, nil, err
	}
	return proj, names, nil
}

// projectionExpr writes a projection of attribute names (each once) and
// its ExpressionAttributeNames.
func projectionExpr(attrs []string) (*string, map[string]string) {
	var b expr.Builder
	p := b.Projection(attrs...)
	return &p, b.Names()
}

func appendAttr(s []string, a string) []string {
	if a == "" || slices.Contains(s, a) {
		return s
	}
	return append(s, a)
}
