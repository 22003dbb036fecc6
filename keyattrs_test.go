package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/codec"
)

// Product's SK field is the seller's stock-keeping unit, not the item's
// sort key.
type Product struct {
	ID  string
	SKU string `dynamodbav:"SK"`
}

// ProductFixed stores the same field under another name.
type ProductFixed struct {
	ID  string
	SKU string `dynamodbav:"Sku"`
}

// A field stored under an attribute the library writes itself (the
// table's keys, its entity type attribute, a templated index's key
// attributes) would be overwritten on every write: a product's SK field
// stored as "sku-123" read back as "META". Define refuses the attributes
// the schema names, Bind those the table's options name, with a
// *ValidationError naming the Go field and the attribute; nothing is sent.
// Stored under another name the field round-trips (issue 12, item 3).
func TestKeyAttributeClash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	products := singletable.MustDefine(singletable.Schema[Product]{Type: "Product", PK: "PRODUCT#{ID}", SK: "META"})
	fixed := singletable.MustDefine(singletable.Schema[ProductFixed]{Type: "Product", PK: "PRODUCT#{ID}", SK: "META"})
	var repo *singletable.Repo[ProductFixed]
	tbl, c := newEveryRequestTable(t, func(tbl *singletable.Table) { repo = singletable.MustBind(tbl, fixed) })

	_, err := singletable.Bind(singletable.NewTable(c, tbl.Name()), products)
	var ve *singletable.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "SKU", ve.Field)
	assert.Contains(t, err.Error(), `field SKU is stored as attribute "SK"`)
	assert.Contains(t, err.Error(), "sort key attribute")
	assert.Panics(t, func() { singletable.MustBind(singletable.NewTable(c, tbl.Name()), products) })
	assert.Zero(t, c.n.Load())

	_, err = repo.Put(ctx, ProductFixed{ID: "p1", SKU: "sku-123"})
	require.NoError(t, err)
	got, err := repo.Get(ctx, ProductFixed{ID: "p1"})
	require.NoError(t, err)
	assert.Equal(t, "sku-123", got.SKU)
	raw, err := c.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.Name()), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "PRODUCT#p1"}, "SK": &types.AttributeValueMemberS{Value: "META"}}})
	require.NoError(t, err)
	assert.Equal(t, &types.AttributeValueMemberS{Value: "sku-123"}, raw.Item["Sku"])
}

// TestKeyAttributeClashCases: each attribute the library writes, by
// exact name and by a name differing only in case (decoding matches
// names ignoring case, as attributevalue does), in Define or Bind.
func TestKeyAttributeClashCases(t *testing.T) {
	t.Parallel()
	type ID struct{ ID string }
	type WithPK struct {
		ID string
		P  string `dynamodbav:"PK"`
	}
	type WithType struct {
		ID         string
		EntityType string
	}
	type WithKind struct {
		ID   string
		Kind string
	}
	type WithPk struct {
		ID string
		Pk string
	}
	type WithGSI struct {
		ID     string
		GSI1PK string
	}
	type WithGsiSK struct {
		ID string
		S  string `dynamodbav:"gsi1sk"`
	}
	type WithCustom struct {
		ID  string
		Own string `dynamodbav:"ByOwnerKey"`
	}
	type WithShardKey struct {
		ID    string
		Owner string
		Key   string `dynamodbav:"HotPK"`
	}
	define := func(err error) func() error { return func() error { return err } }
	_, errGSI := singletable.Define(singletable.Schema[WithGSI]{Type: "G", PK: "ID#{ID}", SK: "X",
		Indexes: []singletable.IndexSchema[WithGSI]{{Name: "GSI1", PK: "A#{ID}"}}})
	_, errGsiSK := singletable.Define(singletable.Schema[WithGsiSK]{Type: "G", PK: "ID#{ID}", SK: "X",
		Indexes: []singletable.IndexSchema[WithGsiSK]{{Name: "GSI1", PK: "A#{ID}", SK: "B"}}})
	_, errCustom := singletable.Define(singletable.Schema[WithCustom]{Type: "G", PK: "ID#{ID}", SK: "X",
		Indexes: []singletable.IndexSchema[WithCustom]{{Name: "ByOwner", PK: "A#{ID}", PKAttr: "ByOwnerKey"}}})
	_, errShard := singletable.Define(singletable.Schema[WithShardKey]{Type: "G", PK: "ID#{ID}", SK: "X",
		Indexes: []singletable.IndexSchema[WithShardKey]{{Name: "Hot", PK: "OWNER#{Owner}", Shards: 4}}})
	bind := func(tbl *singletable.Table, bind func(*singletable.Table) error) func() error {
		return func() error { return bind(tbl) }
	}
	std := singletable.NewTable(nil, "offline")
	kind := singletable.NewTable(nil, "offline", func(o *singletable.TableOptions) {
		o.PartitionKey, o.SortKey, o.EntityTypeAttr = "pk", "sk", "Kind"
	})
	cases := []struct {
		name, field, attr string
		err               func() error
	}{
		{"table partition key", "P", "PK", bind(std, func(t *singletable.Table) error {
			_, err := singletable.Bind(t, singletable.MustDefine(singletable.Schema[WithPK]{Type: "A", PK: "ID#{ID}", SK: "X"}))
			return err
		})},
		{"entity type attribute", "EntityType", "EntityType", bind(std, func(t *singletable.Table) error {
			_, err := singletable.Bind(t, singletable.MustDefine(singletable.Schema[WithType]{Type: "B", PK: "ID#{ID}", SK: "X"}))
			return err
		})},
		{"configured entity type attribute", "Kind", "Kind", bind(kind, func(t *singletable.Table) error {
			_, err := singletable.Bind(t, singletable.MustDefine(singletable.Schema[WithKind]{Type: "C", PK: "ID#{ID}", SK: "X"}))
			return err
		})},
		{"configured partition key, other case", "Pk", "pk", bind(kind, func(t *singletable.Table) error {
			_, err := singletable.Bind(t, singletable.MustDefine(singletable.Schema[WithPk]{Type: "D", PK: "ID#{ID}", SK: "X"}))
			return err
		})},
		{"templated index partition key", "GSI1PK", "GSI1PK", define(errGSI)},
		{"templated index sort key, other case", "S", "GSI1SK", define(errGsiSK)},
		{"index key attribute named by PKAttr", "Own", "ByOwnerKey", define(errCustom)},
		{"sharded index key attribute", "Key", "HotPK", define(errShard)},
	}
	for _, tc := range cases {
		err := tc.err()
		var ve *singletable.ValidationError
		if assert.ErrorAs(t, err, &ve, tc.name) {
			assert.Equal(t, tc.field, ve.Field, tc.name)
			assert.Contains(t, err.Error(), "field "+tc.field+" is stored as attribute", tc.name)
			assert.Contains(t, err.Error(), `"`+tc.attr+`"`, tc.name)
		}
	}
	// Multi-attribute index key attributes are the fields themselves; a
	// table whose entity type attribute is renamed frees "EntityType".
	_, err := singletable.Define(singletable.Schema[WithGSI]{Type: "M", PK: "ID#{ID}", SK: "X",
		Indexes: []singletable.IndexSchema[WithGSI]{{Name: "GSI9", MultiAttribute: true, PartitionAttrs: []string{"GSI1PK"}}}})
	assert.NoError(t, err)
	_, err = singletable.Bind(kind, singletable.MustDefine(singletable.Schema[WithType]{Type: "E", PK: "ID#{ID}", SK: "X"}))
	assert.NoError(t, err)
	_, err = singletable.Bind(std, singletable.MustDefine(singletable.Schema[ID]{Type: "F", PK: "ID#{ID}", SK: "X"}))
	assert.NoError(t, err)
}

// Why a name differing only in case clashes too: the codec, like
// attributevalue, decodes an item attribute into a field whose name
// matches it ignoring case when no field has its exact name, so a field
// "Pk" reads back the table's "PK" key.
func TestCaseInsensitiveDecodeReadsKey(t *testing.T) {
	type S struct{ Pk string }
	var out S
	require.NoError(t, codec.Unmarshal(map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "USER#ann"}}, &out))
	assert.Equal(t, "USER#ann", out.Pk)
}

// A field tagged `dynamodbav:"-"` is never stored: a schema or call
// naming it is told so, not that no such field exists (issue 12, item 14).
func TestExcludedFieldNamed(t *testing.T) {
	t.Parallel()
	type Embedded struct {
		Hidden string `dynamodbav:"-"`
	}
	type Account struct {
		Embedded
		ID      string
		Email   string
		Secret  string `dynamodbav:"-"`
		Version int    `dynamodbav:"-"`
	}
	schema := func(mod func(*singletable.Schema[Account])) error {
		s := singletable.Schema[Account]{Type: "Account", PK: "ACCOUNT#{ID}", SK: "A"}
		mod(&s)
		_, err := singletable.Define(s)
		return err
	}
	errs := map[string]error{
		"PK template": schema(func(s *singletable.Schema[Account]) { s.PK = "ACCOUNT#{Secret}" }),
		"SK template": schema(func(s *singletable.Schema[Account]) { s.SK = "S#{Secret}" }),
		"embedded":    schema(func(s *singletable.Schema[Account]) { s.SK = "S#{Hidden}" }),
		"index PK": schema(func(s *singletable.Schema[Account]) {
			s.Indexes = []singletable.IndexSchema[Account]{{Name: "G", PK: "X#{Secret}"}}
		}),
		"multi index": schema(func(s *singletable.Schema[Account]) {
			s.Indexes = []singletable.IndexSchema[Account]{{Name: "G", MultiAttribute: true, PartitionAttrs: []string{"Secret"}}}
		}),
		"WhenFields": schema(func(s *singletable.Schema[Account]) {
			s.Indexes = []singletable.IndexSchema[Account]{{Name: "G", PK: "X#{ID}", When: func(Account) bool { return true }, WhenFields: []string{"Secret"}}}
		}),
		"Unique": schema(func(s *singletable.Schema[Account]) {
			s.Unique = []singletable.Unique{{Fields: []string{"Email"}}, {Fields: []string{"Secret"}}}
		}),
		"Version":       schema(func(s *singletable.Schema[Account]) { s.Version = "Version" }),
		"UpdatedAt":     schema(func(s *singletable.Schema[Account]) { s.UpdatedAt = "Secret" }),
		"TTL":           schema(func(s *singletable.Schema[Account]) { s.TTL = "Secret" }),
		"unknown field": schema(func(s *singletable.Schema[Account]) { s.Unique = []singletable.Unique{{Fields: []string{"Nope"}}} }),
	}
	accounts := singletable.MustBind(singletable.NewTable(nil, "offline"),
		singletable.MustDefine(singletable.Schema[Account]{Type: "Account", PK: "ACCOUNT#{ID}", SK: "A"}))
	_, errs["Update.Set"] = accounts.Update(Account{ID: "a"}).Set("Secret", "x").Run(context.Background())
	_, errs["Fields"] = accounts.Get(context.Background(), Account{ID: "a"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Secret"} })
	for name, err := range errs {
		var ve *singletable.ValidationError
		if !assert.ErrorAs(t, err, &ve, name) {
			continue
		}
		if name == "unknown field" {
			assert.Contains(t, err.Error(), `unknown field "Nope" (no exported field`)
			continue
		}
		assert.Contains(t, err.Error(), `is excluded by its dynamodbav:"-" tag`, name)
		assert.NotContains(t, err.Error(), "unknown field", name)
	}
}

// Key sizes DynamoDB refuses are a *KeyError before the network: a
// write-sharded index's partition key counts its "#shard_<n>" suffix (the
// longest one: a query sends every shard's key), and each key attribute
// of a multi-attribute index is limited like a key (2,048 bytes in the
// partition key, 1,024 in the sort key). At the limits DynamoDB Local
// accepts the writes and the queries find the items (issue 12).
func TestIndexKeySizesBeforeNetwork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type Event struct {
		Stream string
		Seq    int
		Topic  string
		Title  string
	}
	events := singletable.MustDefine(singletable.Schema[Event]{Type: "Event", PK: "STREAM#{Stream}", SK: "SEQ#{Seq}",
		Indexes: []singletable.IndexSchema[Event]{
			{Name: "HotTopic", PK: "T#{Topic}", SK: "S#{Seq}", Shards: 16},
			{Name: "ByTitle", MultiAttribute: true, PartitionAttrs: []string{"Stream"}, SortAttrs: []string{"Title"}},
		}})
	var repo *singletable.Repo[Event]
	_, c := newEveryRequestTable(t, func(tbl *singletable.Table) { repo = singletable.MustBind(tbl, events) })

	// "T#" + topic + "#shard_15" is 2,048 bytes at most.
	maxTopic := strings.Repeat("t", 2048-len("T#")-len("#shard_15"))
	// The stream also renders into the primary key: keep it shorter there.
	stream := strings.Repeat("s", 100)
	title := strings.Repeat("x", 1024)
	ok := Event{Stream: stream, Seq: 1, Topic: maxTopic, Title: title}
	_, err := repo.Put(ctx, ok)
	require.NoError(t, err, "DynamoDB Local accepts keys at the limits")
	found, err := repo.QueryIndex("HotTopic", Event{Topic: maxTopic}).Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, found, 1)
	found, err = repo.QueryIndex("ByTitle", Event{Stream: stream}).Collect(ctx)
	require.NoError(t, err)
	assert.Len(t, found, 1)

	c.n.Store(0)
	longTopic := Event{Stream: "s", Seq: 2, Topic: maxTopic + "t"}
	longTitle := Event{Stream: "s", Seq: 3, Title: title + "x"}
	cases := []struct {
		name, index, key string
		run              func() error
	}{
		{"Put, sharded key over with its suffix", "HotTopic", "HotTopicPK", func() error { _, err := repo.Put(ctx, longTopic); return err }},
		{"Create, sharded key", "HotTopic", "HotTopicPK", func() error { _, err := repo.Create(ctx, longTopic); return err }},
		{"batch, sharded key", "HotTopic", "HotTopicPK", func() error { return singletable.BatchWrite(ctx, []singletable.WriteOp{repo.PutOp(longTopic)}) }},
		{"Update.Set, sharded key", "HotTopic", "HotTopicPK", func() error {
			_, err := repo.Update(Event{Stream: "s", Seq: 2}).Set("Topic", longTopic.Topic).Run(ctx)
			return err
		}},
		{"query of a sharded key", "HotTopic", "HotTopicPK", func() error {
			_, err := repo.QueryIndex("HotTopic", Event{Topic: longTopic.Topic}).Collect(ctx)
			return err
		}},
		{"Put, multi-attribute sort attribute over 1,024", "ByTitle", "Title", func() error { _, err := repo.Put(ctx, longTitle); return err }},
		{"Update.Set, multi-attribute sort attribute", "ByTitle", "Title", func() error {
			_, err := repo.Update(Event{Stream: "s", Seq: 3}).Set("Title", longTitle.Title).Run(ctx)
			return err
		}},
		{"Tx, multi-attribute sort attribute", "ByTitle", "Title", func() error {
			return singletable.Tx(ctx, []singletable.WriteOp{repo.PutOp(longTitle)})
		}},
	}
	for _, tc := range cases {
		err := tc.run()
		var ke *singletable.KeyError
		if assert.True(t, errors.As(err, &ke), "%s: got %T %v", tc.name, err, err) {
			assert.Equal(t, tc.index, ke.Index, tc.name)
			assert.Equal(t, tc.key, ke.Key, tc.name)
			assert.Contains(t, err.Error(), "limit", tc.name)
		}
	}
	assert.Zero(t, c.n.Load(), "requests sent for oversized index keys")

	// DynamoDB Local refuses them too, sent raw: the limits are its own.
	op := repo.PutOp(ok)
	require.NoError(t, op.Err())
	for attr, v := range map[string]string{"HotTopicPK": "T#" + maxTopic + "t#shard_15", "Title": title + "x"} {
		item := maps.Clone(op.Item())
		item[attr] = &types.AttributeValueMemberS{Value: v}
		_, err := c.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(repo.Table().Name()), Item: item})
		assert.Error(t, err, "DynamoDB Local accepts %s of %d bytes", attr, len(v))
	}

	// A multi-attribute partition attribute over 2,048 bytes (the stream
	// is also in the primary key: use an index of its own).
	type Doc struct {
		ID    string
		Owner string
	}
	docs := singletable.MustDefine(singletable.Schema[Doc]{Type: "Doc", PK: "DOC#{ID}", SK: "D",
		Indexes: []singletable.IndexSchema[Doc]{{Name: "ByOwner", MultiAttribute: true, PartitionAttrs: []string{"Owner"}}}})
	var drepo *singletable.Repo[Doc]
	_, dc := newEveryRequestTable(t, func(tbl *singletable.Table) { drepo = singletable.MustBind(tbl, docs) })
	_, err = drepo.Put(ctx, Doc{ID: "1", Owner: strings.Repeat("o", 2048)})
	require.NoError(t, err)
	dc.n.Store(0)
	_, err = drepo.Put(ctx, Doc{ID: "2", Owner: strings.Repeat("o", 2049)})
	var ke *singletable.KeyError
	require.ErrorAs(t, err, &ke)
	assert.Contains(t, err.Error(), "2049 bytes, over DynamoDB's 2048-byte limit for a partition key attribute")
	_, err = drepo.QueryIndex("ByOwner", Doc{Owner: strings.Repeat("o", 2049)}).Collect(ctx)
	require.ErrorAs(t, err, &ke)
	assert.Zero(t, dc.n.Load())
	reportInputs(inputRow{Suite: "index keys over DynamoDB's size limits (shard suffix counted, multi-attribute key attributes) on Put, Create, batch, Tx, Update.Set, queries",
		Tried: len(cases) + 2, Outcomes: fmt.Sprintf("%d *KeyError; 0 requests sent", len(cases)+2)})
}
