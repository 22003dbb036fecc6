package skills

import (
	"context"
	"errors"
	"fmt"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/streams"
)

// EntityCount is how many items of one entity the table holds (users,
// skills), kept up to date from the table's stream by [Store.CountChange]
// rather than by the writes themselves: registering a user stays one
// request, and the count follows within the stream's delay.
type EntityCount struct {
	Entity string `dynamodbav:"CountedEntity"`
	Count  int    `dynamodbav:"ItemCount"`
}

// EntityCounts declares the EntityCount entity: one item per counted
// entity, PK COUNT#<entity>, SK COUNT.
var EntityCounts = singletable.MustDefine(singletable.Schema[EntityCount]{
	Type: "EntityCount",
	PK:   "COUNT#{Entity}",
	SK:   "COUNT",
})

// Changes returns the decoder of the table's stream records into typed
// changes of users, skills and counts. The table needs a stream with
// both images (CreateTableOptions.Stream = NEW_AND_OLD_IMAGES).
func (st *Store) Changes() *streams.Changes {
	c, err := streams.NewChanges(st.Table, []*singletable.Target{st.Users.Target(), st.Skills.Target(), st.Counts.Target()})
	if err != nil {
		panic(err) // the targets are the store's own: a programming error
	}
	return c
}

// CountChange applies one change to the per-entity counts: an inserted
// user or skill adds one to its entity's count, a removed one takes one
// away (ADD, so concurrent handlers of different shards do not lose
// updates); modifications and the counts' own changes leave them as they
// are. A change handled twice counts twice: hand each change on once, as
// the streams package's reader does with its checkpoint and Lambda does
// with ReportBatchItemFailures.
func (st *Store) CountChange(ctx context.Context, ch streams.Change) error {
	if ch.Entity == EntityCounts.Name() {
		return nil
	}
	delta := 0
	switch ch.Kind {
	case streams.ChangeInsert:
		delta = 1
	case streams.ChangeRemove:
		delta = -1
	}
	if delta == 0 {
		return nil
	}
	_, err := st.Counts.Update(EntityCount{Entity: ch.Entity}).Add("Count", delta).Upsert().Run(ctx)
	if err != nil {
		return fmt.Errorf("count %s %s: %w", ch.Kind, ch.Entity, err)
	}
	return nil
}

// ItemCounts returns the per-entity counts kept by [Store.CountChange]: the
// entity type names (User, UserSkill) with their counts, zero for an
// entity with no count yet.
func (st *Store) ItemCounts(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, e := range []string{Users.Name(), UserSkills.Name()} {
		c, err := st.Counts.Get(ctx, EntityCount{Entity: e})
		if err != nil && !errors.Is(err, singletable.ErrNotFound) {
			return nil, err
		}
		out[e] = c.Count
	}
	return out, nil
}
