// Command e2e measures the library end to end against DynamoDB Local, next
// to raw aws-sdk-go-v2 code with a hand-written codec doing the same
// requests: Put, Get, Query (a 20-item page) and BatchWrite (25 puts), at
// several concurrencies. Implementation "wire" is
// the library on a client built with wire.Enable (the direct wire path). The two run interleaved in one process against one
// server (rounds alternate which goes first), so load on the machine hits
// both alike; compare the ratios.
//
//	cd bench && go run ./e2e                       # all ops, concurrency 1,4,16,64
//	cd bench && go run ./e2e -ops get -conc 16 -cpuprofile get.prof
//	cd bench && go run ./e2e -ops get -conc 64 -impl library,raw,raw-pool
//	cd bench && go run ./e2e -ops get,query -impl wire,library,raw
//	cd bench && go run ./e2e -allmem 100000        # heap while Query.All reads 100k items
//
// Per op, concurrency and implementation it prints operations per second,
// the 50th and 99th latency percentiles, and the client's CPU time per
// operation (getrusage of this process: DynamoDB Local is a separate Java
// process). It starts DynamoDB Local with ddblocal unless DYNAMODB_ENDPOINT
// points at a running one.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/benchfix"
	"github.com/singletable-go/singletable/wire"
)

var (
	opsFlag    = flag.String("ops", "put,get,query,batch", "operations to run")
	concFlag   = flag.String("conc", "1,4,16,64", "concurrencies")
	dur        = flag.Duration("dur", 2*time.Second, "duration of one measurement window")
	rounds     = flag.Int("rounds", 3, "windows per implementation (alternating)")
	impls      = flag.String("impl", "library,raw", "implementations to compare: library, wire (the library on a client built with wire.Enable), raw, and raw-pool (raw code on a client whose HTTP transport keeps -pool idle connections per host instead of the SDK's 10)")
	pool       = flag.Int("pool", 256, "idle connections per host for the raw-pool client")
	cpuProfile = flag.String("cpuprofile", "", "write a CPU profile of the measurement windows")
	idleConns  = flag.Int("idle-conns", 0, "if > 0, set the HTTP transport's MaxIdleConnsPerHost (SDK default 10)")
	allMem     = flag.Int("allmem", 0, "if > 0, instead of the comparison: write this many items to one partition and report the heap while Query.All reads them")
)

// table is the benchmark's table, one per run (DynamoDB Local may be
// shared).
var table = fmt.Sprintf("e2e-%d", os.Getpid())

const (
	users    = 2000 // items for Get
	pages    = 100  // partitions of 20 items for Query
	pageSize = 20
	putKeys  = 5000 // keys Put and BatchWrite overwrite
)

var profiles = singletable.MustDefine(singletable.Schema[benchfix.Profile]{
	Type: "Profile",
	PK:   "USER#{Username}",
	SK:   "SKILL#{SkillName}",
	Indexes: []singletable.IndexSchema[benchfix.Profile]{
		{Name: "GSI1", PK: "SKILL#{SkillName}", SK: "LEVEL#{Level}#USER#{Username}"},
	},
})

func main() {
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()
	srv, err := ddblocal.Start(ctx, ddblocal.Options{JavaArgs: []string{"-Xmx2g"}})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	client := srv.Client(func(o *dynamodb.Options) {
		if *idleConns > 0 {
			o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
				t.MaxIdleConnsPerHost = *idleConns
				t.MaxIdleConns = *idleConns
			})
		}
	})
	tbl := singletable.NewTable(client, table)
	repo := singletable.MustBind(tbl, profiles)
	if err := tbl.CreateTable(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	if err := seed(ctx, repo); err != nil {
		log.Fatal(err)
	}
	b := &bench{client: client, repo: repo,
		wireRepo: singletable.MustBind(singletable.NewTable(srv.Client(wire.Enable), table), profiles)}
	b.pooled = srv.Client(func(o *dynamodb.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConnsPerHost = *pool
			t.MaxIdleConns = *pool
		})
	})
	if *allMem > 0 {
		if err := allMemory(ctx, repo, *allMem); err != nil {
			log.Fatal(err)
		}
		return
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	fmt.Printf("# e2e: %s, GOMAXPROCS %d, %d round(s) of %s per implementation, %s\n\n",
		runtime.Version(), runtime.GOMAXPROCS(0), *rounds, *dur, time.Now().UTC().Format(time.RFC3339))
	fmt.Println("| op | conc | impl | ops/s | p50 | p99 | client CPU/op | ops/s vs raw | CPU/op vs raw |")
	fmt.Println("|---|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, op := range strings.Split(*opsFlag, ",") {
		for _, cs := range strings.Split(*concFlag, ",") {
			conc, err := strconv.Atoi(cs)
			if err != nil {
				log.Fatal(err)
			}
			b.compare(ctx, op, conc, strings.Split(*impls, ","))
		}
	}
}

// seed writes the items Get and Query read.
func seed(ctx context.Context, repo *singletable.Repo[benchfix.Profile]) error {
	var ops []singletable.WriteOp
	for i := 0; i < users; i++ {
		ops = append(ops, repo.PutOp(benchfix.Sample(i)))
	}
	for u := 0; u < pages; u++ {
		for s := 0; s < pageSize; s++ {
			p := benchfix.Sample(u)
			p.Username = fmt.Sprintf("q%03d", u)
			p.SkillName = fmt.Sprintf("skill%02d", s)
			ops = append(ops, repo.PutOp(p))
		}
	}
	return singletable.BatchWrite(ctx, ops)
}

type bench struct {
	client *dynamodb.Client
	pooled *dynamodb.Client // the same, with a larger idle connection pool
	repo   *singletable.Repo[benchfix.Profile]
	// wireRepo is repo on a client built with wire.Enable.
	wireRepo *singletable.Repo[benchfix.Profile]
}

type result struct {
	ops  int
	lat  []time.Duration
	wall time.Duration
	cpu  time.Duration
}

func (r *result) add(o result) {
	r.ops += o.ops
	r.lat = append(r.lat, o.lat...)
	r.wall += o.wall
	r.cpu += o.cpu
}

func (b *bench) compare(ctx context.Context, op string, conc int, impls []string) {
	res := make([]result, len(impls))
	perRound := make([][]result, *rounds) // [round][impl]
	for round := 0; round < *rounds; round++ {
		perRound[round] = make([]result, len(impls))
		for k := range impls {
			i := (k + round) % len(impls) // alternate who goes first
			w := b.window(ctx, op, impls[i], conc)
			perRound[round][i] = w
			res[i].add(w)
		}
	}
	base := -1
	for i, name := range impls {
		if name == "raw" {
			base = i
		}
	}
	for i, name := range impls {
		r := res[i]
		slices.Sort(r.lat)
		opsPerSec := float64(r.ops) / r.wall.Seconds()
		cpuPerOp := r.cpu / time.Duration(max(r.ops, 1))
		vs, cvs := "", ""
		if base >= 0 && i != base {
			bo := float64(res[base].ops) / res[base].wall.Seconds()
			bc := res[base].cpu / time.Duration(max(res[base].ops, 1))
			vs = fmt.Sprintf("%.3f %s", opsPerSec/bo, roundRatios(perRound, i, base, throughput))
			cvs = fmt.Sprintf("%.3f %s", float64(cpuPerOp)/float64(bc), roundRatios(perRound, i, base, cpuPerOpOf))
		}
		fmt.Printf("| %s | %d | %s | %.0f | %s | %s | %s | %s | %s |\n", op, conc, name, opsPerSec,
			pct(r.lat, 0.50), pct(r.lat, 0.99), cpuPerOp.Round(100*time.Nanosecond), vs, cvs)
	}
}

// roundRatios compares impl i with base round by round (the two windows of
// a round run back to back, so a change in the machine's load between
// rounds cancels out) on metric m and returns the median ratio of the
// rounds and the interquartile range.
func roundRatios(perRound [][]result, i, base int, m func(result) float64) string {
	var ratios []float64
	for _, r := range perRound {
		a, b := r[i], r[base]
		if a.ops == 0 || b.ops == 0 {
			continue
		}
		ratios = append(ratios, m(a)/m(b))
	}
	if len(ratios) == 0 {
		return ""
	}
	slices.Sort(ratios)
	q := func(p float64) float64 { return ratios[min(len(ratios)-1, int(float64(len(ratios)-1)*p+0.5))] }
	return fmt.Sprintf("(rounds: median %.3f, IQR %.3f–%.3f)", q(0.5), q(0.25), q(0.75))
}

// The metrics roundRatios compares.
func cpuPerOpOf(r result) float64 { return float64(r.cpu) / float64(r.ops) }
func throughput(r result) float64 { return float64(r.ops) / r.wall.Seconds() }

func pct(l []time.Duration, p float64) string {
	if len(l) == 0 {
		return "-"
	}
	d := l[min(len(l)-1, int(float64(len(l))*p))]
	return d.Round(10 * time.Microsecond).String()
}

// window runs one implementation of op at concurrency conc for *dur.
func (b *bench) window(ctx context.Context, op, impl string, conc int) result {
	fn := b.op(op, impl)
	runtime.GC()
	start, cpu0 := time.Now(), benchfix.ProcessCPU()
	deadline := start.Add(*dur)
	lats := make([][]time.Duration, conc)
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := fn(ctx, r); err != nil {
					log.Fatalf("%s %s: %v", impl, op, err)
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
		}(w)
	}
	wg.Wait()
	res := result{wall: time.Since(start), cpu: benchfix.ProcessCPU() - cpu0}
	for _, l := range lats {
		res.ops += len(l)
		res.lat = append(res.lat, l...)
	}
	return res
}

type opFunc func(context.Context, *rand.Rand) error

func s(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }

// rawItem is the item the library writes for p, built by hand.
func rawItem(p *benchfix.Profile) map[string]types.AttributeValue {
	item := benchfix.HandEncode(p)
	benchfix.AddKeys(item, p)
	return item
}

func putSample(r *rand.Rand) benchfix.Profile {
	p := benchfix.Sample(r.IntN(putKeys))
	p.Username = "w" + p.Username
	return p
}

func (b *bench) op(op, impl string) opFunc {
	c, repo := b.client, b.repo
	name := aws.String(table)
	switch impl {
	case "raw-pool":
		c, impl = b.pooled, "raw"
	case "wire":
		repo, impl = b.wireRepo, "library"
	}
	switch op + "/" + impl {
	case "put/library":
		return func(ctx context.Context, r *rand.Rand) error { _, err := repo.Put(ctx, putSample(r)); return err }
	case "put/raw":
		return func(ctx context.Context, r *rand.Rand) error {
			p := putSample(r)
			// The same condition the library sends: replace only an item
			// of this entity type, or none.
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: name, Item: rawItem(&p),
				ConditionExpression:                 aws.String("attribute_not_exists(#pk) OR #type = :type"),
				ExpressionAttributeNames:            map[string]string{"#pk": "PK", "#type": "EntityType"},
				ExpressionAttributeValues:           map[string]types.AttributeValue{":type": &types.AttributeValueMemberS{Value: "Profile"}},
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
			return err
		}
	case "get/library":
		return func(ctx context.Context, r *rand.Rand) error {
			p := benchfix.Sample(r.IntN(users))
			_, err := repo.Get(ctx, benchfix.Profile{Username: p.Username, SkillName: p.SkillName})
			return err
		}
	case "get/raw":
		return func(ctx context.Context, r *rand.Rand) error {
			p := benchfix.Sample(r.IntN(users))
			out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: name, Key: map[string]types.AttributeValue{
				"PK": s("USER#" + p.Username), "SK": s("SKILL#" + p.SkillName)}})
			if err != nil {
				return err
			}
			if et, ok := out.Item["EntityType"].(*types.AttributeValueMemberS); !ok || et.Value != "Profile" {
				return fmt.Errorf("item %s not found", p.Username)
			}
			var got benchfix.Profile
			return benchfix.HandDecode(out.Item, &got)
		}
	case "query/library":
		return func(ctx context.Context, r *rand.Rand) error {
			page, err := repo.Query(benchfix.Profile{Username: fmt.Sprintf("q%03d", r.IntN(pages))}).Page(ctx)
			if err == nil && len(page.Items) != pageSize {
				err = fmt.Errorf("query returned %d items", len(page.Items))
			}
			return err
		}
	case "query/raw":
		return func(ctx context.Context, r *rand.Rand) error {
			out, err := c.Query(ctx, &dynamodb.QueryInput{
				TableName:                 name,
				KeyConditionExpression:    aws.String("(#1 = :1) AND (begins_with (#2, :2))"),
				FilterExpression:          aws.String("#0 = :0"),
				ExpressionAttributeNames:  map[string]string{"#0": "EntityType", "#1": "PK", "#2": "SK"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":0": s("Profile"), ":1": s(fmt.Sprintf("USER#q%03d", r.IntN(pages))), ":2": s("SKILL#")},
			})
			if err != nil {
				return err
			}
			ps := make([]benchfix.Profile, len(out.Items))
			for i, it := range out.Items {
				if err := benchfix.HandDecode(it, &ps[i]); err != nil {
					return err
				}
			}
			if len(ps) != pageSize {
				return fmt.Errorf("query returned %d items", len(ps))
			}
			return nil
		}
	case "batch/library":
		return func(ctx context.Context, r *rand.Rand) error {
			ops := make([]singletable.WriteOp, 25)
			base := r.IntN(putKeys / 25)
			for i := range ops {
				p := benchfix.Sample(base*25 + i)
				p.Username = "w" + p.Username
				ops[i] = repo.PutOp(p)
			}
			return singletable.BatchWrite(ctx, ops)
		}
	case "batch/raw":
		return func(ctx context.Context, r *rand.Rand) error {
			reqs := make([]types.WriteRequest, 25)
			base := r.IntN(putKeys / 25)
			for i := range reqs {
				p := benchfix.Sample(base*25 + i)
				p.Username = "w" + p.Username
				reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: rawItem(&p)}}
			}
			in := &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: reqs}}
			for attempt := 0; ; attempt++ {
				out, err := c.BatchWriteItem(ctx, in)
				if err != nil {
					return err
				}
				if len(out.UnprocessedItems) == 0 {
					return nil
				}
				if attempt == 10 {
					return fmt.Errorf("unprocessed items after %d attempts", attempt)
				}
				time.Sleep(time.Duration(1<<attempt) * time.Millisecond)
				in.RequestItems = out.UnprocessedItems
			}
		}
	}
	log.Fatalf("unknown op/impl %s/%s", op, impl)
	return nil
}

// allMemory writes n items into one partition, then reads them all with
// Query.All and reports the largest live heap seen (sampled every 500
// items, after the GC that the reading itself triggers): with one page held
// at a time it stays near the size of one page, not of n items.
func allMemory(ctx context.Context, repo *singletable.Repo[benchfix.Profile], n int) error {
	start := time.Now()
	for i := 0; i < n; i += 1000 {
		var ops []singletable.WriteOp
		for j := i; j < min(n, i+1000); j++ {
			p := benchfix.Sample(j)
			p.Username = "big"
			p.SkillName = fmt.Sprintf("s%07d", j)
			ops = append(ops, repo.PutOp(p))
		}
		if err := singletable.BatchWrite(ctx, ops); err != nil {
			return err
		}
	}
	log.Printf("wrote %d items in %s", n, time.Since(start).Round(time.Millisecond))
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := live()
	var peak uint64
	count := 0
	start = time.Now()
	var keep []benchfix.Profile // what holding everything would cost, for scale
	for p, err := range repo.Query(benchfix.Profile{Username: "big"}).All(ctx) {
		if err != nil {
			return err
		}
		count++
		if count%500 == 0 {
			peak = max(peak, live())
		}
		if count <= 1000 {
			keep = append(keep, p)
		}
	}
	elapsed := time.Since(start)
	runtime.GC()
	perItem := float64(live()-base) / float64(len(keep))
	fmt.Printf("Query.All over %d items: read in %s; live heap before %.1f MiB, peak while reading %.1f MiB above it "+
		"(holding all %d decoded items would take about %.0f MiB)\n",
		count, elapsed.Round(time.Millisecond), mib(base), mib(peak-min(peak, base)), count, perItem*float64(count)/(1<<20))
	runtime.KeepAlive(keep)
	return nil
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
