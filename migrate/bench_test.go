package migrate_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/migrate"
)

// Copy throughput against DynamoDB Local, and the raw SDK's batch-write
// throughput of the same items as the ceiling. See docs/migrations.md for
// the commands and results.

const benchItems = 10000

var benchSource struct {
	once sync.Once
	name string
}

// benchLegacyTable is one legacy users table shared by the benchmarks (it
// lives as long as the test binary's DynamoDB Local).
func benchLegacyTable(b *testing.B) string {
	benchSource.once.Do(func() {
		c := ddblocal.Shared(b).Client()
		name := fmt.Sprintf("bench-legacy-users-%d", time.Now().UnixNano())
		pk := "username"
		_, err := c.CreateTable(context.Background(), &dynamodb.CreateTableInput{
			TableName:            &name,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: &pk, AttributeType: types.ScalarAttributeTypeS}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: &pk, KeyType: types.KeyTypeHash}},
			BillingMode:          types.BillingModePayPerRequest,
		})
		if err != nil {
			b.Fatal(err)
		}
		items := make([]map[string]types.AttributeValue, benchItems)
		for i := range items {
			items[i] = legacyItem(i)
		}
		seedRaw(b, c, name, items)
		benchSource.name = name
	})
	return benchSource.name
}

// BenchmarkMigrateCopy copies a 10,000-user legacy table into a fresh
// glad-entities table per iteration, for several segments × writers.
func BenchmarkMigrateCopy(b *testing.B) {
	src := benchLegacyTable(b)
	for _, segments := range []int{1, 4, 8} {
		for _, writers := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("segments=%d/writers=%d", segments, writers), func(b *testing.B) {
				var written int64
				var elapsed time.Duration
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					tbl, users, _ := usersTarget(b)
					m, err := migrate.New(tbl, migrate.Copy("bench", migrate.Source{Table: src}, usersTransform(users)))
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					start := time.Now()
					rep, err := m.Run(context.Background(), "bench", func(o *migrate.RunOptions) {
						o.Segments, o.Writers = segments, writers
					})
					elapsed += time.Since(start)
					if err != nil {
						b.Fatal(err)
					}
					written += rep.Counts.Written
				}
				b.ReportMetric(float64(written)/elapsed.Seconds(), "items/s")
			})
		}
	}
}

// BenchmarkRawBatchWrite writes the same 9,900 rendered User items with
// hand-written BatchWriteItem calls (25 items each, unprocessed items
// resent), W requests in flight: the ceiling for a copy.
func BenchmarkRawBatchWrite(b *testing.B) {
	for _, writers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			var written int64
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				tbl, users, _ := usersTarget(b)
				c := ddblocal.Shared(b).Client()
				var items []map[string]types.AttributeValue
				for j := range benchItems {
					if j%100 == 42 {
						continue
					}
					ops, err := usersTransform(users)(legacyItem(j))
					if err != nil {
						b.Fatal(err)
					}
					items = append(items, ops[0].Item())
				}
				b.StartTimer()
				start := time.Now()
				rawWrite(b, c, tbl.Name(), items, writers)
				elapsed += time.Since(start)
				written += int64(len(items))
			}
			b.ReportMetric(float64(written)/elapsed.Seconds(), "items/s")
		})
	}
}

// BenchmarkRawScan scans the legacy table with pages of 1,000 items in
// parallel segments: the read side's ceiling.
func BenchmarkRawScan(b *testing.B) {
	src := benchLegacyTable(b)
	c := ddblocal.Shared(b).Client()
	for _, segments := range []int{1, 4} {
		b.Run(fmt.Sprintf("segments=%d", segments), func(b *testing.B) {
			var read int64
			start := time.Now()
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				var mu sync.Mutex
				for seg := range segments {
					wg.Add(1)
					go func() {
						defer wg.Done()
						in := &dynamodb.ScanInput{TableName: &src, Limit: ptr(int32(1000)), Segment: ptr(int32(seg)), TotalSegments: ptr(int32(segments))}
						for {
							out, err := c.Scan(context.Background(), in)
							if err != nil {
								b.Error(err)
								return
							}
							mu.Lock()
							read += int64(len(out.Items))
							mu.Unlock()
							if len(out.LastEvaluatedKey) == 0 {
								return
							}
							in.ExclusiveStartKey = out.LastEvaluatedKey
						}
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(float64(read)/time.Since(start).Seconds(), "items/s")
		})
	}
}

func ptr[T any](v T) *T { return &v }

// rawWrite writes items with BatchWriteItem, writers requests in flight.
func rawWrite(b *testing.B, c *dynamodb.Client, table string, items []map[string]types.AttributeValue, writers int) {
	chunks := make(chan []map[string]types.AttributeValue)
	var wg sync.WaitGroup
	for range writers {
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
					out, err := c.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{RequestItems: in})
					if err != nil {
						b.Error(err)
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
}

// BenchmarkMigrateCopyVsRaw alternates a copy (4 segments, 16 writers)
// and the raw batch write of the same items (16 writers) in every
// iteration, so that both see the same machine load, and reports the
// ratio of their throughputs.
func BenchmarkMigrateCopyVsRaw(b *testing.B) {
	src := benchLegacyTable(b)
	c := ddblocal.Shared(b).Client()
	var copyTime, rawTime time.Duration
	var copied, raw int64
	for i := 0; i < b.N; i++ {
		tbl, users, _ := usersTarget(b)
		var items []map[string]types.AttributeValue
		for j := range benchItems {
			if j%100 == 42 {
				continue
			}
			ops, err := usersTransform(users)(legacyItem(j))
			if err != nil {
				b.Fatal(err)
			}
			items = append(items, ops[0].Item())
		}
		start := time.Now()
		rawWrite(b, c, tbl.Name(), items, 16)
		rawTime += time.Since(start)
		raw += int64(len(items))

		tbl2, users2, _ := usersTarget(b)
		m, err := migrate.New(tbl2, migrate.Copy("bench", migrate.Source{Table: src}, usersTransform(users2)))
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		rep, err := m.Run(context.Background(), "bench", func(o *migrate.RunOptions) { o.Segments, o.Writers = 4, 16 })
		copyTime += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		copied += rep.Counts.Written
	}
	copyRate, rawRate := float64(copied)/copyTime.Seconds(), float64(raw)/rawTime.Seconds()
	b.ReportMetric(copyRate, "copy-items/s")
	b.ReportMetric(rawRate, "raw-items/s")
	b.ReportMetric(copyRate/rawRate, "copy/raw")
}
