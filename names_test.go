package singletable_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
)

// Go names that differ from the stored ones; Title is stored under "Name",
// which is the Go name of another field (stored as "display").
type Article struct {
	Author string            `dynamodbav:"author"`
	ID     string            `dynamodbav:"post_id"`
	Public bool              `dynamodbav:"pub"`
	Title  string            `dynamodbav:"Name"`
	Name   string            `dynamodbav:"display,omitempty"`
	Meta   ArticleMeta       `dynamodbav:"meta"`
	Tags   []string          `dynamodbav:"tg,omitempty"`
	Attrs  map[string]string `dynamodbav:"attrs,omitempty"`
	Secret string            `dynamodbav:"-"`
}

type ArticleMeta struct {
	Views int `dynamodbav:"views"`
}

// A Comment shares Article's partitions: it agrees with Article on Public (both
// "pub") and disagrees on Name ("body" against "display").
type Comment struct {
	Author string `dynamodbav:"author"`
	ID     string `dynamodbav:"cid"`
	Public bool   `dynamodbav:"pub"`
	Name   string `dynamodbav:"body"`
}

var (
	articleEntity = singletable.MustDefine(singletable.Schema[Article]{Type: "Article", PK: "AUTHOR#{Author}", SK: "POST#{ID}",
		Indexes: []singletable.IndexSchema[Article]{{Name: "GSI1", PK: "POST#{ID}", SK: "AUTHOR#{Author}"}}})
	commentEntity = singletable.MustDefine(singletable.Schema[Comment]{Type: "Comment", PK: "AUTHOR#{Author}", SK: "COMMENT#{ID}"})
)

// namesFixture is a table holding ann's three posts and two comments, and
// a count of every request sent to DynamoDB (transactions included).
type namesFixture struct {
	tbl      *singletable.Table
	posts    *singletable.Repo[Article]
	comments *singletable.Repo[Comment]
	raw      *dynamodb.Client
	requests *atomic.Int64
}

func newNamesFixture(t *testing.T) *namesFixture {
	t.Helper()
	ctx := context.Background()
	n := new(atomic.Int64)
	count := middleware.InitializeMiddlewareFunc("countRequests", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		n.Add(1)
		return next.HandleInitialize(ctx, in)
	})
	raw := ddblocal.Shared(t).Client()
	client := dynamodb.New(raw.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error { return s.Initialize.Add(count, middleware.Before) })
	})
	name := ddblocal.TableName(t)
	tbl := singletable.NewTable(client, name)
	f := &namesFixture{tbl: tbl, posts: singletable.MustBind(tbl, articleEntity), comments: singletable.MustBind(tbl, commentEntity), raw: raw, requests: n}
	require.NoError(t, tbl.CreateTable(ctx))
	ddblocal.DeleteTableOnCleanup(t, raw, name)
	for _, p := range []Article{
		{Author: "ann", ID: "1", Public: true, Title: "Hello", Name: "Ann's", Meta: ArticleMeta{Views: 5}, Tags: []string{"go", "db"}, Attrs: map[string]string{"color": "red"}},
		{Author: "ann", ID: "2", Public: false, Title: "Draft", Meta: ArticleMeta{Views: 50}, Tags: []string{"go"}, Attrs: map[string]string{"color": "blue"}},
		{Author: "ann", ID: "3", Public: true, Title: "Name", Name: "Ann"},
	} {
		_, err := f.posts.Create(ctx, p)
		require.NoError(t, err)
	}
	for _, c := range []Comment{{Author: "ann", ID: "c1", Public: true, Name: "Ann"}, {Author: "ann", ID: "c2", Name: "hidden"}} {
		_, err := f.comments.Create(ctx, c)
		require.NoError(t, err)
	}
	n.Store(0)
	return f
}

// rawIDs is what DynamoDB itself returns for ann's partition filtered by
// filter (a stored-name FilterExpression, as a caller of the SDK writes
// it): the ids, in sort key order, of the items of type typ.
func (f *namesFixture) rawIDs(t *testing.T, typ, idAttr, filter string, names map[string]string, values map[string]types.AttributeValue) []string {
	t.Helper()
	names["#pk"], names["#typ"] = "PK", "EntityType"
	if values == nil {
		values = map[string]types.AttributeValue{}
	}
	values[":pk"], values[":typ"] = &types.AttributeValueMemberS{Value: "AUTHOR#ann"}, &types.AttributeValueMemberS{Value: typ}
	out, err := f.raw.Query(context.Background(), &dynamodb.QueryInput{
		TableName:                 aws.String(f.tbl.Name()),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		FilterExpression:          aws.String("#typ = :typ AND (" + filter + ")"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	require.NoError(t, err)
	ids := []string{}
	for _, it := range out.Items {
		ids = append(ids, it[idAttr].(*types.AttributeValueMemberS).Value)
	}
	return ids
}

func (f *namesFixture) queryIDs(t *testing.T, cond expression.ConditionBuilder) []string {
	t.Helper()
	got, err := f.posts.Query(Article{Author: "ann"}).Filter(cond).Collect(context.Background())
	require.NoError(t, err)
	ids := []string{}
	for _, p := range got {
		ids = append(ids, p.ID)
	}
	return ids
}

// A filter names fields by their Go names: each first path element that is
// a Go field becomes its stored attribute; stored names work as they are;
// nested elements, list indexes and map keys stay as written; a Go field
// name wins over another field's stored name spelled the same.
func TestNamesFilterGoNames(t *testing.T) {
	t.Parallel()
	f := newNamesFixture(t)
	v := expression.Value
	s := func(x string) types.AttributeValue { return &types.AttributeValueMemberS{Value: x} }
	bl := func(x bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: x} }
	nm := func(x string) types.AttributeValue { return &types.AttributeValueMemberN{Value: x} }
	cases := []struct {
		name   string
		cond   expression.ConditionBuilder
		want   []string
		filter string // the same filter in stored names, sent raw
		names  map[string]string
		values map[string]types.AttributeValue
	}{
		{"Go name", expression.Name("Public").Equal(v(true)), []string{"1", "3"},
			"#a = :x", map[string]string{"#a": "pub"}, map[string]types.AttributeValue{":x": bl(true)}},
		{"stored name", expression.Name("pub").Equal(v(true)), []string{"1", "3"},
			"#a = :x", map[string]string{"#a": "pub"}, map[string]types.AttributeValue{":x": bl(true)}},
		{"Go name over a stored name", expression.Name("Name").Equal(v("Ann")), []string{"3"},
			"#a = :x", map[string]string{"#a": "display"}, map[string]types.AttributeValue{":x": s("Ann")}},
		{"the field stored as Name, by its Go name", expression.Name("Title").Equal(v("Name")), []string{"3"},
			"#a = :x", map[string]string{"#a": "Name"}, map[string]types.AttributeValue{":x": s("Name")}},
		{"nested path", expression.Name("Meta.views").GreaterThan(v(1)), []string{"1", "2"},
			"#a.#b > :x", map[string]string{"#a": "meta", "#b": "views"}, map[string]types.AttributeValue{":x": nm("1")}},
		{"nested elements stay verbatim", expression.Name("Meta.Views").GreaterThan(v(1)), []string{},
			"#a.#b > :x", map[string]string{"#a": "meta", "#b": "Views"}, map[string]types.AttributeValue{":x": nm("1")}},
		{"list index", expression.Name("Tags[1]").Equal(v("db")), []string{"1"},
			"#a[1] = :x", map[string]string{"#a": "tg"}, map[string]types.AttributeValue{":x": s("db")}},
		{"map key", expression.Name("Attrs.color").Equal(v("blue")), []string{"2"},
			"#a.#b = :x", map[string]string{"#a": "attrs", "#b": "color"}, map[string]types.AttributeValue{":x": s("blue")}},
		{"size and contains", expression.Name("Tags").Size().GreaterThan(v(0)).And(expression.Name("Tags").Contains("go")), []string{"1", "2"},
			"size(#a) > :x AND contains(#a, :y)", map[string]string{"#a": "tg"}, map[string]types.AttributeValue{":x": nm("0"), ":y": s("go")}},
		{"two names in one comparison", expression.Name("Name").Equal(expression.Name("Title")), []string{},
			"#a = #b", map[string]string{"#a": "display", "#b": "Name"}, nil},
		{"entity type attribute", expression.Name("EntityType").Equal(v("Article")), []string{"1", "2", "3"},
			"#a = :x", map[string]string{"#a": "EntityType"}, map[string]types.AttributeValue{":x": s("Article")}},
		{"index key attribute", expression.Name("GSI1PK").Equal(v("POST#2")), []string{"2"},
			"#a = :x", map[string]string{"#a": "GSI1PK"}, map[string]types.AttributeValue{":x": s("POST#2")}},
	}
	for _, c := range cases {
		got := f.queryIDs(t, c.cond)
		assert.Equal(t, c.want, got, c.name)
		assert.Equal(t, c.want, f.rawIDs(t, "Article", "post_id", c.filter, c.names, c.values), c.name+": the raw table")
	}
}

// assertRefused checks that err is a *ValidationError naming name and the
// entity, and that no request was sent.
func (f *namesFixture) assertRefused(t *testing.T, err error, entity, name, what string) {
	t.Helper()
	var ve *singletable.ValidationError
	if assert.ErrorAs(t, err, &ve, what) {
		assert.Equal(t, name, ve.Field, what)
		assert.Contains(t, ve.Entity, entity, what)
		assert.Contains(t, err.Error(), name, what)
	}
	assert.Zero(t, f.requests.Load(), what+": no request sent")
	f.requests.Store(0)
}

// A name that is neither a Go field nor a stored attribute is refused before
// the network, on every path that takes a condition.
func TestNamesUnknownRefused(t *testing.T) {
	t.Parallel()
	f := newNamesFixture(t)
	ctx := context.Background()
	bad := expression.Name("Nope").Equal(expression.Value(1))
	nested := expression.Name("Public").Equal(expression.Value(true)).And(expression.Name("Nope.views").GreaterThan(expression.Value(1)))
	ann := Article{Author: "ann", ID: "1"}

	_, err := f.posts.Query(Article{Author: "ann"}).Filter(bad).Collect(ctx)
	f.assertRefused(t, err, "Article", "Nope", "Query.Filter")
	_, err = f.posts.Query(Article{Author: "ann"}).Filter(nested).Count(ctx)
	f.assertRefused(t, err, "Article", "Nope", "Query.Filter, second operand, nested path")
	_, err = f.posts.QueryIndex("GSI1", Article{ID: "1"}).Filter(bad).Collect(ctx)
	f.assertRefused(t, err, "Article", "Nope", "QueryIndex.Filter")
	_, err = f.posts.Put(ctx, Article{Author: "ann", ID: "1", Title: "x"}, func(o *singletable.WriteOptions) { o.If = bad })
	f.assertRefused(t, err, "Article", "Nope", "Put If")
	_, err = f.posts.Delete(ctx, ann, func(o *singletable.WriteOptions) { o.If = bad })
	f.assertRefused(t, err, "Article", "Nope", "Delete If")
	_, err = f.posts.Update(ann).Set("Title", "x").If(bad).Run(ctx)
	f.assertRefused(t, err, "Article", "Nope", "Update.If")
	_, err = f.posts.Update(Article{Author: "ann", ID: "9"}).Set("Title", "x").Upsert().If(bad).Run(ctx)
	f.assertRefused(t, err, "Article", "Nope", "Update.If, upsert")
	err = singletable.Tx(ctx, []singletable.WriteOp{
		f.comments.PutOp(Comment{Author: "ann", ID: "c9"}),
		f.posts.CheckOp(ann, bad),
	})
	f.assertRefused(t, err, "Article", "Nope", "CheckOp")
	err = singletable.Tx(ctx, []singletable.WriteOp{f.posts.PutOp(Article{Author: "ann", ID: "1"}, func(o *singletable.WriteOptions) { o.If = bad })})
	f.assertRefused(t, err, "Article", "Nope", "PutOp If")

	// A field tagged dynamodbav:"-" is never stored: it says so.
	_, err = f.posts.Query(Article{Author: "ann"}).Filter(expression.Name("Secret").AttributeExists()).Collect(ctx)
	f.assertRefused(t, err, "Article", "Secret", "excluded field")
	assert.ErrorContains(t, err, `excluded by its dynamodbav:"-" tag`)
	// The SDK splits at dots: the path a → b, and "a" is unknown.
	_, err = f.posts.Query(Article{Author: "ann"}).Filter(expression.Name("Meta_views.x").AttributeExists()).Collect(ctx)
	f.assertRefused(t, err, "Article", "Meta_views", "dotted name")

	// Nothing was written by the refused writes.
	got, err := f.posts.Get(ctx, ann)
	require.NoError(t, err)
	assert.Equal(t, "Hello", got.Title)
	_, err = f.comments.Get(ctx, Comment{Author: "ann", ID: "c9"})
	assert.ErrorIs(t, err, singletable.ErrNotFound)
}

// The caller's conditions on writes name Go fields and hold or fail exactly
// as the stored item says.
func TestNamesConditionsGoNames(t *testing.T) {
	t.Parallel()
	f := newNamesFixture(t)
	ctx := context.Background()
	title := func(id string) string {
		t.Helper()
		out, err := f.raw.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.tbl.Name()), Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "AUTHOR#ann"}, "SK": &types.AttributeValueMemberS{Value: "POST#" + id}}})
		require.NoError(t, err)
		if out.Item == nil {
			return "<gone>"
		}
		return out.Item["Name"].(*types.AttributeValueMemberS).Value
	}
	public := expression.Name("Public").Equal(expression.Value(true))

	// Put: post 1 is public, post 2 is not.
	_, err := f.posts.Put(ctx, Article{Author: "ann", ID: "1", Public: true, Title: "put 1"}, func(o *singletable.WriteOptions) { o.If = public })
	require.NoError(t, err)
	_, err = f.posts.Put(ctx, Article{Author: "ann", ID: "2", Title: "put 2"}, func(o *singletable.WriteOptions) { o.If = public })
	assert.ErrorIs(t, err, singletable.ErrConditionFailed)
	assert.Equal(t, []string{"put 1", "Draft"}, []string{title("1"), title("2")})

	// Update.If with a nested path and a stored name.
	_, err = f.posts.Update(Article{Author: "ann", ID: "2"}).Set("Title", "update 2").
		If(expression.Name("Meta.views").GreaterThan(expression.Value(10)).And(expression.Name("pub").Equal(expression.Value(false)))).Run(ctx)
	require.NoError(t, err)
	_, err = f.posts.Update(Article{Author: "ann", ID: "3"}).Set("Title", "update 3").If(expression.Name("Name").Equal(expression.Value("Ann's"))).Run(ctx)
	assert.ErrorIs(t, err, singletable.ErrConditionFailed, "post 3's Name (display) is Ann; Ann's is post 1's")
	assert.Equal(t, []string{"update 2", "Name"}, []string{title("2"), title("3")})

	// CheckOp: the transaction commits only when the check holds.
	tx := func(check Article, id string) error {
		return singletable.Tx(ctx, []singletable.WriteOp{
			f.posts.CheckOp(check, public),
			f.comments.PutOp(Comment{Author: "ann", ID: id}),
		})
	}
	require.NoError(t, tx(Article{Author: "ann", ID: "3"}, "c3"))
	assert.ErrorIs(t, tx(Article{Author: "ann", ID: "2"}, "c4"), singletable.ErrConditionFailed)
	_, err = f.comments.Get(ctx, Comment{Author: "ann", ID: "c3"})
	require.NoError(t, err)
	_, err = f.comments.Get(ctx, Comment{Author: "ann", ID: "c4"})
	assert.ErrorIs(t, err, singletable.ErrNotFound)

	// Delete with If.
	_, err = f.posts.Delete(ctx, Article{Author: "ann", ID: "2"}, func(o *singletable.WriteOptions) { o.If = public })
	assert.ErrorIs(t, err, singletable.ErrConditionFailed)
	_, err = f.posts.Delete(ctx, Article{Author: "ann", ID: "3"}, func(o *singletable.WriteOptions) {
		o.If = expression.Name("Tags").AttributeNotExists().And(expression.Name("SK").BeginsWith("POST#"))
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"update 2", "<gone>"}, []string{title("2"), title("3")})
}

// A collection's filter resolves names against its targets: a name they
// agree on, or that only one knows, works; one two targets store under
// different attributes is ambiguous; one none knows is unknown.
func TestNamesCollectionFilter(t *testing.T) {
	t.Parallel()
	f := newNamesFixture(t)
	ctx := context.Background()
	load := func(cond expression.ConditionBuilder, targets ...func(*[]Article, *[]Comment) *singletable.Target) ([]string, error) {
		var ps []Article
		var cs []Comment
		ts := []*singletable.Target{}
		for _, mk := range targets {
			ts = append(ts, mk(&ps, &cs))
		}
		_, err := f.posts.QueryCollection(Article{Author: "ann"}).Filter(cond).Collect(ctx, ts...)
		ids := []string{}
		for _, p := range ps {
			ids = append(ids, p.ID)
		}
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
		return ids, err
	}
	posts := func(ps *[]Article, _ *[]Comment) *singletable.Target { return f.posts.AppendTo(ps) }
	comments := func(_ *[]Article, cs *[]Comment) *singletable.Target { return f.comments.AppendTo(cs) }

	ids, err := load(expression.Name("Public").Equal(expression.Value(true)), posts, comments)
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "3", "c1"}, ids, "Public is pub to both")
	assert.Equal(t, []string{"c1"}, f.rawIDs(t, "Comment", "cid", "#a = :x", map[string]string{"#a": "pub"},
		map[string]types.AttributeValue{":x": &types.AttributeValueMemberBOOL{Value: true}}))
	ids, err = load(expression.Name("Tags").Contains("db"), posts, comments)
	require.NoError(t, err)
	assert.Equal(t, []string{"1"}, ids, "only Article knows Tags")
	ids, err = load(expression.Name("body").Equal(expression.Value("Ann")), posts, comments)
	require.NoError(t, err)
	assert.Equal(t, []string{"c1"}, ids, "a stored name")
	// With one target, Name is that target's.
	ids, err = load(expression.Name("Name").Equal(expression.Value("Ann")), comments)
	require.NoError(t, err)
	assert.Equal(t, []string{"c1"}, ids)
	f.requests.Store(0)

	_, err = load(expression.Name("Name").Equal(expression.Value("Ann")), posts, comments)
	f.assertRefused(t, err, "Article", "Name", "ambiguous")
	assert.ErrorContains(t, err, "ambiguous")
	assert.ErrorContains(t, err, `"display"`)
	assert.ErrorContains(t, err, `"body"`)
	_, err = load(expression.Name("Nope").AttributeExists(), posts, comments)
	f.assertRefused(t, err, "Comment", "Nope", "unknown to every target")
	_, err = load(expression.Name("Nope").AttributeExists(), comments)
	f.assertRefused(t, err, "Comment", "Nope", "unknown to the only target")
	_, err = f.posts.QueryCollection(Article{Author: "ann"}).Filter(expression.Name("Public").AttributeExists()).Request()
	f.assertRefused(t, err, "", "Public", "no targets")
}

// Projections take Go names on every path and refuse an unknown one the
// same way, before the network.
func TestNamesProjections(t *testing.T) {
	t.Parallel()
	f := newNamesFixture(t)
	ctx := context.Background()
	ann := Article{Author: "ann", ID: "1"}

	got, err := f.posts.Get(ctx, ann, func(o *singletable.ReadOptions) { o.Fields = []string{"Public", "Name"} })
	require.NoError(t, err)
	assert.Equal(t, Article{Author: "ann", ID: "1", Public: true, Name: "Ann's"}, got, "Public and Name (display), not Title (stored as Name), and the key's fields")
	f.requests.Store(0)

	var p Article
	errs := map[string]error{}
	_, errs["Get"] = f.posts.Get(ctx, ann, func(o *singletable.ReadOptions) { o.Fields = []string{"Public", "Nope"} })
	_, errs["Query"] = f.posts.Query(Article{Author: "ann"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Nope"} }).Collect(ctx)
	_, errs["BatchGet"] = singletable.BatchGet(ctx, []singletable.GetOp{f.posts.GetOp(ann, &p, func(o *singletable.ReadOptions) { o.Fields = []string{"Nope"} })})
	_, errs["TxGet"] = singletable.TxGet(ctx, []singletable.GetOp{f.posts.GetOp(ann, &p, func(o *singletable.ReadOptions) { o.Fields = []string{"Nope"} })})
	var texts []string
	for what, err := range errs {
		f.assertRefused(t, err, "Article", "Nope", what)
		var ve *singletable.ValidationError
		if errors.As(err, &ve) {
			texts = append(texts, ve.Error())
		}
	}
	slices.Sort(texts)
	require.Len(t, texts, len(errs))
	assert.Equal(t, texts[0], texts[len(texts)-1], "one message on every path")
	assert.Contains(t, texts[0], `unknown field "Nope"`)
	assert.False(t, errors.Is(errs["Get"], singletable.ErrNotFound))
}
