// Command soak runs mixed traffic against DynamoDB Local from many
// goroutines for a fixed number of operations, optionally through injected
// faults, and then checks the table's invariants:
//
//   - counters are exact (every increment is Idempotent and retried with
//     its token until acknowledged);
//   - versions never go backwards, and each account's stored version is at
//     least the last one a writer was told it wrote;
//   - unique email guards match their owners: no email held twice, one
//     guard item per held email pointing at its holder, no orphan guard;
//   - the sparse "open tasks" index holds exactly the open tasks.
//
// It is not part of `go test`: run it with `make soak` (or `go run ./soak`
// from the bench folder). It starts its own DynamoDB Local unless
// -endpoint is given, and exits 1 if an invariant fails.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
)

// Account has a unique email, a version and managed timestamps.
type Account struct {
	ID      string    `dynamodbav:"ID"`
	Email   string    `dynamodbav:"Email,omitempty"`
	Name    string    `dynamodbav:"Name"`
	Version int       `dynamodbav:"Version"`
	Updated time.Time `dynamodbav:"UpdatedAt"`
}

// Counter is incremented idempotently.
type Counter struct {
	Name string `dynamodbav:"Name"`
	N    int    `dynamodbav:"N"`
}

// Task is in the sparse OpenTasks index while it is open.
type Task struct {
	List   string `dynamodbav:"List"`
	ID     int    `dynamodbav:"ID"`
	Status string `dynamodbav:"Status"`
}

var (
	accountsDef = singletable.MustDefine(singletable.Schema[Account]{
		Type: "Account", PK: "ACCOUNT#{ID}", SK: "ACCOUNT",
		Unique: []singletable.Unique{{Fields: []string{"Email"}}}, Version: "Version", UpdatedAt: "Updated",
	})
	countersDef = singletable.MustDefine(singletable.Schema[Counter]{Type: "Counter", PK: "COUNTER#{Name}", SK: "COUNTER"})
	tasksDef    = singletable.MustDefine(singletable.Schema[Task]{
		Type: "Task", PK: "LIST#{List}", SK: "TASK#{ID}",
		Indexes: []singletable.IndexSchema[Task]{{
			Name: "GSI1", PK: "OPEN#{List}", SK: "TASK#{ID}",
			When: func(t Task) bool { return t.Status == "open" }, WhenFields: []string{"Status"},
		}},
	})
)

type soak struct {
	accounts *singletable.Repo[Account]
	counters *singletable.Repo[Counter]
	tasks    *singletable.Repo[Task]
	table    *singletable.Table
	// The same repositories through a client without faults, to check.
	checkAccounts *singletable.Repo[Account]
	checkCounters *singletable.Repo[Counter]
	checkTasks    *singletable.Repo[Task]
	check         *singletable.Table

	nAccounts, nEmails, nCounters, nTasks int
	run                                   string // makes idempotency tokens unique to this run

	ops, errs  atomic.Int64
	increments []atomic.Int64 // acknowledged increments per counter

	mu          sync.Mutex
	lastVersion map[string]int // the highest version a writer was told it wrote, per account
	violations  []string
}

func (s *soak) violate(format string, args ...any) {
	s.mu.Lock()
	s.violations = append(s.violations, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func main() {
	ops := flag.Int("ops", 20000, "operations to run in all")
	workers := flag.Int("workers", 64, "goroutines sending traffic")
	rate := flag.Float64("fault-rate", 0, "share of requests that get an injected fault (0 to 1)")
	seed := flag.Uint64("seed", 1, "seed of the traffic mix and the faults")
	endpoint := flag.String("endpoint", os.Getenv("DYNAMODB_ENDPOINT"), "DynamoDB Local endpoint; empty starts one")
	flag.Parse()
	if err := soakRun(*ops, *workers, *rate, *seed, *endpoint); err != nil {
		log.Fatal(err)
	}
}

func soakRun(ops, workers int, rate float64, seed uint64, endpoint string) error {
	ctx := context.Background()
	if endpoint == "" {
		srv, err := ddblocal.Start(ctx, ddblocal.Options{})
		if err != nil {
			return err
		}
		defer srv.Stop()
		endpoint = srv.Endpoint()
	}
	ft := ddbfault.New(nil, ddbfault.Config{Seed: seed, Rate: rate})
	ft.SetEnabled(false)
	client := ddblocal.NewClient(endpoint, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: ft} })
	plain := ddblocal.NewClient(endpoint)
	name := fmt.Sprintf("soak-%d", time.Now().UnixNano())

	s := &soak{nAccounts: 400, nEmails: 150, nCounters: 8, nTasks: 500, lastVersion: map[string]int{},
		run: fmt.Sprintf("%08x", rand.Uint32())}
	s.increments = make([]atomic.Int64, s.nCounters)
	s.table = singletable.NewTable(client, name)
	s.accounts = singletable.MustBind(s.table, accountsDef)
	s.counters = singletable.MustBind(s.table, countersDef)
	s.tasks = singletable.MustBind(s.table, tasksDef)
	s.check = singletable.NewTable(plain, name)
	s.checkAccounts = singletable.MustBind(s.check, accountsDef)
	s.checkCounters = singletable.MustBind(s.check, countersDef)
	s.checkTasks = singletable.MustBind(s.check, tasksDef)
	if err := s.table.CreateTable(ctx); err != nil {
		return err
	}
	defer plain.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &name})

	ft.SetEnabled(true)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for {
				i := next.Add(1)
				if i > int64(ops) {
					return
				}
				s.step(ctx, rng, i)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	ft.SetEnabled(false)
	st := ft.Stats()
	fmt.Printf("soak: %d operations from %d goroutines in %v (%.0f ops/s), %d returned an error; %d requests, %d faults injected %v\n",
		s.ops.Load(), workers, elapsed.Round(time.Millisecond), float64(s.ops.Load())/elapsed.Seconds(), s.errs.Load(), st.Requests, st.Total(), st.Faults)

	checked, err := s.verify(ctx)
	if err != nil {
		return err
	}
	if len(s.violations) > 0 {
		for _, v := range s.violations {
			fmt.Println("VIOLATION:", v)
		}
		return fmt.Errorf("soak: %d invariant violations", len(s.violations))
	}
	fmt.Printf("soak: invariants hold over %d items: counters exact, versions monotonic, guards consistent with owners, no orphan guard, sparse index exact\n", checked)
	return nil
}

// step runs one operation chosen at random.
func (s *soak) step(ctx context.Context, rng *rand.Rand, i int64) {
	var err error
	switch p := rng.IntN(100); {
	case p < 25:
		err = s.increment(ctx, rng, i)
	case p < 55:
		err = s.writeAccount(ctx, rng)
	case p < 80:
		t := Task{List: fmt.Sprint("l", rng.IntN(5)), ID: rng.IntN(s.nTasks), Status: []string{"open", "done", "archived"}[rng.IntN(3)]}
		if rng.IntN(2) == 0 {
			_, err = s.tasks.Put(ctx, t)
		} else {
			_, err = s.tasks.Update(Task{List: t.List, ID: t.ID}).Set("Status", t.Status).Upsert().Run(ctx)
		}
	default:
		err = s.readAccount(ctx, rng)
	}
	s.ops.Add(1)
	if err != nil {
		s.errs.Add(1)
	}
}

// increment adds one to a counter with a token, retrying until
// acknowledged: the count must end exact.
func (s *soak) increment(ctx context.Context, rng *rand.Rand, i int64) error {
	c := rng.IntN(s.nCounters)
	token := fmt.Sprintf("%s-%d", s.run, i)
	var err error
	for try := 0; try < 100; try++ {
		if _, err = s.counters.Update(Counter{Name: fmt.Sprint(c)}).Add("N", 1).Upsert().Idempotent(token).Run(ctx); err == nil {
			s.increments[c].Add(1)
			return nil
		}
	}
	s.violate("increment %s of counter %d never acknowledged: %v", token, c, err)
	return err
}

// writeAccount creates, changes (email and name, version-checked) or
// deletes an account.
func (s *soak) writeAccount(ctx context.Context, rng *rand.Rand) error {
	id := fmt.Sprint(rng.IntN(s.nAccounts))
	email := ""
	if rng.IntN(4) > 0 {
		email = fmt.Sprintf("e%d@example.com", rng.IntN(s.nEmails))
	}
	cur, err := s.accounts.Get(ctx, Account{ID: id}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	switch {
	case errors.Is(err, singletable.ErrNotFound):
		_, err = s.accounts.Create(ctx, Account{ID: id, Email: email, Name: "new"})
		if err == nil {
			s.wrote(id, 1)
		}
		return err
	case err != nil:
		return err
	}
	s.saw(id, cur.Version)
	if rng.IntN(5) == 0 {
		_, err = s.accounts.Delete(ctx, Account{ID: id, Version: cur.Version})
		return err
	}
	cur.Email, cur.Name = email, fmt.Sprint("n", rng.IntN(1000))
	if _, err = s.accounts.Put(ctx, cur); err == nil {
		s.wrote(id, cur.Version+1)
	}
	return err
}

func (s *soak) readAccount(ctx context.Context, rng *rand.Rand) error {
	id := fmt.Sprint(rng.IntN(s.nAccounts))
	a, err := s.accounts.Get(ctx, Account{ID: id}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	if err == nil {
		s.saw(id, a.Version)
	}
	if errors.Is(err, singletable.ErrNotFound) {
		return nil
	}
	return err
}

// wrote records a version a writer was told it wrote.
func (s *soak) wrote(id string, v int) {
	s.mu.Lock()
	if v > s.lastVersion[id] {
		s.lastVersion[id] = v
	}
	s.mu.Unlock()
}

// saw checks a version read against the highest acknowledged one. A
// deleted and re-created account starts again at 1, so only a live
// account whose version went backwards while it still existed is flagged
// at the end (verify); here the read only raises nothing.
func (s *soak) saw(id string, v int) {
	s.mu.Lock()
	last := s.lastVersion[id]
	s.mu.Unlock()
	if v < last && v > 1 {
		s.violate("account %s read at version %d after version %d was acknowledged", id, v, last)
	}
}

// verify checks the invariants through the fault-free client and returns
// how many items it checked.
func (s *soak) verify(ctx context.Context) (int, error) {
	accounts, counters, tasks := s.checkAccounts, s.checkCounters, s.checkTasks
	checked := 0

	for c := range s.nCounters {
		checked++
		got, err := counters.Get(ctx, Counter{Name: fmt.Sprint(c)}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		if errors.Is(err, singletable.ErrNotFound) {
			got, err = Counter{}, nil
		}
		if err != nil {
			return checked, err
		}
		if want := int(s.increments[c].Load()); got.N != want {
			s.violate("counter %d is %d; %d increments were acknowledged", c, got.N, want)
		}
	}

	items, err := scanAll(ctx, s.check)
	if err != nil {
		return checked, err
	}
	holder := map[string]string{} // email → account ID
	type guard struct{ pk, owner string }
	var guards []guard
	openTasks := map[string]bool{}
	for _, it := range items {
		checked++
		switch str(it, "EntityType") {
		case "Account":
			id, email := str(it, "ID"), str(it, "Email")
			if email != "" {
				if other, dup := holder[email]; dup {
					s.violate("email %s held by accounts %s and %s", email, other, id)
				}
				holder[email] = id
			}
		case singletable.UniqueGuardType:
			guards = append(guards, guard{pk: str(it, "PK"), owner: strings.TrimPrefix(str(it, "OwnerPK"), "ACCOUNT#")})
		case "Task":
			if str(it, "Status") == "open" {
				openTasks[str(it, "List")+"|"+num(it, "ID")] = true
			}
		}
	}
	for _, g := range guards {
		email := g.pk[strings.LastIndexByte(g.pk, '#')+1:]
		if holder[email] != g.owner {
			s.violate("guard %s belongs to account %s, but %s holds that email (orphan or stale guard)", g.pk, g.owner, holder[email])
		}
	}
	if len(guards) != len(holder) {
		s.violate("%d guard items for %d held emails", len(guards), len(holder))
	}

	// Versions: a live account is at least at the last version acknowledged
	// (unless it was deleted and re-created since, which starts it at 1).
	for id, last := range s.lastVersion {
		a, err := accounts.Get(ctx, Account{ID: id}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
		if errors.Is(err, singletable.ErrNotFound) {
			continue
		}
		if err != nil {
			return checked, err
		}
		if a.Version < last && a.Version > 1 {
			s.violate("account %s at version %d; version %d was acknowledged", id, a.Version, last)
		}
	}

	// The sparse index holds exactly the open tasks.
	inIndex := 0
	for l := range 5 {
		got, err := tasks.QueryIndex("GSI1", Task{List: fmt.Sprint("l", l)}).Collect(ctx)
		if err != nil {
			return checked, err
		}
		for _, t := range got {
			inIndex++
			key := fmt.Sprintf("%s|%d", t.List, t.ID)
			if !openTasks[key] {
				s.violate("task %s is in the open index with status %q", key, t.Status)
			}
		}
	}
	if inIndex != len(openTasks) {
		s.violate("%d tasks in the open index for %d open tasks", inIndex, len(openTasks))
	}
	return checked, nil
}

// scanAll reads every item of the table (fault-free client).
func scanAll(ctx context.Context, t *singletable.Table) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	name := t.Name()
	in := &dynamodb.ScanInput{TableName: &name, Limit: aws.Int32(1000)}
	for {
		page, err := t.Client().Scan(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

func num(item map[string]types.AttributeValue, a string) string {
	if n, ok := item[a].(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return ""
}

func str(item map[string]types.AttributeValue, a string) string {
	if s, ok := item[a].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
