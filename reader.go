package singletable

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The page loop of the reads that hand items to a callback one at a time:
// collections (a Query), typed scans and table scans (a Scan). One loop
// gives them the same Limit, cursor and exact-fit rules.

// source is the request a reader sends page after page: a Query or a Scan.
type source struct {
	query *dynamodb.QueryInput
	scan  *dynamodb.ScanInput
}

func (s source) setStart(k map[string]types.AttributeValue) {
	if s.query != nil {
		s.query.ExclusiveStartKey = k
	} else {
		s.scan.ExclusiveStartKey = k
	}
}

func (s source) setLimit(n *int32) {
	if s.query != nil {
		s.query.Limit = n
	} else {
		s.scan.Limit = n
	}
}

// clone copies the request (not the maps it shares), for a lookahead.
func (s source) clone() source {
	if s.query != nil {
		q := *s.query
		return source{query: &q}
	}
	sc := *s.scan
	return source{scan: &sc}
}

// send sends the request once.
func (s source) send(ctx context.Context, c Client) (items []map[string]types.AttributeValue, next map[string]types.AttributeValue, count int32, err error) {
	if s.query != nil {
		out, err := c.Query(ctx, s.query)
		if err != nil {
			return nil, nil, 0, err
		}
		return out.Items, out.LastEvaluatedKey, out.Count, nil
	}
	out, err := c.Scan(ctx, s.scan)
	if err != nil {
		return nil, nil, 0, err
	}
	return out.Items, out.LastEvaluatedKey, out.Count, nil
}

// takeFn delivers one item read; taken is false when the item was skipped
// (it does not count towards Limit). errStop ends the read without error.
type takeFn func(item map[string]types.AttributeValue) (taken bool, err error)

// errStop is a takeFn's way to end a read (the caller's loop broke).
var errStop = errors.New("singletable: read stopped")

// reader reads pages of one source.
type reader struct {
	t     *Table
	src   source
	limit int // items wanted in all (a page's, or All's), 0 for every item
	// size makes each request ask for the items still wanted, plus one,
	// so that a page ending the read says so: set when every item read
	// counts (no filter drops any, none is skipped) and no PageSize is set.
	size bool
	// probeOne lets a lookahead read one item per request: nothing
	// filters the items on the server.
	probeOne   bool
	bind       [16]byte
	cursorKeys []string
	what       string // names the read in errors: "collection query", "scan User"
	entity     string // the entity read, for the Observe hook; "" for several
	// counts reports whether an item would be taken (not skipped); a
	// lookahead uses it without delivering the item.
	counts func(item map[string]types.AttributeValue) bool
}

func (rd *reader) sizeNext(delivered int) {
	if rd.size && rd.limit > 0 {
		rd.src.setLimit(aws.Int32(int32(min(rd.limit-delivered+1, 1000))))
	}
}

func (rd *reader) sendErr(err error) error {
	return fmt.Errorf("singletable: %s: %w", rd.what, err)
}

// page reads one page: with a limit, exactly limit items unless the read
// runs out; without, the items of one response (reading on past
// responses that held none). The cursor is "" when no item follows.
func (rd *reader) page(ctx context.Context, take takeFn) (string, error) {
	delivered := 0
	for {
		rd.sizeNext(delivered)
		items, next, _, err := rd.src.send(ctx, rd.t.api(ctx, rd.entity))
		if err != nil {
			return "", rd.sendErr(err)
		}
		for i, item := range items {
			ok, err := take(item)
			if err != nil {
				return "", err
			}
			if !ok {
				continue
			}
			delivered++
			if rd.limit > 0 && delivered == rd.limit {
				more, err := rd.moreIn(ctx, items[i+1:], next)
				if err != nil || !more {
					return "", err
				}
				return rd.t.encodeCursor(rd.bind, rd.cursorKeys, item)
			}
		}
		if next == nil {
			return "", nil
		}
		if rd.limit == 0 && delivered > 0 {
			more, err := rd.moreIn(ctx, nil, next)
			if err != nil || !more {
				return "", err
			}
			return rd.t.encodeCursor(rd.bind, rd.cursorKeys, next)
		}
		rd.src.setStart(next)
	}
}

// moreIn reports whether an item that counts follows: among rest (the
// response's items after the page's last), or after next.
func (rd *reader) moreIn(ctx context.Context, rest []map[string]types.AttributeValue, next map[string]types.AttributeValue) (bool, error) {
	for _, item := range rest {
		if rd.counts(item) {
			return true, nil
		}
	}
	if next == nil {
		return false, nil
	}
	// A lookahead: the page ended where a response ended. Read on until
	// an item that counts or the end, so that the cursor never leads to
	// an empty page. It costs one request (more when filters or skipped
	// items empty the responses).
	probe := rd.src.clone()
	if rd.probeOne {
		probe.setLimit(aws.Int32(1))
	}
	for start := next; start != nil; {
		probe.setStart(start)
		items, n, _, err := probe.send(ctx, rd.t.api(ctx, rd.entity))
		if err != nil {
			return false, rd.sendErr(err)
		}
		for _, item := range items {
			if rd.counts(item) {
				return true, nil
			}
		}
		start = n
	}
	return false, nil
}

// all reads every item (at most limit), one response at a time.
func (rd *reader) all(ctx context.Context, take takeFn) error {
	delivered := 0
	for {
		rd.sizeNext(delivered)
		items, next, _, err := rd.src.send(ctx, rd.t.api(ctx, rd.entity))
		if err != nil {
			return rd.sendErr(err)
		}
		for _, item := range items {
			ok, err := take(item)
			if err == errStop {
				return nil
			}
			if err != nil {
				return err
			}
			if ok {
				delivered++
				if rd.limit > 0 && delivered == rd.limit {
					return nil
				}
			}
		}
		if next == nil {
			return nil
		}
		rd.src.setStart(next)
	}
}

// count counts the items the source matches with Select COUNT.
func (rd *reader) count(ctx context.Context) (int, error) {
	total := 0
	for {
		_, next, n, err := rd.src.send(ctx, rd.t.api(ctx, rd.entity))
		if err != nil {
			return 0, rd.sendErr(err)
		}
		total += int(n)
		if next == nil {
			return total, nil
		}
		rd.src.setStart(next)
	}
}
