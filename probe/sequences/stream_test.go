package sequences_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/streams"
)

// Random writes on a table with a stream; replaying the typed changes
// (library items included) rebuilds the table exactly, and each change's
// old image is the previous change's new image of that key.
func TestStreamReplayRebuildsTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := ddblocal.Shared(t)
	plain := srv.Client()
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(plain, name)
	repo := singletable.MustBind(tbl, UItems)
	if err := tbl.CreateTable(ctx, func(o *singletable.CreateTableOptions) { o.Stream = types.StreamViewTypeNewAndOldImages }); err != nil {
		t.Fatal(err)
	}
	ddblocal.DeleteTableOnCleanup(t, plain, name)
	sc := srv.StreamsClient()
	arn, err := streams.LatestARN(ctx, sc, name)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(21, 1))
	state := wstate{}
	for i := 0; i < 200; i++ {
		o := genWOp(rng)
		o.Lost = false
		_ = runW(ctx, tbl, repo, state, o)
		state, _ = readStateP(t, plain, name)
	}
	changes, err := tbl.Changes([]*singletable.Target{repo.Member()}, func(o *singletable.ChangeOptions) { o.LibraryItems = true })
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		typed any
		raw   map[string]types.AttributeValue
	}
	replay := map[string]entry{}
	n := 0
	err = streams.NewReader(sc, arn).Read(ctx, func(ctx context.Context, recs []singletable.StreamRecord) error {
		return changes.Handle(ctx, recs, func(_ context.Context, ch singletable.Change) error {
			n++
			k := s(ch.Record.Keys["PK"]) + "|" + s(ch.Record.Keys["SK"])
			prev, had := replay[k]
			if ch.Kind != singletable.ChangeInsert {
				if !had {
					t.Errorf("%s %s without a previous image", ch.Kind, k)
				} else if ch.Library {
					if fmt.Sprint(prev.raw) != fmt.Sprint(ch.Record.OldImage) && !reflect.DeepEqual(prev.raw, ch.Record.OldImage) {
						t.Errorf("%s %s: old image %v, previous new %v", ch.Kind, k, ch.Record.OldImage, prev.raw)
					}
				} else if !reflect.DeepEqual(prev.typed, ch.Old) {
					t.Errorf("%s %s: old %+v, previous new %+v", ch.Kind, k, ch.Old, prev.typed)
				}
			} else if had {
				t.Errorf("INSERT %s over a live item", k)
			}
			if ch.Kind == singletable.ChangeRemove {
				delete(replay, k)
			} else {
				replay[k] = entry{typed: ch.New, raw: ch.Record.NewImage}
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	raw := rawScan(t, plain, name)
	if len(raw) != len(replay) {
		t.Errorf("table has %d items, replay %d", len(raw), len(replay))
	}
	for _, it := range raw {
		k := s(it["PK"]) + "|" + s(it["SK"])
		e, ok := replay[k]
		if !ok {
			t.Errorf("%s not in replay", k)
			continue
		}
		if !reflect.DeepEqual(e.raw, it) {
			t.Errorf("%s: replay %v, table %v", k, e.raw, it)
		}
		if s(it["EntityType"]) == "UItem" {
			got := state[s(it["ID"])]
			if !reflect.DeepEqual(e.typed, got) {
				t.Errorf("%s: typed replay %+v, Get %+v", k, e.typed, got)
			}
		}
	}
	t.Logf("%d changes replayed, %d items", n, len(raw))
}
