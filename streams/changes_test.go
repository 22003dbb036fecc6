package streams_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/streams"
)

// Subscriber has a unique email, a version and a TTL: its removals by
// TTL leave guards to release.
type Subscriber struct {
	ID      string    `dynamodbav:"ID"`
	Email   string    `dynamodbav:"Email,omitempty"`
	Name    string    `dynamodbav:"Name"`
	Version int       `dynamodbav:"Version"`
	Expires time.Time `dynamodbav:"Expires"`
}

var Subscribers = singletable.MustDefine(singletable.Schema[Subscriber]{
	Type: "Subscriber", PK: "SUB#{ID}", SK: "SUB",
	Unique: []singletable.Unique{{Fields: []string{"Email"}}}, Version: "Version", TTL: "Expires",
})

// Memo is plain: its batch writes are BatchWriteItem requests.
type Memo struct {
	ID   string `dynamodbav:"ID"`
	Text string `dynamodbav:"Text"`
}

var Memos = singletable.MustDefine(singletable.Schema[Memo]{Type: "Memo", PK: "MEMO#{ID}", SK: "MEMO"})

// streamTable creates a fresh table with a NEW_AND_OLD_IMAGES stream and
// returns it with its repositories and a reader of its stream.
func streamTable(t *testing.T) (*singletable.Table, *singletable.Repo[Subscriber], *singletable.Repo[Memo], *streams.Reader) {
	t.Helper()
	ctx := context.Background()
	srv := ddblocal.Shared(t)
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(srv.Client(), name)
	subs := singletable.MustBind(tbl, Subscribers)
	memos := singletable.MustBind(tbl, Memos)
	require.NoError(t, tbl.CreateTable(ctx, func(o *singletable.CreateTableOptions) {
		o.Stream = types.StreamViewTypeNewAndOldImages
	}))
	ddblocal.DeleteTableOnCleanup(t, srv.Client(), name)
	sc := srv.StreamsClient()
	arn, err := streams.LatestARN(ctx, sc, name)
	require.NoError(t, err)
	return tbl, subs, memos, streams.NewReader(sc, arn)
}

// UserSkill is a skill of a user, in the skills service's table.
type UserSkill struct {
	Username  string `dynamodbav:"Username"`
	SkillName string `dynamodbav:"SkillName"`
	Level     string `dynamodbav:"ProficiencyLevel"`
}

var UserSkills = singletable.MustDefine(singletable.Schema[UserSkill]{Type: "UserSkill", PK: "USER#{Username}", SK: "SKILL#{SkillName}"})

// ForeignVoter and ForeignCandidate are another service's items, without
// the entity type attribute: recognised by their key shapes.
type ForeignVoter struct {
	Election string `dynamodbav:"election_name"`
	Name     string `dynamodbav:"voter_name"`
}

type ForeignCandidate struct {
	Election string `dynamodbav:"election_name"`
	Name     string `dynamodbav:"candidate_name"`
}

var (
	ForeignVoters = singletable.MustDefine(singletable.Schema[ForeignVoter]{
		Type: "VOTER", PK: "ELECTION#{Election}", SK: "VOTER#{Name}", MatchKeys: true,
	})
	ForeignCandidates = singletable.MustDefine(singletable.Schema[ForeignCandidate]{
		Type: "CANDIDATE", PK: "ELECTION#{Election}", SK: "CANDIDATE#{Name}", MatchKeys: true,
	})
)

// newTable returns a fresh table bound by bind, without a stream, created
// in DynamoDB Local and deleted when the test ends.
func newTable(t *testing.T, bind func(*singletable.Table)) *singletable.Table {
	t.Helper()
	srv := ddblocal.Shared(t)
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(srv.Client(), name)
	bind(tbl)
	require.NoError(t, tbl.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, srv.Client(), name)
	return tbl
}

// readChanges reads every record the stream holds now and decodes it.
func readChanges(t *testing.T, r *streams.Reader, changes *streams.Changes) []streams.Change {
	t.Helper()
	var out []streams.Change
	err := r.Read(context.Background(), func(ctx context.Context, recs []streams.Record) error {
		return changes.Handle(ctx, recs, func(_ context.Context, ch streams.Change) error {
			out = append(out, ch)
			return nil
		})
	})
	require.NoError(t, err)
	return out
}

// event is what a test expects of one change.
type event struct {
	kind     streams.ChangeKind
	entity   string
	old, new any
}

func eventsOf(chs []streams.Change) []event {
	out := make([]event, len(chs))
	for i, ch := range chs {
		out[i] = event{ch.Kind, ch.Entity, ch.Old, ch.New}
	}
	return out
}

// Every kind of write through the library yields exactly one typed event
// per change of an entity's item, with the images the library returned
// (and Get decodes); the guard items its writes touch are skipped.
func TestChangesOneTypedEventPerWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, subs, memos, reader := streamTable(t)
	changes, err := streams.NewChanges(tbl, []*singletable.Target{subs.Target(), memos.Target()})
	require.NoError(t, err)
	var want []event

	// Create, Update, Put (a new unique value: guards swap), Delete.
	a1, err := subs.Create(ctx, Subscriber{ID: "a1", Email: "a1@example.com", Name: "Ann"})
	require.NoError(t, err)
	want = append(want, event{streams.ChangeInsert, "Subscriber", nil, a1})
	a1b, err := subs.Update(Subscriber{ID: "a1"}).Set("Name", "Anna").Run(ctx)
	require.NoError(t, err)
	want = append(want, event{streams.ChangeModify, "Subscriber", a1, a1b})
	a1c := a1b
	a1c.Email = "anna@example.com"
	a1c, err = subs.Put(ctx, a1c)
	require.NoError(t, err)
	want = append(want, event{streams.ChangeModify, "Subscriber", a1b, a1c})

	// A transaction: a create and a memo.
	require.NoError(t, singletable.Tx(ctx, []singletable.WriteOp{
		subs.CreateOp(Subscriber{ID: "b2", Name: "Bob"}),
		memos.PutOp(Memo{ID: "m0", Text: "in a transaction"}),
	}))
	b2, err := subs.Get(ctx, Subscriber{ID: "b2"})
	require.NoError(t, err)
	want = append(want, event{streams.ChangeInsert, "Subscriber", nil, b2},
		event{streams.ChangeInsert, "Memo", nil, Memo{ID: "m0", Text: "in a transaction"}})

	// A batch of 30 puts (two BatchWriteItem requests), then a batch of
	// deletes and a replacement.
	var ops []singletable.WriteOp
	for i := range 30 {
		m := Memo{ID: "m" + string(rune('a'+i/26)) + string(rune('a'+i%26)), Text: "batch"}
		ops = append(ops, memos.PutOp(m))
		want = append(want, event{streams.ChangeInsert, "Memo", nil, m})
	}
	require.NoError(t, singletable.BatchWrite(ctx, ops))
	require.NoError(t, singletable.BatchWrite(ctx, []singletable.WriteOp{
		memos.DeleteOp(Memo{ID: "maa"}),
		memos.PutOp(Memo{ID: "mab", Text: "replaced"}),
	}))
	want = append(want, event{streams.ChangeRemove, "Memo", Memo{ID: "maa", Text: "batch"}, nil},
		event{streams.ChangeModify, "Memo", Memo{ID: "mab", Text: "batch"}, Memo{ID: "mab", Text: "replaced"}})

	old, err := subs.Delete(ctx, Subscriber{ID: "a1"})
	require.NoError(t, err)
	require.Equal(t, a1c, old)
	want = append(want, event{streams.ChangeRemove, "Subscriber", a1c, nil})

	got := readChanges(t, reader, changes)
	// One shard holds every record in write order, except that the items
	// of one transaction or one batch request come in no promised order:
	// compare as multisets, then the order of each item's own changes.
	assert.ElementsMatch(t, want, eventsOf(got))
	require.Len(t, got, len(want))
	var a1Kinds []streams.ChangeKind
	for _, ch := range got {
		assert.False(t, ch.TTL)
		assert.False(t, ch.Library)
		if s, ok := ch.Value().(Subscriber); ok && s.ID == "a1" {
			a1Kinds = append(a1Kinds, ch.Kind)
		}
	}
	assert.Equal(t, []streams.ChangeKind{"INSERT", "MODIFY", "MODIFY", "REMOVE"}, a1Kinds)

	// Read again: nothing new, nothing repeated.
	assert.Empty(t, readChanges(t, reader, changes))
}

// The library's own items are skipped by default and delivered as their
// own kinds when asked: unique guards and a sequence's counter.
func TestChangesLibraryItems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, subs, memos, reader := streamTable(t)
	_, err := subs.Create(ctx, Subscriber{ID: "c3", Email: "c3@example.com"})
	require.NoError(t, err)
	seq := singletable.NewSequence(tbl, "memos")
	n, err := seq.Append(ctx, func(n int64) ([]singletable.WriteOp, error) {
		return []singletable.WriteOp{memos.CreateOp(Memo{ID: "seq1", Text: "first"})}, nil
	})
	require.NoError(t, err)
	require.EqualValues(t, 1, n)

	all, err := streams.NewChanges(tbl, []*singletable.Target{subs.Target(), memos.Target()}, func(o *streams.ChangeOptions) { o.LibraryItems = true })
	require.NoError(t, err)
	got := readChanges(t, reader, all)
	kinds := map[string]int{}
	for _, ch := range got {
		kinds[ch.Entity]++
		assert.Equal(t, ch.Entity == singletable.UniqueGuardType || ch.Entity == singletable.SequenceType, ch.Library, ch.Entity)
		if ch.Library {
			assert.Nil(t, ch.Old)
			assert.Nil(t, ch.New)
			assert.NotNil(t, ch.Record.NewImage)
		}
	}
	assert.Equal(t, map[string]int{"Subscriber": 1, singletable.UniqueGuardType: 1, singletable.SequenceType: 1, "Memo": 1}, kinds)

	// The same records without LibraryItems: the entities' changes only.
	reread := streams.NewReader(srvStreams(t), streamARN(t, tbl))
	typed, err := streams.NewChanges(tbl, []*singletable.Target{subs.Target(), memos.Target()})
	require.NoError(t, err)
	var entities []string
	for _, ch := range readChanges(t, reread, typed) {
		entities = append(entities, ch.Entity)
	}
	assert.ElementsMatch(t, []string{"Subscriber", "Memo"}, entities)
}

func srvStreams(t *testing.T) streams.Client { return ddblocal.Shared(t).StreamsClient() }

func streamARN(t *testing.T, tbl *singletable.Table) string {
	arn, err := streams.LatestARN(context.Background(), srvStreams(t), tbl.Name())
	require.NoError(t, err)
	return arn
}

// An item no target accepts is an *UnknownTypeError naming it, or
// skipped with SkipUnknown; a record without images cannot be typed; bad
// targets are refused when the decoder is made.
func TestChangesUnknownAndInvalid(t *testing.T) {
	t.Parallel()
	tbl := singletable.NewTable(nil, "t")
	subs := singletable.MustBind(tbl, Subscribers)
	memos := singletable.MustBind(tbl, Memos)
	changes, err := streams.NewChanges(tbl, []*singletable.Target{subs.Target()})
	require.NoError(t, err)
	memo := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "MEMO#x"}, "SK": &types.AttributeValueMemberS{Value: "MEMO"},
		"EntityType": &types.AttributeValueMemberS{Value: "Memo"}, "ID": &types.AttributeValueMemberS{Value: "x"},
	}
	rec := streams.Record{EventID: "e1", EventName: "INSERT", SequenceNumber: "100",
		Keys: map[string]types.AttributeValue{"PK": memo["PK"], "SK": memo["SK"]}, NewImage: memo}
	_, ok, err := changes.Decode(rec)
	var ute *singletable.UnknownTypeError
	require.ErrorAs(t, err, &ute)
	assert.False(t, ok)
	assert.Equal(t, "Memo", ute.Type)
	assert.Contains(t, err.Error(), `no target for entity type "Memo" (item {PK=MEMO#x SK=MEMO})`)

	// Handle names the record that failed.
	err = changes.Handle(context.Background(), []streams.Record{rec}, func(context.Context, streams.Change) error { return nil })
	var ce *streams.ChangeError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "100", ce.SequenceNumber)
	require.ErrorAs(t, err, &ute)

	skip, err := streams.NewChanges(tbl, []*singletable.Target{subs.Target()}, func(o *streams.ChangeOptions) { o.SkipUnknown = true })
	require.NoError(t, err)
	_, ok, err = skip.Decode(rec)
	assert.NoError(t, err)
	assert.False(t, ok)

	keysOnly := rec
	keysOnly.NewImage = nil
	_, _, err = changes.Decode(keysOnly)
	assert.ErrorContains(t, err, "the record has no image")

	bad := rec
	bad.EventName = "TRUNCATE"
	_, _, err = changes.Decode(bad)
	assert.ErrorContains(t, err, `unknown event name "TRUNCATE"`)

	other := singletable.NewTable(nil, "other")
	otherMemos := singletable.MustBind(other, Memos)
	var ve *singletable.ValidationError
	_, err = streams.NewChanges(tbl, nil)
	assert.ErrorAs(t, err, &ve)
	_, err = streams.NewChanges(tbl, []*singletable.Target{memos.Target(), memos.Target()})
	assert.ErrorAs(t, err, &ve)
	_, err = streams.NewChanges(tbl, []*singletable.Target{otherMemos.Target()})
	assert.ErrorAs(t, err, &ve)
}

// A change of an item recognised by its key shape (no entity type
// attribute, MatchKeys) names its entity, as a typed item's does: on a
// table that omits the attribute every change is such.
func TestChangesNameUntypedEntity(t *testing.T) {
	t.Parallel()
	for _, omit := range []bool{false, true} {
		tbl := singletable.NewTable(nil, "t", func(o *singletable.TableOptions) {
			o.EntityTypeAttr, o.OmitEntityType = "entity_type", omit
		})
		voters := singletable.MustBind(tbl, ForeignVoters)
		candidates := singletable.MustBind(tbl, ForeignCandidates)
		changes, err := streams.NewChanges(tbl, []*singletable.Target{voters.Target(), candidates.Target()})
		require.NoError(t, err)
		voter := map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "ELECTION#e"}, "SK": &types.AttributeValueMemberS{Value: "VOTER#ann"},
		}
		keys := map[string]types.AttributeValue{"PK": voter["PK"], "SK": voter["SK"]}
		for _, rec := range []streams.Record{
			{EventName: "INSERT", Keys: keys, NewImage: voter},
			{EventName: "REMOVE", Keys: keys, OldImage: voter},
		} {
			ch, ok, err := changes.Decode(rec)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, "VOTER", ch.Entity, "omit %v, %s", omit, rec.EventName)
			assert.Equal(t, ForeignVoter{Election: "e", Name: "ann"}, ch.Value())
		}
	}
}

// ttlRecord makes rec a removal by DynamoDB's time to live, as AWS
// documents its records. DynamoDB Local's own expiries carry neither
// the event name REMOVE nor that identity; a removal made with DeleteItem
// alone (the guards stay, as after a real expiry) with TTL's identity is
// the record DynamoDB sends.
func ttlRecord(rec streams.Record) streams.Record {
	rec.UserIdentity = &streams.Identity{PrincipalID: "dynamodb.amazonaws.com", Type: "Service"}
	return rec
}

// rawDelete deletes an item as TTL does: the item alone, no guard.
func rawDelete(t *testing.T, tbl *singletable.Table, pk, sk string) {
	t.Helper()
	_, err := tbl.Client().DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(tbl.Name()),
		Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk}}})
	require.NoError(t, err)
}

// A removal by TTL is recognised, and ReleaseExpiredGuards frees the
// expired item's unique values (so another item can take them), never a
// guard that a live item holds, and only for TTL removals.
func TestReleaseExpiredGuards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, subs, _, reader := streamTable(t)
	changes, err := streams.NewChanges(tbl, []*singletable.Target{subs.Target()})
	require.NoError(t, err)
	// The expiry is in the future: DynamoDB Local 3.3.1 deletes expired
	// items itself, with stream records it names "UNKNOWN_TO_SDK_VERSION"
	// and without TTL's identity, which would race the simulated expiry.
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	_, err = subs.Create(ctx, Subscriber{ID: "old", Email: "taken@example.com", Expires: exp})
	require.NoError(t, err)
	_, err = subs.Create(ctx, Subscriber{ID: "back", Email: "back@example.com", Expires: exp})
	require.NoError(t, err)
	_, err = subs.Create(ctx, Subscriber{ID: "moved", Email: "moved@example.com", Expires: exp})
	require.NoError(t, err)
	_, err = subs.Create(ctx, Subscriber{ID: "gone", Email: "gone@example.com"})
	require.NoError(t, err)

	rawDelete(t, tbl, "SUB#old", "SUB")
	rawDelete(t, tbl, "SUB#back", "SUB")
	rawDelete(t, tbl, "SUB#moved", "SUB")
	// "back" is created again under the same key with the same email
	// before its expiry is handled: its guard is live again.
	_, err = subs.Create(ctx, Subscriber{ID: "back", Email: "back@example.com"})
	require.NoError(t, err)
	// "moved" is created again under the same key with another email:
	// nobody holds moved@example.com any more, and its guard must go.
	_, err = subs.Create(ctx, Subscriber{ID: "moved", Email: "other@example.com"})
	require.NoError(t, err)
	_, err = subs.Delete(ctx, Subscriber{ID: "gone"}) // an ordinary delete
	require.NoError(t, err)
	_, err = subs.Create(ctx, Subscriber{ID: "new", Email: "taken@example.com"})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists, "the expired item's guard still holds the value")

	released := map[string]int{}
	err = reader.Read(ctx, func(ctx context.Context, recs []streams.Record) error {
		for _, rec := range recs {
			if rec.EventName == "REMOVE" && rec.NewImage == nil && rec.OldImage["ID"] != nil {
				id := rec.OldImage["ID"].(*types.AttributeValueMemberS).Value
				if id != "gone" {
					rec = ttlRecord(rec)
				}
			}
			ch, ok, err := changes.Decode(rec)
			if err != nil || !ok || ch.Kind != streams.ChangeRemove {
				if err != nil {
					return err
				}
				continue
			}
			id := ch.Old.(Subscriber).ID
			assert.Equal(t, id != "gone", ch.TTL, id)
			n, err := changes.ReleaseExpiredGuards(ctx, ch)
			if err != nil {
				return err
			}
			released[id] += n
			// Handling the record again changes nothing, and counts
			// nothing: the guard it deleted is gone.
			n, err = changes.ReleaseExpiredGuards(ctx, ch)
			if err != nil {
				return err
			}
			assert.Zero(t, n, "%s handled again", id)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"old": 1, "back": 0, "moved": 1, "gone": 0}, released)

	// The expired values are free; the live ones are still guarded.
	_, err = subs.Create(ctx, Subscriber{ID: "new", Email: "taken@example.com"})
	require.NoError(t, err)
	_, err = subs.Create(ctx, Subscriber{ID: "new2", Email: "moved@example.com"})
	require.NoError(t, err)
	_, err = subs.Create(ctx, Subscriber{ID: "thief2", Email: "other@example.com"})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	_, err = subs.Create(ctx, Subscriber{ID: "thief", Email: "back@example.com"})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
}

// TeamHandle's unique tuple holds a field stored only in the key.
type TeamHandle struct {
	Team    string    `dynamodbav:"Team"`
	ID      string    `dynamodbav:"ID"`
	Handle  string    `dynamodbav:"Handle,omitempty"`
	Expires time.Time `dynamodbav:"Expires"`
}

// An expired item's guard of a tuple with a key-only field is released
// unless the item re-created under its key holds the same tuple: the
// key-only field is the same for any item under that key, so the stored
// fields decide.
func TestReleaseExpiredGuardsKeyOnlyTuple(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	handles := singletable.MustDefine(singletable.Schema[TeamHandle]{Type: "TeamHandle", PK: "TEAM#{Team}", SK: "H#{ID}",
		KeyOnly: []string{"Team"}, TTL: "Expires", Unique: []singletable.Unique{{Fields: []string{"Team", "Handle"}}}})
	var repo *singletable.Repo[TeamHandle]
	tbl := newTable(t, func(tbl *singletable.Table) { repo = singletable.MustBind(tbl, handles) })
	changes, err := streams.NewChanges(tbl, []*singletable.Target{repo.Target()})
	require.NoError(t, err)
	for _, c := range []struct {
		id, again string // again: the handle of the item re-created under the key, "" for none
		released  int
	}{{"1", "", 1}, {"2", "h2", 0}, {"3", "other", 1}} {
		_, err := repo.Create(ctx, TeamHandle{Team: "t", ID: c.id, Handle: "h" + c.id, Expires: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "TEAM#t"}, "SK": &types.AttributeValueMemberS{Value: "H#" + c.id}}
		del, err := tbl.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl.Name()), Key: key, ReturnValues: types.ReturnValueAllOld})
		require.NoError(t, err)
		require.NotContains(t, del.Attributes, "Team")
		if c.again != "" {
			_, err = repo.Create(ctx, TeamHandle{Team: "t", ID: c.id, Handle: c.again})
			require.NoError(t, err)
		}
		ch, ok, err := changes.Decode(ttlRecord(streams.Record{EventID: c.id, EventName: "REMOVE", SequenceNumber: c.id, Keys: key, OldImage: del.Attributes}))
		require.NoError(t, err)
		require.True(t, ok)
		n, err := changes.ReleaseExpiredGuards(ctx, ch)
		require.NoError(t, err)
		assert.Equal(t, c.released, n, "item %s re-created with %q", c.id, c.again)
		_, err = repo.Create(ctx, TeamHandle{Team: "t", ID: "x" + c.id, Handle: "h" + c.id})
		if c.released == 1 {
			require.NoError(t, err, "h%s is free again", c.id)
		} else {
			require.ErrorIs(t, err, singletable.ErrAlreadyExists, "h%s is held again", c.id)
		}
	}
}

// Handling the same TTL removal twice releases its guard once and counts
// it once: 1, then 0 (the count is of guards deleted, so counters built on
// it stay right under at-least-once delivery).
func TestReleaseExpiredGuardsCountsOnlyDeleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var subs *singletable.Repo[Subscriber]
	tbl := newTable(t, func(tbl *singletable.Table) { subs = singletable.MustBind(tbl, Subscribers) })
	changes, err := streams.NewChanges(tbl, []*singletable.Target{subs.Target()})
	require.NoError(t, err)
	_, err = subs.Create(ctx, Subscriber{ID: "x", Email: "x@example.com", Expires: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "SUB#x"}, "SK": &types.AttributeValueMemberS{Value: "SUB"}}
	del, err := tbl.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl.Name()), Key: key, ReturnValues: types.ReturnValueAllOld})
	require.NoError(t, err)
	ch, ok, err := changes.Decode(ttlRecord(streams.Record{EventID: "x", EventName: "REMOVE", SequenceNumber: "1", Keys: key, OldImage: del.Attributes}))
	require.NoError(t, err)
	require.True(t, ok)
	var counts []int
	for range 2 {
		n, err := changes.ReleaseExpiredGuards(ctx, ch)
		require.NoError(t, err)
		counts = append(counts, n)
	}
	assert.Equal(t, []int{1, 0}, counts)
	_, err = subs.Create(ctx, Subscriber{ID: "y", Email: "x@example.com"})
	require.NoError(t, err, "the value is free")
}

// RelA (unique Email) and RelB (not unique, an attribute Email too) share
// a key template.
type RelA struct {
	ID    string `dynamodbav:"ID"`
	Email string `dynamodbav:"Email"`
}

type RelB RelA

// An item of another entity created under an expired item's key holds
// none of its unique values, even with an attribute of the same name and
// value: the expired item's guard is released (it stayed claimed for ever).
func TestReleaseExpiredGuardsOtherEntitySameAttr(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var as *singletable.Repo[RelA]
	var bs *singletable.Repo[RelB]
	tbl := newTable(t, func(tbl *singletable.Table) {
		as = singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[RelA]{Type: "RelA", PK: "X#{ID}", SK: "X",
			Unique: []singletable.Unique{{Fields: []string{"Email"}}}}))
		bs = singletable.MustBind(tbl, singletable.MustDefine(singletable.Schema[RelB]{Type: "RelB", PK: "X#{ID}", SK: "X"}))
	})
	changes, err := streams.NewChanges(tbl, []*singletable.Target{as.Target(), bs.Target()})
	require.NoError(t, err)
	_, err = as.Create(ctx, RelA{ID: "1", Email: "e"})
	require.NoError(t, err)
	key := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "X#1"}, "SK": &types.AttributeValueMemberS{Value: "X"}}
	del, err := tbl.Client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl.Name()), Key: key, ReturnValues: types.ReturnValueAllOld})
	require.NoError(t, err)
	_, err = bs.Create(ctx, RelB{ID: "1", Email: "e"})
	require.NoError(t, err)
	ch, ok, err := changes.Decode(ttlRecord(streams.Record{EventID: "1", EventName: "REMOVE", SequenceNumber: "1", Keys: key, OldImage: del.Attributes}))
	require.NoError(t, err)
	require.True(t, ok)
	n, err := changes.ReleaseExpiredGuards(ctx, ch)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	_, err = as.Create(ctx, RelA{ID: "2", Email: "e"})
	require.NoError(t, err, "e is free again: no RelA holds it")
}

// ReleaseExpiredGuards ignores what is not an expiry of a guarded entity.
func TestReleaseExpiredGuardsIgnores(t *testing.T) {
	t.Parallel()
	tbl := singletable.NewTable(failingClient{}, "t")
	subs := singletable.MustBind(tbl, Subscribers)
	memos := singletable.MustBind(tbl, Memos)
	changes, err := streams.NewChanges(tbl, []*singletable.Target{subs.Target(), memos.Target()})
	require.NoError(t, err)
	memo := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "MEMO#x"}, "SK": &types.AttributeValueMemberS{Value: "MEMO"}, "EntityType": &types.AttributeValueMemberS{Value: "Memo"}}
	for _, ch := range []streams.Change{
		{Kind: streams.ChangeRemove, Entity: "Memo", TTL: true, Record: streams.Record{OldImage: memo}},        // no unique fields
		{Kind: streams.ChangeRemove, Entity: "Subscriber", TTL: false, Record: streams.Record{OldImage: memo}}, // not TTL
		{Kind: streams.ChangeModify, Entity: "Subscriber", TTL: true, Record: streams.Record{OldImage: memo}},
		{Kind: streams.ChangeRemove, Entity: "Subscriber", TTL: true}, // no old image
		{Kind: streams.ChangeRemove, Entity: singletable.UniqueGuardType, TTL: true, Library: true, Record: streams.Record{OldImage: memo}},
		{Kind: streams.ChangeRemove, Entity: "Unbound", TTL: true, Record: streams.Record{OldImage: memo}}, // not bound to the table
	} {
		n, err := changes.ReleaseExpiredGuards(context.Background(), ch)
		assert.NoError(t, err)
		assert.Zero(t, n)
	}
}

// failingClient fails every request: a test using it sends none.
type failingClient struct{ singletable.Client }

var errSent = errors.New("no request may be sent")

func (failingClient) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return nil, errSent
}
