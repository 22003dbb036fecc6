// Command demo runs the skills story (the skills service) end to end against a
// DynamoDB Local it starts and stops itself: it seeds the legacy users
// table, creates glad-entities from the declarations, migrates the users
// with the library's migration engine (progress, counts, verification),
// adds skills, runs every access pattern printing what each returns, then
// prints the table's access-pattern catalog. `make demo` runs it.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/catalog"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/examples/skills"
	"github.com/singletable-go/singletable/migrate"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// namedUsers are the legacy users the story follows; legacyCount users are
// seeded in all, the rest generated.
var namedUsers = []struct{ username, name, password, created string }{
	{"alice", "Alice Martin", "alice-secret", "2021-03-14T09:00:00Z"},
	{"bob", "Bob Chen", "bob-secret!", "2021-07-02T12:30:00Z"},
	{"carol", "Carol Diaz", "carol-secret", "2022-01-20T08:15:00Z"},
	{"dave", "Dave Okafor", "dave-secret", "2022-05-05T17:45:00Z"},
	{"erin", "Erin Novak", "erin-secret", "2022-11-11T11:11:00Z"},
	{"frank", "Frank Weber", "frank-secret", "2023-02-28T22:00:00Z"},
	{"grace", "Grace Kim", "grace-secret", "2023-06-30T06:00:00Z"},
	{"heidi", "Heidi Larsen", "heidi-secret", "2023-09-09T09:09:00Z"},
	{"john", "John Smith", "john-secret", "2024-01-01T10:00:00Z"},
	{"mary", "Mary Jones", "mary-secret", "2024-02-14T14:00:00Z"},
}

const legacyCount = 1000

func run() error {
	started := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	fmt.Println("Starting DynamoDB Local (the first run downloads it)...")
	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	if err != nil {
		return err
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "demo: stop DynamoDB Local:", err)
		}
	}()
	fmt.Printf("DynamoDB Local at %s, ready after %s\n", srv.Endpoint(), time.Since(started).Round(time.Millisecond))
	client := srv.Client()

	// The legacy table, as the design describes it.
	heading("Legacy table `users` (partition key username, no sort key)")
	if err := seedLegacy(ctx, client); err != nil {
		return err
	}
	fmt.Printf("seeded %d users with the raw SDK (the legacy application's writes)\n", legacyCount)

	// The single table, created from the declarations.
	st := skills.NewStore(client, skills.TableName)
	if err := st.Table.CreateTable(ctx); err != nil {
		return err
	}
	svc := skills.NewService(st)
	svc.PasswordIterations = 10_000 // a demo: the production default is 600,000
	patterns := map[string]catalog.Pattern{}
	for _, p := range skills.AccessPatterns(st) {
		patterns[p.Name] = p
	}
	heading("Table `" + skills.TableName + "` created from the declarations")
	in := st.Table.CreateTableInput()
	w := newTable("index", "keys")
	w.row("table", keySchema(in.KeySchema))
	for _, g := range in.GlobalSecondaryIndexes {
		w.row(aws.ToString(g.IndexName), keySchema(g.KeySchema))
	}
	w.flush()

	// The migration, through the library's engine.
	heading("Migration " + skills.LegacyUsersMigrationID + ": users → " + skills.TableName)
	m, err := skills.Migrator(st, skills.LegacyTableName)
	if err != nil {
		return err
	}
	rep, err := m.Run(ctx, skills.LegacyUsersMigrationID, func(o *migrate.RunOptions) {
		o.ProgressInterval = 100 * time.Millisecond
		o.Progress = progressBar
	})
	if err != nil {
		return err
	}
	c := rep.Counts
	w = newTable("read", "written", "skipped", "failed", "segments", "WCU", "elapsed")
	w.row(itoa(c.Read), itoa(c.Written), itoa(c.Skipped), itoa(c.Failed), strconv.Itoa(rep.Segments), itoa(rep.WCU), rep.Elapsed.Round(time.Millisecond).String())
	w.flush()
	v, err := m.Verify(ctx, skills.LegacyUsersMigrationID)
	if err != nil {
		return err
	}
	fmt.Printf("verify: %d source items, %d compared, %d missing, %d different, %d unexpected\n",
		v.SourceItems, v.Compared, v.Missing, v.Different, v.Unexpected)
	again, err := m.Run(ctx, skills.LegacyUsersMigrationID)
	if err != nil {
		return err
	}
	fmt.Printf("run again: already completed = %v (the ledger in the table remembers)\n", again.AlreadyCompleted)

	// Skills (AP8).
	type skillRow struct {
		user, skill, level string
		years              int
		lastUsed           string
	}
	for _, s := range []skillRow{
		{"alice", "python", "Expert", 9, "2023-01-01"},
		{"alice", "golang", "Advanced", 4, "2024-04-01"},
		{"bob", "python", "Intermediate", 2, "2024-01-01"},
		{"carol", "python", "Expert", 7, "2024-05-01"},
		{"carol", "c#", "Advanced", 5, "2022-10-01"},
		{"dave", "python", "Beginner", 1, "2024-02-01"},
		{"erin", "python", "Expert", 5, "2023-06-01"},
		{"frank", "golang", "Expert", 8, "2024-06-01"},
		{"grace", "python", "Expert", 7, "2023-12-31"},
		{"heidi", "python", "Expert", 12, "2024-03-01"},
		{"john", "golang", "Expert", 7, "2024-06-01"},
		{"john", "python", "Expert", 5, "2023-06-01"},
		{"john", "go", "Beginner", 1, "2024-03-01"},
		{"mary", "golang", "Advanced", 3, "2024-02-01"},
		{"mary", "python", "Expert", 7, "2024-05-01"},
	} {
		lastUsed, _ := time.Parse(skills.DateLayout, s.lastUsed)
		if _, err := svc.AddSkill(ctx, s.user, s.skill, skills.SkillInput{Level: &s.level, Years: &s.years, LastUsed: &lastUsed}); err != nil {
			return err
		}
	}

	ap := func(name string) {
		p := patterns[name]
		index := p.Index
		if index == "" {
			index = "table"
		}
		fmt.Printf("\n== %s: %s\n   %s on %s: %s\n", p.Name, p.Description, p.Operation, index, p.Condition)
	}

	ap("AP1")
	u, err := svc.GetUser(ctx, "john")
	if err != nil {
		return err
	}
	printUsers([]skills.User{u})
	_, err = svc.Authenticate(ctx, "john", "john-secret")
	fmt.Printf("login john/john-secret (the legacy password, migrated): %s\n", outcome(err))
	_, err = svc.Authenticate(ctx, "john", "wrong")
	fmt.Printf("login john/wrong: %s\n", outcome(err))

	ap("AP2")
	_, err = svc.Register(ctx, "zoe", "Zoe Adams", "zoe-secret")
	fmt.Printf("register zoe: %s\n", outcome(err))
	_, err = svc.Register(ctx, "zoe", "Another Zoe", "other-secret")
	fmt.Printf("register zoe again: %s\n", outcome(err))

	ap("AP3")
	u, err = svc.UpdateProfile(ctx, "zoe", "Zoe Adams-Baker")
	if err != nil {
		return err
	}
	printUsers([]skills.User{u})
	_, err = svc.UpdateProfile(ctx, "nobody", "No One")
	fmt.Printf("update nobody: %s\n", outcome(err))

	ap("AP4")
	w = newTable("username", "exists")
	for _, name := range []string{"john", "zoe", "nobody"} {
		ok, err := svc.UserExists(ctx, name)
		if err != nil {
			return err
		}
		w.row(name, strconv.FormatBool(ok))
	}
	w.flush()

	ap("AP5")
	cursor, pages, total, last := "", 0, 0, ""
	for {
		limit := 100
		if pages < 2 {
			limit = 4
		}
		page, err := svc.ListUsers(ctx, limit, cursor)
		if err != nil {
			return err
		}
		if pages < 2 {
			fmt.Printf("page %d (limit %d, merged from %d shards):\n", pages+1, limit, skills.UserShards)
			printUsers(page.Items)
		}
		pages++
		total += len(page.Items)
		for _, u := range page.Items {
			if u.Username <= last {
				return fmt.Errorf("AP5: %q listed after %q", u.Username, last)
			}
			last = u.Username
		}
		if cursor = page.Cursor; cursor == "" {
			break
		}
	}
	fmt.Printf("walking on with limit 100: %d users in %d pages, in username order, each once (checked), no Scan\n", total, pages)
	spread, err := usersPerShard(ctx, client)
	if err != nil {
		return err
	}
	fmt.Printf("users per GSI1 shard (raw Query, Select COUNT): %s\n", spread)

	ap("AP6")
	sp, err := svc.ListSkills(ctx, "john", 0, "")
	if err != nil {
		return err
	}
	printSkills(sp.Items)

	ap("AP7")
	sk, err := svc.GetSkill(ctx, "john", "go")
	if err != nil {
		return err
	}
	printSkills([]skills.UserSkill{sk})
	_, err = svc.GetSkill(ctx, "john", "gol")
	fmt.Printf("john's skill \"gol\": %s (prefix-safe keys: \"go\" and \"golang\" are not matched)\n", outcome(err))

	ap("AP8")
	lvl, yrs := "Intermediate", 1
	sk, err = svc.AddSkill(ctx, "zoe", "rust", skills.SkillInput{Level: &lvl, Years: &yrs})
	if err != nil {
		return err
	}
	printSkills([]skills.UserSkill{sk})
	_, err = svc.AddSkill(ctx, "zoe", "rust", skills.SkillInput{Level: &lvl})
	fmt.Printf("add rust to zoe again: %s\n", outcome(err))

	ap("AP9")
	lvl = "Intermediate"
	sk, err = svc.UpdateSkill(ctx, "john", "go", skills.SkillInput{Level: &lvl})
	if err != nil {
		return err
	}
	printSkills([]skills.UserSkill{sk})
	found, err := svc.FindUsers(ctx, skills.SkillSearch{SkillName: "go", Level: "Intermediate"})
	if err != nil {
		return err
	}
	fmt.Printf("GSI1 followed the update: users with go at Intermediate = %v\n", usernames(found.Items))

	ap("AP10")
	old, err := svc.RemoveSkill(ctx, "zoe", "rust")
	if err != nil {
		return err
	}
	fmt.Printf("removed zoe's %s (%s)\n", old.SkillName, old.Level)
	_, err = svc.RemoveSkill(ctx, "zoe", "rust")
	fmt.Printf("remove it again: %s\n", outcome(err))

	ap("AP11")
	if err := printSearch(ctx, svc, skills.SkillSearch{SkillName: "python"}); err != nil {
		return err
	}

	ap("AP12")
	if err := printSearch(ctx, svc, skills.SkillSearch{SkillName: "python", Level: "Expert"}); err != nil {
		return err
	}

	ap("AP13")
	p, err := svc.GetProfile(ctx, "john")
	if err != nil {
		return err
	}
	printUsers([]skills.User{p.User})
	printSkills(p.Skills)

	five, seven := 5, 7
	since := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	ap("GSI2-a")
	fmt.Println("python, Expert, YearsOfExperience >= 5:")
	if err := printSearch(ctx, svc, skills.SkillSearch{SkillName: "python", Level: "Expert", MinYears: &five}); err != nil {
		return err
	}
	ap("GSI2-b")
	fmt.Println("python, Expert, YearsOfExperience = 7:")
	if err := printSearch(ctx, svc, skills.SkillSearch{SkillName: "python", Level: "Expert", Years: &seven}); err != nil {
		return err
	}
	ap("GSI2-c")
	fmt.Println("python, Expert, YearsOfExperience = 7, LastUsedDate >= 2024-01-01 (the design's query):")
	if err := printSearch(ctx, svc, skills.SkillSearch{SkillName: "python", Level: "Expert", Years: &seven, UsedSince: &since}); err != nil {
		return err
	}

	ap("ENDORSE")
	for range 3 {
		if sk, err = svc.Endorse(ctx, "mary", "python"); err != nil {
			return err
		}
	}
	printSkills([]skills.UserSkill{sk})

	heading("Access-pattern catalog (generated from the declarations)")
	if err := catalog.New(st.Table, skills.AccessPatterns(st)...).Accept(skills.Accepted...).WriteMarkdown(os.Stdout); err != nil {
		return err
	}
	fmt.Printf("\nDone in %s; stopping DynamoDB Local.\n", time.Since(started).Round(time.Millisecond))
	return nil
}

func seedLegacy(ctx context.Context, client *dynamodb.Client) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(skills.LegacyTableName),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("username"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("username"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		return err
	}
	shared, err := skills.HashPassword("legacy-password", 10_000)
	if err != nil {
		return err
	}
	var items []map[string]types.AttributeValue
	for i := range legacyCount {
		u := skills.LegacyUser{Username: fmt.Sprintf("user%04d", i), Name: fmt.Sprintf("User %d", i),
			PasswordHash: shared, CreatedAt: "2020-01-01T00:00:00Z"}
		if i < len(namedUsers) {
			n := namedUsers[i]
			h, err := skills.HashPassword(n.password, 10_000)
			if err != nil {
				return err
			}
			u = skills.LegacyUser{Username: n.username, Name: n.name, PasswordHash: h, CreatedAt: n.created}
		}
		u.UpdatedAt = u.CreatedAt
		item, err := attributevalue.MarshalMap(u)
		if err != nil {
			return err
		}
		items = append(items, item)
	}
	for chunk := range slices.Chunk(items, 25) {
		reqs := make([]types.WriteRequest, len(chunk))
		for i, it := range chunk {
			reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
		}
		// The legacy application's loader: retry what DynamoDB did not process.
		for pending := map[string][]types.WriteRequest{skills.LegacyTableName: reqs}; len(pending) > 0; {
			out, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return err
			}
			pending = out.UnprocessedItems
		}
	}
	return nil
}

// progressBar draws the migration's progress: redrawn in place on a
// terminal, only the final state otherwise.
func progressBar(p migrate.Progress) {
	const width = 30
	if !p.Done && !isTerminal(os.Stdout) {
		return
	}
	frac := 0.0
	switch {
	case p.Done:
		frac = 1
	case p.Total > 0:
		frac = min(float64(p.Read)/float64(p.Total), 1)
	}
	n := int(frac * width)
	fmt.Printf("\r  [%s%s] %5d read  %5d written  %5.0f items/s", strings.Repeat("#", n), strings.Repeat(".", width-n), p.Read, p.Written, p.Rate)
	if p.Done {
		fmt.Println()
	}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func printSearch(ctx context.Context, svc *skills.Service, q skills.SkillSearch) error {
	page, err := svc.FindUsers(ctx, q)
	if err != nil {
		return err
	}
	printSkills(page.Items)
	return nil
}

func usernames(s []skills.UserSkill) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.Username
	}
	return out
}

// outcome describes an error the way the HTTP API answers it.
func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, singletable.ErrAlreadyExists):
		return "refused, already exists (409)"
	case errors.Is(err, singletable.ErrNotFound):
		return "not found (404)"
	case errors.Is(err, skills.ErrBadCredentials):
		return "bad credentials (401)"
	}
	return "error: " + err.Error()
}

func heading(s string) {
	fmt.Printf("\n## %s\n\n", s)
}

func keySchema(ks []types.KeySchemaElement) string {
	var parts []string
	for _, k := range ks {
		parts = append(parts, aws.ToString(k.AttributeName)+" "+strings.ToLower(string(k.KeyType)))
	}
	return strings.Join(parts, ", ")
}

type table struct{ w *tabwriter.Writer }

func newTable(headers ...string) *table {
	t := &table{tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)}
	t.row(headers...)
	under := make([]string, len(headers))
	for i, h := range headers {
		under[i] = strings.Repeat("-", len(h))
	}
	t.row(under...)
	return t
}

func (t *table) row(cells ...string) { fmt.Fprintln(t.w, "  "+strings.Join(cells, "\t")) }

func (t *table) flush() { _ = t.w.Flush() }

// usersPerShard counts the users in each write shard of GSI1 with the raw
// SDK, to show how the library spread them: the shard of an item is in
// its GSI1PK, USERS#shard_<n>.
func usersPerShard(ctx context.Context, client *dynamodb.Client) (string, error) {
	var counts []string
	for n := range skills.UserShards {
		pk := fmt.Sprintf("USERS#shard_%d", n)
		in := &dynamodb.QueryInput{
			TableName: aws.String(skills.TableName), IndexName: aws.String("GSI1"),
			KeyConditionExpression:    aws.String("GSI1PK = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
			Select:                    types.SelectCount,
		}
		total := 0
		for {
			out, err := client.Query(ctx, in)
			if err != nil {
				return "", err
			}
			total += int(out.Count)
			if out.LastEvaluatedKey == nil {
				break
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
		counts = append(counts, fmt.Sprintf("%s %d", pk, total))
	}
	return strings.Join(counts, ", "), nil
}

func printUsers(us []skills.User) {
	t := newTable("username", "name", "created")
	for _, u := range us {
		t.row(u.Username, u.Name, u.CreatedAt.Format(time.DateOnly))
	}
	t.flush()
}

func printSkills(ss []skills.UserSkill) {
	t := newTable("username", "skill", "level", "years", "last used", "endorsements")
	for _, s := range ss {
		t.row(s.Username, s.SkillName, s.Level, strconv.Itoa(s.Years), s.LastUsed.Format(time.DateOnly), strconv.Itoa(s.Endorsements))
	}
	if len(ss) == 0 {
		t.row("(none)")
	}
	t.flush()
}
