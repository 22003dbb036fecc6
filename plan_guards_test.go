package singletable_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/internal/rawitems"
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
var guardOwners = rawitems.GuardOwners

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
	require.NoError(t, singletable.Tx(ctx, []singletable.WriteOp{
		crew.Update(Crewmate{ID: "a"}).Set("Nick", "rob").Op(),
		crew.DeleteOp(Crewmate{ID: "b"}),
		crew.CreateOp(Crewmate{ID: "c", Org: "initech", Nick: "rob"}),
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

func TestUniqueEmailConcurrentRegistrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, accounts, _ := accountsTable(t)

	const n = 12
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = accounts.Create(ctx, Account{Username: fmt.Sprint("user", i), Email: "same@example.com"})
		}()
	}
	close(start)
	wg.Wait()
	winners := 0
	for _, err := range errs {
		if err == nil {
			winners++
			continue
		}
		require.ErrorIs(t, err, singletable.ErrAlreadyExists)
		assert.Contains(t, err.Error(), "Account.Email", "the error names the attribute")
		var tce *types.TransactionCanceledException
		assert.ErrorAs(t, err, &tce, "the SDK error stays reachable")
	}
	assert.Equal(t, 1, winners, "exactly one registration succeeds")
	// The losers left nothing behind.
	for i := range n {
		_, err := accounts.Get(ctx, Account{Username: fmt.Sprint("user", i)})
		if errs[i] == nil {
			assert.NoError(t, err)
		} else {
			assert.ErrorIs(t, err, singletable.ErrNotFound)
		}
	}
}

func TestUniqueEmailChangeSwapsGuards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, accounts, _ := accountsTable(t)
	_, err := accounts.Create(ctx, Account{Username: "ann", Email: "ann@old.example"})
	require.NoError(t, err)
	_, err = accounts.Create(ctx, Account{Username: "bob", Email: "bob@example.com"})
	require.NoError(t, err)

	// Update: the old email is released and the new one claimed.
	got, err := accounts.Update(Account{Username: "ann"}).Set("Email", "ann@new.example").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ann@new.example", got.Email)
	assert.Equal(t, 2, got.Version)
	_, err = accounts.Create(ctx, Account{Username: "eve", Email: "ann@new.example"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists, "the new email is taken")
	_, err = accounts.Create(ctx, Account{Username: "cid", Email: "ann@old.example"})
	require.NoError(t, err, "the old email is free")

	// Changing to a taken email fails and changes nothing.
	_, err = accounts.Update(Account{Username: "ann"}).Set("Email", "bob@example.com").Run(ctx)
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	assert.Contains(t, err.Error(), "Account.Email")
	a, err := accounts.Get(ctx, Account{Username: "ann"})
	require.NoError(t, err)
	assert.Equal(t, "ann@new.example", a.Email)

	// Put swaps guards too.
	a.Email = "ann@put.example"
	_, err = accounts.Put(ctx, a)
	require.NoError(t, err)
	_, err = accounts.Create(ctx, Account{Username: "dan", Email: "ann@new.example"})
	require.NoError(t, err, "freed by Put")
	_, err = accounts.Create(ctx, Account{Username: "fay", Email: "ann@put.example"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)

	// Removing the email releases it; an absent value claims nothing.
	_, err = accounts.Update(Account{Username: "ann"}).Remove("Email").Run(ctx)
	require.NoError(t, err)
	_, err = accounts.Create(ctx, Account{Username: "fay", Email: "ann@put.example"})
	require.NoError(t, err)
	_, err = accounts.Create(ctx, Account{Username: "gil"})
	require.NoError(t, err)
	_, err = accounts.Create(ctx, Account{Username: "hal"})
	require.NoError(t, err, "many accounts without an email")

	// Delete releases.
	old, err := accounts.Delete(ctx, Account{Username: "bob"})
	require.NoError(t, err)
	assert.Equal(t, "bob@example.com", old.Email)
	_, err = accounts.Create(ctx, Account{Username: "ivy", Email: "bob@example.com"})
	require.NoError(t, err)
	_, err = accounts.Delete(ctx, Account{Username: "bob"})
	assert.ErrorIs(t, err, singletable.ErrNotFound)

	// Updates not touching the email need no guard work and keep it.
	u, err := accounts.Update(Account{Username: "ivy"}).Set("Name", "Ivy").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, "bob@example.com", u.Email)
	_, err = accounts.Create(ctx, Account{Username: "jon", Email: "bob@example.com"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)

	// An update of a missing account.
	_, err = accounts.Update(Account{Username: "nobody"}).Set("Email", "x@example.com").Run(ctx)
	assert.ErrorIs(t, err, singletable.ErrNotFound)
	_, err = accounts.Create(ctx, Account{Username: "kim", Email: "x@example.com"})
	require.NoError(t, err, "a failed update claims nothing")
}

func TestUniqueEmailConcurrentChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, accounts, _ := accountsTable(t)
	_, err := accounts.Create(ctx, Account{Username: "ann", Email: "e0@example.com"})
	require.NoError(t, err)
	// Eight writers change the same account's email at once: each change
	// re-reads when it races, and at the end exactly the final email is
	// taken and every other one is free.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := accounts.Update(Account{Username: "ann"}).Set("Email", fmt.Sprintf("e%d@example.com", i+1)).Run(ctx)
			if err != nil {
				assert.ErrorIs(t, err, singletable.ErrVersionConflict, "only a race past the retries may fail")
			}
		}()
	}
	wg.Wait()
	a, err := accounts.Get(ctx, Account{Username: "ann"})
	require.NoError(t, err)
	for i := range 9 {
		email := fmt.Sprintf("e%d@example.com", i)
		_, err := accounts.Create(ctx, Account{Username: fmt.Sprint("probe", i), Email: email})
		if email == a.Email {
			assert.ErrorIs(t, err, singletable.ErrAlreadyExists, email)
		} else {
			assert.NoError(t, err, "%s is free", email)
		}
	}
}

func TestUniqueGuardsInTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, accounts, _ := accountsTable(t)
	// Users share the table: bind after creation is fine for writes.
	users := singletable.MustBind(tbl, Users)
	_, err := accounts.Create(ctx, Account{Username: "ann", Email: "ann@example.com"})
	require.NoError(t, err)

	err = singletable.Tx(ctx, []singletable.WriteOp{
		users.PutOp(User{Username: "zed"}),
		accounts.CreateOp(Account{Username: "zed", Email: "ann@example.com"}),
	})
	var te *singletable.TransactionError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, 1, te.Index)
	assert.Equal(t, "Create", te.Op)
	assert.Equal(t, "Account", te.Entity)
	assert.Equal(t, "unique Email", te.Guard)
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
	assert.Contains(t, err.Error(), "op 1 (Create Account")
	_, err = users.Get(ctx, User{Username: "zed"})
	assert.ErrorIs(t, err, singletable.ErrNotFound)

	// Guarded writes compose: create one account, move another's email and
	// delete a third, all or nothing.
	_, err = accounts.Create(ctx, Account{Username: "bob", Email: "bob@example.com"})
	require.NoError(t, err)
	require.NoError(t, singletable.Tx(ctx, []singletable.WriteOp{
		accounts.CreateOp(Account{Username: "cat", Email: "bob@example.com.new"}),
		accounts.Update(Account{Username: "ann"}).Set("Email", "ann@example.org").Op(),
		accounts.DeleteOp(Account{Username: "bob"}),
	}))
	for _, free := range []string{"ann@example.com", "bob@example.com"} {
		_, err := accounts.Create(ctx, Account{Username: "p" + free, Email: free})
		require.NoError(t, err, free)
	}
	for _, taken := range []string{"ann@example.org", "bob@example.com.new"} {
		_, err := accounts.Create(ctx, Account{Username: "q" + taken, Email: taken})
		assert.ErrorIs(t, err, singletable.ErrAlreadyExists, taken)
	}

	// A batch PutOp of an entity with unique fields claims its values with
	// guard items, like Put.
	require.NoError(t, singletable.BatchWrite(ctx, []singletable.WriteOp{accounts.PutOp(Account{Username: "old", Email: "legacy@example.com", Version: 7})}))
	_, err = accounts.Create(ctx, Account{Username: "dup", Email: "legacy@example.com"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists, "PutOp claimed the value")
	// GuardOps backfills the guards of items written without them (by
	// another service): unconditional puts, idempotent.
	require.NoError(t, singletable.BatchWrite(ctx, accounts.GuardOps(Account{Username: "old", Email: "legacy@example.com"})))
	_, err = accounts.Create(ctx, Account{Username: "dup", Email: "legacy@example.com"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)
	o, err := accounts.Get(ctx, Account{Username: "old"})
	require.NoError(t, err)
	assert.Equal(t, 7, o.Version, "PutOp stores the version as given")
}

// TestUniqueClaimsUnguardedValue: another service stored an account whose
// email has no guard item. A Put or an Update that keeps that email claims
// it, so that no other account can take it; a kept value another item's
// guard holds fails the write clearly and changes nothing.
func TestUniqueClaimsUnguardedValue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tbl, accounts, _ := accountsTable(t)
	foreign := func(user, email string) {
		t.Helper()
		_, err := tbl.Client().PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl.Name()), Item: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "ACCOUNT#" + user}, "SK": &types.AttributeValueMemberS{Value: "PROFILE"},
			tbl.Describe().EntityTypeAttr: &types.AttributeValueMemberS{Value: "Account"},
			"Username":                    &types.AttributeValueMemberS{Value: user},
			"email":                       &types.AttributeValueMemberS{Value: email},
			"Version":                     &types.AttributeValueMemberN{Value: "1"},
		}})
		require.NoError(t, err)
	}

	// Put keeping the stored, unguarded email claims it.
	foreign("fay", "fay@example.com")
	fay, err := accounts.Get(ctx, Account{Username: "fay"})
	require.NoError(t, err)
	fay.Name = "Fay"
	_, err = accounts.Put(ctx, fay)
	require.NoError(t, err)
	assert.Equal(t, "ACCOUNT#fay", guardOwners(t, tbl)["UNIQUE#Account#email#fay@example.com"], "the kept email is guarded now")
	_, err = accounts.Create(ctx, Account{Username: "gus", Email: "fay@example.com"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists, "no second account with fay's email")

	// A Put that keeps a guarded email reads the guard and writes nothing more.
	_, err = accounts.Put(ctx, Account{Username: "fay", Email: "fay@example.com", Name: "Fay F."})
	require.NoError(t, err)

	// Update setting the stored, unguarded email again claims it.
	foreign("hal", "hal@example.com")
	_, err = accounts.Update(Account{Username: "hal"}).Set("Email", "hal@example.com").Run(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ACCOUNT#hal", guardOwners(t, tbl)["UNIQUE#Account#email#hal@example.com"])
	_, err = accounts.Create(ctx, Account{Username: "ida", Email: "hal@example.com"})
	assert.ErrorIs(t, err, singletable.ErrAlreadyExists)

	// Another service stored a second account with an email an account's
	// guard already holds: keeping it fails clearly, and changes nothing.
	foreign("jon", "fay@example.com")
	_, err = accounts.Put(ctx, Account{Username: "jon", Email: "fay@example.com", Name: "Jon"})
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	assert.Contains(t, err.Error(), "Account.Email")
	_, err = accounts.Update(Account{Username: "jon"}).Set("Email", "fay@example.com").Run(ctx)
	require.ErrorIs(t, err, singletable.ErrAlreadyExists)
	jon, err := accounts.Get(ctx, Account{Username: "jon"})
	require.NoError(t, err)
	assert.Equal(t, "", jon.Name, "the refused writes changed nothing")
	assert.Equal(t, "ACCOUNT#fay", guardOwners(t, tbl)["UNIQUE#Account#email#fay@example.com"])
}
