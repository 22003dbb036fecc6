// Package paging is the loop every Query and Scan pages through, and the
// feeds it reads: one request sent page after page (asking for the items
// still wanted plus one, so that a page ending with the read says so),
// the lookahead of a page's exact fit, the segments of a parallel scan
// and the merge of a write-sharded index's shards (shards.go). It sends
// through a Client with Query and Scan only and knows nothing of
// entities: the caller's Take decodes or routes the items read.
package paging

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/singletable-go/singletable/internal/cursor"
)

// Item is an item as DynamoDB returns it.
type Item = map[string]types.AttributeValue

// Client sends the requests; the root's Client is one.
type Client interface {
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Feed is what the loop reads from.
type Feed interface {
	// Next returns the next items read and whether they are the last;
	// want is how many items the read still wants (0: no limit).
	Next(ctx context.Context, want int) (items []Item, last bool, err error)
}

// Pager is a Feed a page can end in.
type Pager interface {
	Feed
	// Ahead reports whether an item that counts follows those Next
	// returned: a lookahead, which sends requests.
	Ahead(ctx context.Context, counts func(Item) bool) (bool, error)
	// Cursor resumes after item, the page's last, or, item nil, after
	// everything Next returned.
	Cursor(item Item) (string, error)
}

// Take takes one item read; taken is false when the item was skipped.
// left, how many items the read may still take from this response, is a
// hint to grow a slice once. ErrStop ends the read without error.
type Take func(item Item, left int) (taken bool, err error)

// ErrStop is a Take's way to end a read (the caller's loop broke).
var ErrStop = errors.New("singletable: read stopped")

// End ends the pages of a read: Counts tells whether an item would be
// taken, for the exact fit.
type End struct {
	Pager  Pager
	Counts func(Item) bool
}

// Paginate, the loop every read pages through, reads f's items into take,
// at most limit (0: every item). With an End it reads one page (without
// limit, one response's items) and returns its cursor.
func Paginate(ctx context.Context, f Feed, limit int, take Take, end *End) (string, error) {
	taken := 0
	for {
		want := 0
		if limit > 0 {
			want = limit - taken
		}
		items, last, err := f.Next(ctx, want)
		if err != nil {
			return "", err
		}
		for i, item := range items {
			left := len(items) - i
			if want > 0 {
				left = min(left, limit-taken)
			}
			ok, err := take(item, left)
			if err == ErrStop {
				return "", nil
			}
			if err != nil {
				return "", err
			}
			if !ok {
				continue
			}
			taken++
			if taken == limit {
				return end.cursor(ctx, items[i+1:], last, item)
			}
		}
		if last {
			return "", nil
		}
		if limit == 0 && taken > 0 && end != nil {
			return end.cursor(ctx, nil, false, nil)
		}
	}
}

// cursor is the exact fit: the cursor after item (nil: after the
// response), "" unless an item that counts follows in rest or read ahead.
func (e *End) cursor(ctx context.Context, rest []Item, last bool, item Item) (string, error) {
	if e == nil {
		return "", nil
	}
	if !slices.ContainsFunc(rest, e.Counts) {
		if last {
			return "", nil
		}
		more, err := e.Pager.Ahead(ctx, e.Counts)
		if err != nil || !more {
			return "", err
		}
	}
	return e.Pager.Cursor(item)
}

// ReadAll reads every item of fs (at most limit) into take: in this
// goroutine for one feed, else one goroutine per feed (a parallel scan's
// segments), whose responses the calling goroutine alone takes.
func ReadAll(ctx context.Context, fs []Feed, limit int, take Take) error {
	f := fs[0]
	if len(fs) > 1 {
		s := readSegments(ctx, fs, limit)
		defer s.close()
		f = s
	}
	_, err := Paginate(ctx, f, limit, take, nil)
	return err
}

// Count counts what reqs match: the responses' Count or, with counts
// (the items read, see Input.KeysOnly), the items counts accepts. fs are
// the feeds reqs are read through (nil: reqs themselves), such as a
// Holder around each, whose items hold only until its next page.
func Count(ctx context.Context, reqs []*Request, fs []Feed, counts func(Item) bool) (int, error) {
	if fs == nil {
		fs = make([]Feed, len(reqs))
		for i, r := range reqs {
			fs[i] = r
		}
	}
	n := 0
	err := ReadAll(ctx, fs, 0, func(item Item, _ int) (bool, error) {
		if counts != nil && counts(item) {
			n++
		}
		return false, nil
	})
	if err != nil {
		return 0, err
	}
	for _, r := range reqs {
		if counts == nil {
			n += r.count // every worker is done: ReadAll waited
		}
	}
	return n, nil
}

// segments is the feed of a parallel scan: one goroutine per segment sends
// whole responses to the reading goroutine.
type segments struct {
	ch     chan segmentResponse
	cancel context.CancelFunc
	taken  chan struct{} // the last response's
}

type segmentResponse struct {
	items []Item
	err   error
	taken chan struct{} // closed when items were taken, for a Holder to read on
	took  func()        // the Holder's, called when the reading goroutine takes items
}

// Holder is a Feed whose items may hold only until its next Next (the
// direct wire path's, decoded into buffers it reuses): when Holding
// returns a func, a parallel read calls it when it takes the items, and
// the feed's segment reads on after.
type Holder interface{ Holding() func() }

// readSegments starts reading fs, one goroutine each, want items each.
func readSegments(ctx context.Context, fs []Feed, want int) *segments {
	ctx, cancel := context.WithCancel(ctx)
	s := &segments{ch: make(chan segmentResponse), cancel: cancel}
	var g errgroup.Group
	for _, f := range fs {
		g.Go(func() error {
			for {
				items, last, err := f.Next(ctx, want)
				r := segmentResponse{items: items, err: err}
				if h, ok := f.(Holder); ok {
					if r.took = h.Holding(); r.took != nil {
						r.taken = make(chan struct{})
					}
				}
				select {
				case s.ch <- r:
				case <-ctx.Done():
					return nil
				}
				if err != nil || last {
					return nil
				}
				if r.taken != nil {
					select {
					case <-r.taken:
					case <-ctx.Done():
						return nil
					}
				}
			}
		})
	}
	go func() { _ = g.Wait(); close(s.ch) }()
	return s
}

func (s *segments) Next(context.Context, int) ([]Item, bool, error) {
	if s.taken != nil {
		close(s.taken)
	}
	resp, ok := <-s.ch
	if s.taken = resp.taken; s.taken != nil {
		resp.took()
	}
	return resp.items, !ok, resp.err
}

// close stops the workers and drains the channel, so that none blocks.
func (s *segments) close() {
	s.cancel()
	for range s.ch {
	}
}

// Input is the input of a request: a Query or (Query nil) a Scan.
type Input struct {
	Query *dynamodb.QueryInput
	Scan  *dynamodb.ScanInput
}

// Response is what one request returned.
type Response struct {
	Items []Item
	Next  Item // LastEvaluatedKey
	Count int32
}

// Send sends the request once.
func (in Input) Send(ctx context.Context, c Client) (Response, error) {
	if in.Query != nil {
		out, err := c.Query(ctx, in.Query)
		if err != nil {
			return Response{}, err
		}
		return Response{out.Items, out.LastEvaluatedKey, out.Count}, nil
	}
	out, err := c.Scan(ctx, in.Scan)
	if err != nil {
		return Response{}, err
	}
	return Response{out.Items, out.LastEvaluatedKey, out.Count}, nil
}

// clone copies the input (not the maps it shares), for a lookahead.
func (in Input) clone() Input {
	if in.Query != nil {
		q := *in.Query
		return Input{Query: &q}
	}
	s := *in.Scan
	return Input{Scan: &s}
}

// fields are the input's ExclusiveStartKey and Limit.
func (in Input) fields() (*Item, **int32) {
	if in.Query != nil {
		return &in.Query.ExclusiveStartKey, &in.Query.Limit
	}
	return &in.Scan.ExclusiveStartKey, &in.Scan.Limit
}

// Select sets the input's Select.
func (in Input) Select(s types.Select) {
	if in.Query != nil {
		in.Query.Select = s
	} else {
		in.Scan.Select = s
	}
}

// KeysOnly makes the request read the attributes attrs (the keys and the
// entity type: a count whose items the caller tells apart) instead of
// counting with Select COUNT.
func (in Input) KeysOnly(attrs ...string) {
	keys := func(names map[string]string) (types.Select, *string, map[string]string) {
		names = maps.Clone(names)
		if names == nil {
			names = make(map[string]string, len(attrs))
		}
		refs := make([]string, 0, len(attrs))
		for i, a := range attrs {
			if a != "" {
				ref := fmt.Sprintf("#k%d", i)
				names[ref] = a
				refs = append(refs, ref)
			}
		}
		return types.SelectSpecificAttributes, aws.String(strings.Join(refs, ", ")), names
	}
	if in.Query != nil {
		in.Query.Select, in.Query.ProjectionExpression, in.Query.ExpressionAttributeNames = keys(in.Query.ExpressionAttributeNames)
	} else {
		in.Scan.Select, in.Scan.ProjectionExpression, in.Scan.ExpressionAttributeNames = keys(in.Scan.ExpressionAttributeNames)
	}
}

// Sender sends a request's pages for it: it chooses the client (one
// observing or recording the reads) and may change what a response
// delivers.
type Sender interface {
	// Client is the client a lookahead is sent through.
	Client(ctx context.Context) Client
	// Read sends in, the request's next page, once.
	Read(ctx context.Context, in Input) (Response, error)
}

// Request is the feed of one Query or Scan, sent page after page.
type Request struct {
	Input
	Sender Sender
	What   string // names the read in errors: "query User", "collection query"
	// Size makes each request ask for the items still wanted plus one, so
	// that a read ending with the page says so (every item read counts).
	Size       bool
	ProbeOne   bool // a lookahead reads one item first: the next likely counts
	Codec      cursor.Codec
	Bind       [16]byte // what the cursors are bound to
	CursorKeys []string // the attributes a cursor holds

	sized bool // the last request asked for the items wanted plus one
	after Item // the last response's LastEvaluatedKey
	count int  // the responses' Count, summed
}

// SizeFor asks for want items plus one, when the request is sized.
func (r *Request) SizeFor(want int) {
	r.sized = r.Size && want > 0
	if r.sized {
		_, limit := r.fields()
		*limit = aws.Int32(int32(min(want+1, 1000)))
	}
}

func (r *Request) sendErr(err error) error {
	return fmt.Errorf("singletable: %s: %w", r.What, err)
}

// Next sends the request's next page.
func (r *Request) Next(ctx context.Context, want int) ([]Item, bool, error) {
	r.SizeFor(want)
	resp, err := r.Sender.Read(ctx, r.Input)
	if err != nil {
		return nil, false, r.sendErr(err)
	}
	r.count += int(resp.Count)
	r.after = resp.Next
	if resp.Next != nil {
		start, _ := r.fields()
		*start = resp.Next
	}
	return resp.Items, resp.Next == nil, nil
}

// Ahead reads on until an item that counts or the end. With ProbeOne (and
// the last request not sized) the first request reads one item, the rest
// as the request does: k dropped items cost 1 + k/PageSize requests.
func (r *Request) Ahead(ctx context.Context, counts func(Item) bool) (bool, error) {
	probe := r.clone()
	start, limit := probe.fields()
	if r.ProbeOne && !r.sized {
		*limit = aws.Int32(1)
	}
	for {
		resp, err := probe.Send(ctx, r.Sender.Client(ctx))
		if err != nil {
			return false, r.sendErr(err)
		}
		if slices.ContainsFunc(resp.Items, counts) {
			return true, nil
		}
		if resp.Next == nil {
			return false, nil
		}
		_, own := r.fields()
		*start, *limit = resp.Next, *own
	}
}

// Cursor is the cursor after item (nil: after the last response).
func (r *Request) Cursor(item Item) (string, error) {
	if item == nil {
		item = r.after
	}
	return r.Codec.Encode(r.Bind, r.CursorKeys, item)
}
