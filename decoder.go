package singletable

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Decoder decodes items that the library did not read itself (the images
// of a stream record, the items of an export) into their entities' Go
// values, routing each to its entity's [Target] as a [Collection] does.
// It delivers nothing to the targets, so it is safe for concurrent use.
// Make it with [Table.Decoder].
type Decoder struct {
	rt *router
}

// Decoder returns a decoder of the table's items for the entities of
// targets: use [Repo.Target] targets (a target made with [Repo.AppendTo],
// [Repo.StoreOne] or [Repo.PassTo] decodes the same way and is left
// untouched). No target, a nil target, a target of another table and two
// targets for one entity are a *ValidationError.
func (t *Table) Decoder(targets []*Target) (*Decoder, error) {
	rt, errs := newRouter(t, targets, true, false)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Decoder{rt: rt}, nil
}

// Decode decodes item into its entity's Go value (a T for a target made
// from a *Repo[T]) and returns it with the entity type: the item's entity
// type attribute or, for an item without one, the entity whose target
// recognises its key ([Schema].MatchKeys). When no target accepts the
// item, v is nil and err is an *UnknownTypeError, and entity is still the
// item's type ("" when it has none), so that a caller can pass over the
// types it knows, such as the library's own ([UniqueGuardType],
// [SequenceType]). An item that does not decode is the entity's decode
// error.
func (d *Decoder) Decode(item map[string]types.AttributeValue) (entity string, v any, err error) {
	tg, typ, ambiguous := d.rt.target(item)
	if tg == nil {
		t := d.rt.t
		return typ, nil, &UnknownTypeError{Type: typ, Ambiguous: ambiguous, Key: t.primaryKeyOf(item), keys: t.keyNames(), in: "decode"}
	}
	v, err = tg.image(item)
	return typ, v, err
}
