package singletable

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable/internal/itemsize"
)

type EncInner struct {
	Region string
}

type encOuter struct {
	EncInner
	*EncDeep
	Org   string
	Team  string
	Level string
	Note  string
	Tags  []string
}

type EncDeep struct {
	Zone string
}

// encClash stores fields under the names of the table's key and entity
// type attributes. Bind refuses such an entity (TestKeyAttributeClash);
// encodeSized, reached here without binding, still handles it, as it must
// for types that marshal themselves (encSelf).
type encClash struct {
	ID   string
	PK   string `dynamodbav:"PK"`
	Kind string `dynamodbav:"EntityType"`
}

type encMulti struct {
	ID      string
	Day     string
	N       int
	Expires time.Time
}

// encSelf marshals itself: its item is not known in advance.
type encSelf struct {
	ID    string
	Extra string
}

func (s encSelf) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"ID": &types.AttributeValueMemberS{Value: s.ID},
		"PK": &types.AttributeValueMemberS{Value: "mine: " + s.Extra},
	}}, nil
}

// checkEncode encodes v and checks what encodeSized returns against the
// item itself: the size itemsize counts and the attributes asked for.
func checkEncode[T any](t *testing.T, e *Entity[T], tbl *Table, v T, direct bool, want map[string]string) map[string]types.AttributeValue {
	t.Helper()
	item, size, err := e.encodeSized(tbl, &v)
	require.NoError(t, err)
	assert.Equal(t, itemsize.Of(item), size, "encodeSized's size is itemsize's")
	assert.Equal(t, direct, e.writeSetFor(tbl).direct, "direct")
	for name, s := range want {
		if s == "" {
			assert.NotContains(t, item, name)
			continue
		}
		if assert.Contains(t, item, name) {
			assert.Equal(t, &types.AttributeValueMemberS{Value: s}, item[name], name)
		}
	}
	return item
}

// encodeSized sizes the attributes it adds without looking them up when
// no field can hold them, and falls back to looking them up when one can;
// the size is exact either way, and keys read from embedded structs (with
// and without a pointer on the way) render as through reflection.
func TestEncodeSizedPaths(t *testing.T) {
	tbl := NewTable(nil, "t")

	outer := MustDefine(Schema[encOuter]{Type: "Outer", PK: "ORG#{Org}#{Region}", SK: "TEAM#{Team}",
		Indexes: []IndexSchema[encOuter]{
			{Name: "GSI1", PK: "ZONE#{Zone}", SK: "LEVEL#{Level}#{Team}"},
			{Name: "GSI2", PK: "NOTE#{Note}"},
			{Name: "GSI3", PK: "S#{Org}", Shards: 4, SK: "{Team}"},
		}})
	v := encOuter{EncInner: EncInner{Region: "eu#1"}, EncDeep: &EncDeep{Zone: "z%"}, Org: "acme", Team: "café",
		Level: "L1", Tags: []string{"x"}}
	item := checkEncode(t, outer, tbl, v, true, map[string]string{
		"PK": "ORG#acme#eu%231", "SK": "TEAM#café", "EntityType": "Outer",
		"GSI1PK": "ZONE#z%25", "GSI1SK": "LEVEL#L1#café", "GSI2PK": "",
	})
	assert.Regexp(t, `^S#acme#shard_[0-3]$`, item["GSI3PK"].(*types.AttributeValueMemberS).Value)
	// A nil embedded pointer: GSI1's field is absent, so the item is not in it.
	v.EncDeep = nil
	v.Note = "n"
	checkEncode(t, outer, tbl, v, true, map[string]string{"GSI1PK": "", "GSI1SK": "", "GSI2PK": "NOTE#n"})
	// Missing primary key fields are named.
	v.Org = ""
	_, _, err := outer.encodeSized(tbl, &v)
	var ke *KeyError
	require.ErrorAs(t, err, &ke)
	assert.Equal(t, []string{"Org"}, ke.Missing)

	clash := MustDefine(Schema[encClash]{Type: "Clash", PK: "ID#{ID}", SK: "X",
		Indexes: []IndexSchema[encClash]{{Name: "GSI1", PK: "ID#{ID}", SK: "Y"}}})
	checkEncode(t, clash, tbl, encClash{ID: "1", PK: "a much longer stored value", Kind: "zzzzzzzzzzzz"},
		false, map[string]string{"PK": "ID#1", "GSI1SK": "Y", "EntityType": "Clash"})

	multi := MustDefine(Schema[encMulti]{Type: "Multi", PK: "ID#{ID}", TTL: "Expires",
		Indexes: []IndexSchema[encMulti]{{Name: "GSI1", MultiAttribute: true, PartitionAttrs: []string{"Day"}, SortAttrs: []string{"N"}}}})
	item = checkEncode(t, multi, tbl, encMulti{ID: "1", Day: "2026-11-23", N: 7, Expires: time.Unix(1e9, 0)}, true,
		map[string]string{"PK": "ID#1", "Day": "2026-11-23"})
	assert.Equal(t, &types.AttributeValueMemberN{Value: "1000000000"}, item["Expires"])
	item = checkEncode(t, multi, tbl, encMulti{ID: "1"}, true, map[string]string{"Day": ""})
	assert.NotContains(t, item, "Expires")

	self := MustDefine(Schema[encSelf]{Type: "Self", PK: "ID#{ID}"})
	want, err := attributevalue.MarshalMap(encSelf{ID: "1", Extra: "e"})
	require.NoError(t, err)
	require.Equal(t, "mine: e", want["PK"].(*types.AttributeValueMemberS).Value)
	checkEncode(t, self, tbl, encSelf{ID: "1", Extra: "e"}, false, map[string]string{"PK": "ID#1"})

	// Another table with other attribute names: the write set follows it.
	other := NewTable(nil, "o", func(o *TableOptions) { o.PartitionKey, o.SortKey, o.EntityTypeAttr = "ID", "", "T" })
	clashOnly := MustDefine(Schema[encClash]{Type: "Clash", PK: "ID#{ID}"})
	checkEncode(t, clashOnly, other, encClash{ID: "1"}, false, map[string]string{"ID": "ID#1", "T": "Clash"})
	checkEncode(t, clashOnly, tbl, encClash{ID: "1", PK: "p"}, false, map[string]string{"PK": "ID#1"})
	checkEncode(t, outer, other, encOuter{Org: "o", EncInner: EncInner{Region: "r"}, Team: "t"}, true, map[string]string{"ID": "ORG#o#r", "T": "Outer"})
}

// Invalid UTF-8 in a field is refused and named.
func TestEncodeSizedUTF8(t *testing.T) {
	tbl := NewTable(nil, "t")
	e := MustDefine(Schema[encOuter]{Type: "Outer", PK: "ORG#{Org}", SK: "TEAM#{Team}"})
	_, _, err := e.encodeSized(tbl, &encOuter{Org: "a", Team: "t", Note: "bad\xff"})
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, "Note", ve.Field)
}
