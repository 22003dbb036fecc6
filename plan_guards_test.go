package singletable_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
)

// Link is a bookmark whose URL is unique within its team: the tuple
// (Team, URL), Team being part of the primary key, hashed because URLs
// can be long.
type Link struct {
	Team  string `dynamodbav:"Team"`
	ID    string `dynamodbav:"ID"`
	URL   string `dynamodbav:"URL,omitempty"`
	Title string `dynamodbav:"Title"`
}

var Links = singletable.MustDefine(singletable.Schema[Link]{
	Type: "Link", PK: "TEAM#{Team}", SK: "LINK#{ID}",
	Unique: []singletable.Unique{{Fields: []string{"Team", "URL"}, Hash: true}},
})

// Crewmate has a nickname unique within an organisation that is not part of
// its key (so moving to another organisation swaps the guard), unhashed,
// and a globally unique email.
type Crewmate struct {
	ID    string `dynamodbav:"ID"`
	Org   string `dynamodbav:"Org,omitempty"`
	Nick  string `dynamodbav:"Nick,omitempty"`
	Email string `dynamodbav:"Email,omitempty"`
	Score int    `dynamodbav:"Score"`
}

var Crew = singletable.MustDefine(singletable.Schema[Crewmate]{
	Type: "Crewmate", PK: "MEMBER#{ID}", SK: "MEMBER",
	Unique: []singletable.Unique{{Fields: []string{"Org", "Nick"}}, {Fields: []string{"Email"}}},
})

// guardOwners lists the unique guard items of the table: guard partition
// key → owner's partition key.
func guardOwners(t *testing.T, tbl *singletable.Table) map[string]string {
	t.Helper()
	out := map[string]string{}
	typeAttr := tbl.Describe().EntityTypeAttr
	p := dynamodb.NewScanPaginator(tbl.Client(), &dynamodb.ScanInput{TableName: aws.String(tbl.Name()), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, it := range page.Items {
			if attrS(it, typeAttr) == singletable.UniqueGuardType {
				out[attrS(it, "PK")] = attrS(it, "OwnerPK")
			}
		}
	}
	return out
}

// linkGuard is the guard key of a Link's (Team, URL), values that need no
// escaping.
func linkGuard(team, url string) string {
	sum := sha256.Sum256([]byte(team + "#" + url))
	return "UNIQUE#Link#Team#URL#$SHA256:" + hex.EncodeToString(sum[:])
}

func TestUniqueTupleKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var links *singletable.Repo[Link]
	var crew *singletable.Repo[Crewmate]
	tbl, _ := newTable(t, func(tbl *singletable.Table) {
		links = singletable.MustBind(tbl, Links)
		crew = singletable.MustBind(tbl, Crew)
	})
	long := "https://example.com/" + strings.Repeat("a", 3000)
	_, err := links.Create(ctx, Link{Team: "t1", ID: "1", URL: long})
	require.NoError(t, err, "a hashed guard key fits whatever the values' length")
	_, err = crew.Create(ctx, Crewmate{ID: "m1", Org: "acme", Nick: "bob", Email: "bob@example.com"})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		linkGuard("t1", long):                   "TEAM#t1",
		"UNIQUE#Crewmate#Org#Nick#acme#bob":     "MEMBER#m1",
		"UNIQUE#Crewmate#Email#bob@example.com": "MEMBER#m1", // a single field: the key guards always had
	}, guardOwners(t, tbl))

	// Unhashed, a value too long for a guard key is a *KeyError before
	// the network, saying to hash.
	_, err = crew.Create(ctx, Crewmate{ID: "m2", Org: "acme", Nick: strings.Repeat("n", 3000)})
	var ke *singletable.KeyError
	require.ErrorAs(t, err, &ke)
	assert.Contains(t, err.Error(), "Hash")
	_, err = crew.Get(ctx, Crewmate{ID: "m2"})
	assert.ErrorIs(t, err, singletable.ErrNotFound)
}

func TestUniqueTupleScoped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var links *singletable.Repo[Link]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { links = singletable.MustBind(tbl, Links) })
	const u1, u2 = "https://go.dev/doc", "https://go.dev/ref/spec"

	_, err := links.Create(ctx, Link{Team: "t1", ID: "1", URL: u1})
	require.NoError(t, err)
	_, err = links.Create(ctx, Link{Team: "t2", ID: "1", URL: u1})
	require.NoError(t, err, "the same URL in another team")
	_, err = links.Create(ctx, Link{Team: "t1", ID: "2", URL: u1})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists, "the same URL in the same team")
	assert.Contains(t, err.Error(), "Link.(Team, URL)")
	_, err = links.Create(ctx, Link{Team: "t1", ID: "2"})
	require.NoError(t, err, "an absent URL claims nothing")
	_, err = links.Create(ctx, Link{Team: "t1", ID: "3"})
	require.NoError(t, err, "absent twice")

	// Update: setting the URL claims it; changing it swaps.
	_, err = links.Update(Link{Team: "t1", ID: "2"}).Set("URL", u1).Run(ctx)
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	_, err = links.Update(Link{Team: "t1", ID: "2"}).Set("URL", u2).Run(ctx)
	require.NoError(t, err)
	_, err = links.Update(Link{Team: "t1", ID: "1"}).Set("URL", "https://go.dev/blog").Run(ctx)
	require.NoError(t, err)
	_, err = links.Update(Link{Team: "t1", ID: "3"}).Set("URL", u1).Run(ctx)
	require.NoError(t, err, "u1 was released by link 1")
	// An update of another field keeps the guard.
	_, err = links.Update(Link{Team: "t1", ID: "3"}).Set("Title", "Docs").Run(ctx)
	require.NoError(t, err)
	// Remove releases it.
	_, err = links.Update(Link{Team: "t1", ID: "2"}).Remove("URL").Run(ctx)
	require.NoError(t, err)

	// Put swaps, Delete releases.
	_, err = links.Put(ctx, Link{Team: "t1", ID: "3", URL: u2})
	require.NoError(t, err)
	_, err = links.Delete(ctx, Link{Team: "t2", ID: "1"})
	require.NoError(t, err)

	assert.Equal(t, map[string]string{
		linkGuard("t1", "https://go.dev/blog"): "TEAM#t1",
		linkGuard("t1", u2):                    "TEAM#t1",
	}, guardOwners(t, tbl))
	for _, c := range []struct {
		team, url string
		free      bool
	}{{"t1", u1, true}, {"t1", u2, false}, {"t2", u1, true}, {"t1", "https://go.dev/blog", false}} {
		_, err := links.Create(ctx, Link{Team: c.team, ID: "probe" + c.url, URL: c.url})
		if c.free {
			assert.NoError(t, err, "%s %s is free", c.team, c.url)
		} else {
			assert.ErrorIs(t, err, singletable.ErrAlreadyExists, "%s %s is taken", c.team, c.url)
		}
	}
}

func TestUniqueTupleSwapsOnEveryField(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var crew *singletable.Repo[Crewmate]
	tbl, _ := newTable(t, func(tbl *singletable.Table) { crew = singletable.MustBind(tbl, Crew) })

	_, err := crew.Create(ctx, Crewmate{ID: "a", Org: "acme", Nick: "bob"})
	require.NoError(t, err)
	_, err = crew.Create(ctx, Crewmate{ID: "b", Org: "initech", Nick: "bob"})
	require.NoError(t, err)
	// Moving to another organisation swaps the guard on the Org field
	// alone; the update reads Nick to render the new tuple.
	_, err = crew.Update(Crewmate{ID: "a"}).Set("Org", "initech").Run(ctx)
	require.ErrorIs(t, err, singletable.ErrAlreadyExists, "bob is taken at initech")
	_, err = crew.Update(Crewmate{ID: "a"}).Set("Org", "globex").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"UNIQUE#Crewmate#Org#Nick#globex#bob":  "MEMBER#a",
		"UNIQUE#Crewmate#Org#Nick#initech#bob": "MEMBER#b",
	}, guardOwners(t, tbl))

	// In transactions and batches.
	require.NoError(t, singletable.Tx(ctx, tbl, func(tx *singletable.Txn) error {
		crew.Update(Crewmate{ID: "a"}).Set("Nick", "rob").Tx(tx)
		crew.TxDelete(tx, Crewmate{ID: "b"})
		crew.TxCreate(tx, Crewmate{ID: "c", Org: "initech", Nick: "rob"})
		return nil
	}))
	require.NoError(t, singletable.BatchWrite(ctx, []singletable.WriteOp{
		crew.PutOp(Crewmate{ID: "d", Org: "acme", Nick: "bob"}),
		crew.DeleteOp(Crewmate{ID: "c"}),
	}))
	err = singletable.BatchWrite(ctx, []singletable.WriteOp{crew.PutOp(Crewmate{ID: "e", Org: "acme", Nick: "bob"})})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists, "a batch put claims its tuple like Put")
	assert.Equal(t, map[string]string{
		"UNIQUE#Crewmate#Org#Nick#globex#rob": "MEMBER#a",
		"UNIQUE#Crewmate#Org#Nick#acme#bob":   "MEMBER#d",
		// c's guard went with it; b's was released by the transaction.
	}, guardOwners(t, tbl))
}

func TestUniqueDeclarationChecks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		unique []singletable.Unique
		want   string
	}{
		{"no field", []singletable.Unique{{}}, "names no field"},
		{"only key fields", []singletable.Unique{{Fields: []string{"Team", "ID"}}}, "unique already"},
		{"one key field", []singletable.Unique{{Fields: []string{"Team"}}}, "primary key"},
		{"field twice in a tuple", []singletable.Unique{{Fields: []string{"URL", "URL"}}}, "twice"},
		{"tuple twice", []singletable.Unique{{Fields: []string{"Team", "URL"}}, {Fields: []string{"URL", "Team"}, Hash: true}}, "(URL, Team) listed twice"},
		{"unknown", []singletable.Unique{{Fields: []string{"Team", "Nope"}}}, "Nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := singletable.Define(singletable.Schema[Link]{Type: "Link", PK: "TEAM#{Team}", SK: "LINK#{ID}", Unique: c.unique})
			var ve *singletable.ValidationError
			require.True(t, errors.As(err, &ve), "%v", err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
