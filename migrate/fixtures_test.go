package migrate_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/rawitems"
	"github.com/singletable-go/singletable/migrate"
)

// Test helpers for the migration tests: the skills service's legacy users table
// and raw seeding with BatchWriteItem.

// legacyUser is an item of the skills service's legacy `users` table (PK username).
type legacyUser struct {
	Username     string    `dynamodbav:"username"`
	Name         string    `dynamodbav:"name"`
	PasswordHash string    `dynamodbav:"password_hash"`
	CreatedAt    time.Time `dynamodbav:"created_at"`
	UpdatedAt    time.Time `dynamodbav:"updated_at"`
	Deleted      bool      `dynamodbav:"deleted,omitempty"`
}

// usersTransform is the skills service's migration: USER#<username> / PROFILE, the
// legacy soft-deleted users left behind.
func usersTransform(users *singletable.Repo[User]) migrate.Transform {
	return migrate.TransformAs(func(u legacyUser) ([]singletable.WriteOp, error) {
		if u.Deleted {
			return nil, nil
		}
		return []singletable.WriteOp{users.PutOp(User{
			Username: u.Username, Name: u.Name, PasswordHash: u.PasswordHash,
			CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt,
		})}, nil
	})
}

// legacyItem is the i-th legacy user; every 100th one is soft-deleted.
func legacyItem(i int) map[string]types.AttributeValue {
	created := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)
	item := map[string]types.AttributeValue{
		"username":      &types.AttributeValueMemberS{Value: fmt.Sprintf("user%05d", i)},
		"name":          &types.AttributeValueMemberS{Value: fmt.Sprintf("User Number %d", i)},
		"password_hash": &types.AttributeValueMemberS{Value: fmt.Sprintf("$2a$10$%053d", i)},
		"created_at":    &types.AttributeValueMemberS{Value: created.Format(time.RFC3339)},
		"updated_at":    &types.AttributeValueMemberS{Value: created.Add(time.Hour).Format(time.RFC3339)},
	}
	if i%100 == 42 {
		item["deleted"] = &types.AttributeValueMemberBOOL{Value: true}
	}
	return item
}

// newLegacyTable creates a `users`-shaped table (PK username, no SK) and
// fills it with n legacy users.
func newLegacyTable(t testing.TB, n int) string {
	t.Helper()
	items := make([]map[string]types.AttributeValue, n)
	for i := range items {
		items[i] = legacyItem(i)
	}
	return newRawTable(t, "username", items)
}

// newRawTable creates a table with string partition key pk alone and
// writes items into it.
func newRawTable(t testing.TB, pk string, items []map[string]types.AttributeValue) string {
	t.Helper()
	c := ddblocal.Shared(t).Client()
	name := ddblocal.TableName(t)
	_, err := c.CreateTable(context.Background(), &dynamodb.CreateTableInput{
		TableName:            &name,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: &pk, AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: &pk, KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	require.NoError(t, err)
	ddblocal.DeleteTableOnCleanup(t, c, name)
	seedRaw(t, c, name, items)
	return name
}

// seedRaw writes items with BatchWriteItem, 25 at a time, four requests in
// flight.
func seedRaw(t testing.TB, c *dynamodb.Client, table string, items []map[string]types.AttributeValue) {
	t.Helper()
	ctx := context.Background()
	chunks := make(chan []map[string]types.AttributeValue)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for chunk := range chunks {
				reqs := make([]types.WriteRequest, len(chunk))
				for i, it := range chunk {
					reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
				}
				in := map[string][]types.WriteRequest{table: reqs}
				for len(in) > 0 {
					out, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: in})
					if err != nil {
						errs <- err
						return
					}
					in = out.UnprocessedItems
				}
			}
		}()
	}
	for start := 0; start < len(items); start += 25 {
		chunks <- items[start:min(start+25, len(items))]
	}
	close(chunks)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// A table's items read with the SDK alone (internal/rawitems): all of
// them, and an item's string and number attributes.
var (
	scanRaw = rawitems.Scan
	attrS   = rawitems.Str
	attrN   = rawitems.Num
)

// ledgerItems returns the migration ledger's items of a table.
func ledgerItems(t testing.TB, tbl *singletable.Table) []map[string]types.AttributeValue {
	t.Helper()
	var out []map[string]types.AttributeValue
	for _, it := range scanRaw(t, tbl.Client(), tbl.Name()) {
		if s, ok := it["EntityType"].(*types.AttributeValueMemberS); ok && s.Value == "_Migration" {
			out = append(out, it)
		}
	}
	return out
}

// newTable returns a fresh, uniquely named table bound to the given
// binders, created in DynamoDB Local and deleted when the test ends.
func newTable(t testing.TB, bind func(*singletable.Table), optFns ...func(*singletable.TableOptions)) *singletable.Table {
	t.Helper()
	c := ddblocal.Shared(t).Client()
	tbl := singletable.NewTable(c, ddblocal.TableName(t), optFns...)
	bind(tbl)
	require.NoError(t, tbl.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, c, tbl.Name())
	return tbl
}

// usersTarget makes a fresh glad-entities table with User and UserSkill
// bound.
func usersTarget(t testing.TB) (*singletable.Table, *singletable.Repo[User], *singletable.Repo[UserSkill]) {
	t.Helper()
	var users *singletable.Repo[User]
	var skills *singletable.Repo[UserSkill]
	tbl := newTable(t, func(tbl *singletable.Table) {
		users = singletable.MustBind(tbl, Users)
		skills = singletable.MustBind(tbl, UserSkills)
	})
	return tbl, users, skills
}

// usersTargetVia is usersTarget with the table's requests going through c.
func usersTargetVia(t testing.TB, c singletable.Client) (*singletable.Table, *singletable.Repo[User]) {
	t.Helper()
	tbl := singletable.NewTable(c, ddblocal.TableName(t))
	users := singletable.MustBind(tbl, Users)
	singletable.MustBind(tbl, UserSkills)
	require.NoError(t, tbl.CreateTable(context.Background()))
	ddblocal.DeleteTableOnCleanup(t, ddblocal.Shared(t).Client(), tbl.Name())
	return tbl, users
}

// recordingClient records the items written by BatchWriteItem: how many
// times each key was written and whether with different content.
type recordingClient struct {
	*dynamodb.Client
	batches atomic.Int64
	// onBatch, if set, runs before the n-th BatchWriteItem (from 1).
	onBatch func(n int64)

	mu          sync.Mutex
	content     map[string]string // key → fingerprint of the last content
	rewrites    int               // writes of a key already written, same content
	conflicting []string          // keys written twice with different content
	consumed    []consumption     // ConsumedCapacity of each request, in order
}

type consumption struct {
	sent  time.Time // when the request was sent
	units float64   // the base table's capacity units DynamoDB reported
}

func (c *recordingClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	if n := c.batches.Add(1); c.onBatch != nil {
		c.onBatch(n)
	}
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
	sent := time.Now()
	out, err := c.Client.BatchWriteItem(ctx, in, o...)
	if err != nil {
		return out, err
	}
	left := map[string]bool{}
	for _, reqs := range out.UnprocessedItems {
		for _, r := range reqs {
			if r.PutRequest != nil {
				left[itemKey(r.PutRequest.Item)] = true
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.content == nil {
		c.content = map[string]string{}
	}
	for _, cc := range out.ConsumedCapacity {
		if cc.Table != nil && cc.Table.CapacityUnits != nil {
			c.consumed = append(c.consumed, consumption{sent, *cc.Table.CapacityUnits})
		}
	}
	for _, reqs := range in.RequestItems {
		for _, r := range reqs {
			if r.PutRequest == nil || left[itemKey(r.PutRequest.Item)] {
				continue
			}
			k, fp := itemKey(r.PutRequest.Item), fingerprint(r.PutRequest.Item)
			if old, ok := c.content[k]; ok {
				if old == fp {
					c.rewrites++
				} else {
					c.conflicting = append(c.conflicting, k)
				}
			}
			c.content[k] = fp
		}
	}
	return out, nil
}

func itemKey(item map[string]types.AttributeValue) string {
	return attrS(item, "PK") + "|" + attrS(item, "SK")
}

// fingerprint is a canonical text of an item's content.
func fingerprint(item map[string]types.AttributeValue) string {
	var m map[string]any
	if err := attributevalue.UnmarshalMap(item, &m); err != nil {
		panic(err)
	}
	return fmt.Sprint(m) // fmt prints maps sorted by key
}

// contents maps each non-ledger item of a table to its fingerprint.
func contents(t testing.TB, tbl *singletable.Table) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, it := range scanRaw(t, tbl.Client(), tbl.Name()) {
		if attrS(it, "EntityType") != "_Migration" {
			out[itemKey(it)] = fingerprint(it)
		}
	}
	return out
}
