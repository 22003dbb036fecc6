package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// TestBadInputBeforeNetwork: each bad input is a typed error and no request
// reaches DynamoDB.
func TestBadInputBeforeNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, users, skills, c := skillsTable(t)
	big := strings.Repeat("x", 400*1024)
	cases := []struct {
		name string
		run  func() error
		as   any
	}{
		{"empty partition key part", func() error { _, err := users.Get(ctx, User{}); return err }, new(*singletable.KeyError)},
		{"empty sort key part", func() error { _, err := skills.Get(ctx, UserSkill{Username: "john"}); return err }, new(*singletable.KeyError)},
		{"create with empty key", func() error { _, err := skills.Create(ctx, UserSkill{SkillName: "go"}); return err }, new(*singletable.KeyError)},
		{"delete with empty key", func() error { _, err := skills.Delete(ctx, UserSkill{Username: "john"}); return err }, new(*singletable.KeyError)},
		{"unknown field in update", func() error {
			_, err := users.Update(User{Username: "john"}).Set("Nope", 1).Run(ctx)
			return err
		}, new(*singletable.ValidationError)},
		{"wrong type in update", func() error {
			_, err := users.Update(User{Username: "john"}).Set("Name", 42).Run(ctx)
			return err
		}, new(*singletable.ValidationError)},
		{"update of a key field", func() error {
			_, err := users.Update(User{Username: "john"}).Set("Username", "jim").Run(ctx)
			return err
		}, new(*singletable.ValidationError)},
		{"unknown projection field", func() error {
			_, err := users.Get(ctx, User{Username: "john"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Nope"} })
			return err
		}, new(*singletable.ValidationError)},
		{"item over 400 KB", func() error { _, err := users.Put(ctx, User{Username: "john", Name: big}); return err }, new(*singletable.ValidationError)},
		{"sort condition on a non-key attribute", func() error {
			_, err := skills.Query(UserSkill{Username: "john"}).Where("Years", singletable.Ge, nil).Collect(ctx)
			return err
		}, new(*singletable.ValidationError)},
		{"sort condition value of the wrong type", func() error {
			_, err := skills.QueryIndex("GSI2", UserSkill{SkillName: "go", Level: "Expert"}).Where("Years", singletable.Ge, "five").Collect(ctx)
			return err
		}, new(*singletable.ValidationError)},
		{"sort condition value out of range", func() error {
			_, err := skills.QueryIndex("GSI2", UserSkill{SkillName: "go", Level: "Expert"}).Where("Years", singletable.Ge, 2.5).Collect(ctx)
			return err
		}, new(*singletable.ValidationError)},
		{"sort condition on an unknown field", func() error {
			_, err := skills.Query(UserSkill{Username: "john"}).Between("Skil", "a", "b").Collect(ctx)
			return err
		}, new(*singletable.ValidationError)},
		{"unknown index", func() error {
			_, err := skills.QueryIndex("GSI9", UserSkill{SkillName: "go"}).Collect(ctx)
			return err
		}, new(*singletable.ValidationError)},
		{"missing index partition field", func() error {
			_, err := skills.QueryIndex("GSI2", UserSkill{SkillName: "go"}).Collect(ctx)
			return err
		}, new(*singletable.KeyError)},
		{"key over DynamoDB's size limit", func() error {
			_, err := skills.Get(ctx, UserSkill{Username: "john", SkillName: strings.Repeat("s", 1100)})
			return err
		}, new(*singletable.KeyError)},
		{"bad cursor", func() error {
			_, err := skills.Query(UserSkill{Username: "john"}).After("%%%").Page(ctx)
			if !errors.Is(err, singletable.ErrInvalidCursor) {
				return errors.New("not ErrInvalidCursor")
			}
			return nil
		}, nil},
		{"consistent read on a GSI", func() error {
			_, err := skills.QueryIndex("GSI1", UserSkill{SkillName: "go"}, func(o *singletable.ReadOptions) { o.ConsistentRead = true }).Collect(ctx)
			return err
		}, new(*singletable.ValidationError)},
	}
	for _, tc := range cases {
		err := tc.run()
		if tc.as == nil {
			assert.NoError(t, err, tc.name)
			continue
		}
		require.Error(t, err, tc.name)
		assert.True(t, errors.As(err, tc.as), "%s: got %T %v", tc.name, err, err)
		assert.True(t, strings.HasPrefix(err.Error(), "singletable:"), "%s: %v", tc.name, err)
	}
	assert.Zero(t, c.requests.Load(), "requests sent for bad input")
	outcomes := map[string]int{}
	for _, tc := range cases {
		var ve *singletable.ValidationError
		var ke *singletable.KeyError
		switch err := tc.run(); {
		case errors.As(err, &ke):
			outcomes["*KeyError"]++
		case errors.As(err, &ve):
			outcomes["*ValidationError"]++
		case tc.as == nil:
			outcomes["ErrInvalidCursor"]++
		}
	}
	reportInputs(inputRow{Suite: "invalid requests (empty or oversized keys, unknown fields, wrong types, 400 KB+ items, bad sort conditions, unknown indexes, bad cursors)",
		Tried: len(cases), Outcomes: fmt.Sprintf("%d *ValidationError, %d *KeyError, %d ErrInvalidCursor; %d requests sent",
			outcomes["*ValidationError"], outcomes["*KeyError"], outcomes["ErrInvalidCursor"], c.requests.Load())})
}

func TestKeyErrorNamesFields(t *testing.T) {
	t.Parallel()
	_, err := singletable.MustBind(singletable.NewTable(nil, "offline"), UserSkills).Get(context.Background(), UserSkill{})
	var ke *singletable.KeyError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, "UserSkill", ke.Entity)
	assert.Equal(t, []string{"Username"}, ke.Missing)
	assert.Contains(t, err.Error(), "UserSkill")
	assert.Contains(t, err.Error(), "Username")
}

func TestDefineErrors(t *testing.T) {
	type S struct {
		A string
		B int
		C []string
		D struct{ X int }
		T bool
		//lint:ignore U1000 an unexported field, which Define must ignore
		inner string
	}
	cases := []struct {
		name   string
		schema singletable.Schema[S]
		want   string // in the error text
	}{
		{"no type", singletable.Schema[S]{PK: "A#{A}"}, "Type is empty"},
		{"no pk", singletable.Schema[S]{Type: "S"}, "partition key template is empty"},
		{"unknown field", singletable.Schema[S]{Type: "S", PK: "A#{Nope}"}, `unknown field "Nope"`},
		{"unexported field", singletable.Schema[S]{Type: "S", PK: "A#{inner}"}, `unknown field "inner"`},
		{"slice key", singletable.Schema[S]{Type: "S", PK: "A#{C}"}, "field C cannot be part of a key"},
		{"struct key", singletable.Schema[S]{Type: "S", PK: "A#{D}"}, "field D cannot be part of a key"},
		{"adjacent placeholders", singletable.Schema[S]{Type: "S", PK: "A#{A}{B}"}, "bad key template"},
		{"no delimiter after placeholder", singletable.Schema[S]{Type: "S", PK: "A#{A}x"}, "bad key template"},
		{"unclosed brace", singletable.Schema[S]{Type: "S", PK: "A#{A"}, "bad key template"},
		{"duplicate index", singletable.Schema[S]{Type: "S", PK: "A#{A}", SK: "B", Indexes: []singletable.IndexSchema[S]{
			{Name: "G", PK: "X#{A}"}, {Name: "G", PK: "Y#{A}"}}}, "duplicate index name"},
		{"index without name", singletable.Schema[S]{Type: "S", PK: "A#{A}", Indexes: []singletable.IndexSchema[S]{{PK: "X#{A}"}}}, "no Name"},
		{"index both kinds", singletable.Schema[S]{Type: "S", PK: "A#{A}", Indexes: []singletable.IndexSchema[S]{
			{Name: "G", PK: "X#{A}", PartitionAttrs: []string{"A"}}}}, "index G: PartitionAttrs given to a templated index: set MultiAttribute"},
		{"multi-attribute keys without the kind", singletable.Schema[S]{Type: "S", PK: "A#{A}", Indexes: []singletable.IndexSchema[S]{
			{Name: "G", SortAttrs: []string{"B"}}}}, "index G: SortAttrs given to a templated index"},
		{"multi-attribute index given templated fields", singletable.Schema[S]{Type: "S", PK: "A#{A}", Indexes: []singletable.IndexSchema[S]{
			{Name: "G", MultiAttribute: true, PartitionAttrs: []string{"A"}, SK: "X#{A}", PKAttr: "P", When: func(S) bool { return true }, Shards: 4}}},
			"index G: SK, PKAttr, When, Shards given to a multi-attribute index (MultiAttribute)"},
		{"multi-attribute index without attributes", singletable.Schema[S]{Type: "S", PK: "A#{A}", Indexes: []singletable.IndexSchema[S]{
			{Name: "G", MultiAttribute: true}}}, "index G: multi-attribute keys take 1-4 partition"},
		{"templated index without a template", singletable.Schema[S]{Type: "S", PK: "A#{A}", Indexes: []singletable.IndexSchema[S]{
			{Name: "G", PKAttr: "P"}}}, "index G PK: partition key template is empty"},
		{"index unknown field", singletable.Schema[S]{Type: "S", PK: "A#{A}", Indexes: []singletable.IndexSchema[S]{
			{Name: "G", PK: "X#{Zed}"}}}, `index G GPK: unknown field "Zed"`},
		{"too many multi attrs", singletable.Schema[S]{Type: "S", PK: "A#{A}", Indexes: []singletable.IndexSchema[S]{
			{Name: "G", MultiAttribute: true, PartitionAttrs: []string{"A", "B", "T", "A", "B"}}}}, "1-4 partition"},
		{"multi attr of bad type", singletable.Schema[S]{Type: "S", PK: "A#{A}", Indexes: []singletable.IndexSchema[S]{
			{Name: "G", MultiAttribute: true, PartitionAttrs: []string{"C"}}}}, "cannot be a multi-attribute key"},
		{"when without fields", singletable.Schema[S]{Type: "S", PK: "A#{A}", Indexes: []singletable.IndexSchema[S]{
			{Name: "G", PK: "X#{A}", When: func(S) bool { return true }}}}, "WhenFields"},
		{"templated key on a number field's own attribute", singletable.Schema[S]{Type: "S", PK: "A#{A}", Indexes: []singletable.IndexSchema[S]{
			{Name: "G", PK: "{B}", PKAttr: "B"}}},
			`field B is stored as attribute "B", index G's partition key attribute: a templated key is a string and the field is a int: declare a multi-attribute index (IndexSchema.MultiAttribute) with the field in PartitionAttrs/SortAttrs`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := singletable.Define(tc.schema)
			var ve *singletable.ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Panics(t, func() { singletable.MustDefine(singletable.Schema[S]{Type: "S"}) })
	_, err := singletable.Define(singletable.Schema[int]{Type: "I", PK: "X"})
	assert.Error(t, err)
}

func TestBindConflicts(t *testing.T) {
	type A struct{ ID string }
	type B struct{ ID string }
	tbl := singletable.NewTable(nil, "offline")
	ea := singletable.MustDefine(singletable.Schema[A]{Type: "A", PK: "A#{ID}", SK: "A", Indexes: []singletable.IndexSchema[A]{{Name: "G", PK: "X#{ID}", SK: "Y"}}})
	eb := singletable.MustDefine(singletable.Schema[B]{Type: "B", PK: "B#{ID}", SK: "B", Indexes: []singletable.IndexSchema[B]{{Name: "G", MultiAttribute: true, PartitionAttrs: []string{"ID"}}}})
	same := singletable.MustDefine(singletable.Schema[B]{Type: "A", PK: "B#{ID}", SK: "B"})
	noSK := singletable.MustDefine(singletable.Schema[B]{Type: "C", PK: "B#{ID}"})
	_, err := singletable.Bind(tbl, ea)
	require.NoError(t, err)
	_, err = singletable.Bind(tbl, eb)
	assert.ErrorContains(t, err, "key attributes differ")
	_, err = singletable.Bind(tbl, same)
	assert.ErrorContains(t, err, "already bound")
	_, err = singletable.Bind(tbl, noSK)
	assert.ErrorContains(t, err, "no SK template")
}

// A dynamodbav tag whose layout= option the format table refuses is a
// *ValidationError at Define naming the entity, the field and why, even
// for a field no key holds; before, the option was dropped and the time
// stored in the default format.
func TestDefineRefusesBadTagLayout(t *testing.T) {
	type Ev struct {
		ID string
		At time.Time `dynamodbav:"at,layout=Jan 2 2006"`
	}
	_, err := singletable.Define(singletable.Schema[Ev]{Type: "Ev", PK: "E#{ID}"})
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Ev", ve.Entity)
	assert.Equal(t, "At", ve.Field)
	assert.Contains(t, ve.Reason, "layout=")
	require.Error(t, ve.Err, "the layout's own error")
	assert.Contains(t, err.Error(), ve.Err.Error())

	type Ok struct {
		ID string
		At time.Time `dynamodbav:"at,layout=2006-01-02T15:04:05"`
	}
	_, err = singletable.Define(singletable.Schema[Ok]{Type: "Ok", PK: "E#{ID}"})
	assert.NoError(t, err)
}
