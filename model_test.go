package singletable_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
	"github.com/singletable-go/singletable/internal/wiretest"
	"github.com/singletable-go/singletable/streams"
)

// TestModel is the model-based property test of the write paths (the
// design's "Testing" section). It draws a random sequence of operations
// over five entities that share partitions (model_entities_test.go; MItem
// and MCode render the same sort keys; MLog's declaration is drawn for
// each run, see below), runs them one by one through the library, and
// after every operation reads the whole table (a raw, strongly consistent
// Scan) and compares it with an in-memory model:
//
//   - the operation's result is one the model allows from the state
//     before it (ErrAlreadyExists, ErrNotFound, ErrVersionConflict, a
//     refusal of a write onto another entity's item, …), and the table is
//     exactly the state that result implies: a success really happened
//     (versions = acknowledged writes + 1), a definite failure changed
//     nothing;
//   - no item of one entity is replaced by another's (the model knows
//     which entity owns each key);
//   - every unique guard item belongs to a live item of its entity holding
//     its value, and every held value has its guard;
//   - every index attribute (and the primary key) of every changed item is
//     what the library renders from the item as stored: the item is read
//     back through the repository and rendered with PutOp of an entity
//     declared like it without unique fields (which do not affect keys);
//     at the end every item is checked so;
//   - an Expire (an item of MItem or MCode deleted alone with the raw
//     client, as DynamoDB's TTL deletes it, leaving its guards; sometimes an
//     item of the same entity, with the same or other unique values, or of
//     the other entity created again under its key; then its TTL stream
//     record, synthesized and decoded by streams.Changes, handed to
//     Changes.ReleaseExpiredGuards) releases exactly the guards of the
//     expired values that no live item holds, and reports how many it
//     deleted; under faults an error leaves each guard released or not,
//     and the record is handled again (as a stream redelivers it) until it
//     succeeds, reporting the guards that call deleted;
//   - MLog's indexes are keyed on the table's key attributes (its SK as
//     an index sort key, SK | PK inverted, its PK as a partition key), the
//     entity type attribute and fields' own attributes, sparse and not;
//     each run draws which it has and which key fields are KeyOnly
//     (drawLogDesign, logged). The model holds an item's index keys
//     exactly: a key attribute a field's own (present while the field is
//     not empty), the rendered GSI9PK derived by the model from Lvl (and
//     Hot), the table key always; writes and updates that move an item in
//     and out of a sparse index must leave exactly that, and never lose
//     the table key. A KeyOnly field has no attribute, and every read
//     decodes the value its key holds. QueryIndex queries one of the
//     indexes by a partition and must return exactly the items the model
//     says hold that index's key attributes, decoded as the table holds
//     them;
//   - in the run without faults, after every operation that changed the
//     table, every live item read through the library is the item the scan
//     read: all keys in one TxGet (found exactly where an item of the op's
//     entity lives), and each entity's keys (another entity's items among
//     them, one key twice) with BatchGet.
//
// The model's next state is the table as read, so a divergence is reported
// once, at the operation that caused it, and does not cascade.
//
// It runs without faults and through ddbfault at 10% and 30%, plus, at a
// third of that rate, response bodies cut short and CRC32 mismatches
// (wiretest.Faults: what a direct read of the body meets). Under faults
// an operation may end with an error that leaves its outcome unknown
// (ErrMaybeApplied, a transport fault, throttling past the retries); the
// table must then be in the state before or after it (all or nothing,
// except batches, whose items are independent).
//
// It also runs under two of ddbfault's modes for what DynamoDB Local
// hides (modelModes): "conflicts" (20% of writes meet a concurrent
// transaction: TransactionConflictException for a single write, a
// TransactionCanceledException with one TransactionConflict reason for a
// transaction) and "hot" (the partition P#p0 is hot: 60% of the requests
// touching it are throttled with ProvisionedThroughputExceededException
// or a ThrottlingError reason). These answers are definite refusals, and
// no response is lost, so there an error is never an unknown outcome: an
// operation that ends with a conflict or a throttle must leave the table
// exactly as before it (envRefusal), and any other error is judged as in
// the run without faults.
//
// MODEL_SEED (default 1; "random" draws one) and MODEL_OPS (default 200
// per run) choose the sequence; make model runs it longer. A failure
// prints the random seed, the failing operation and the operations that touched
// the same keys; in the run without faults each kind of failure is also
// shrunk (MODEL_SHRINK_SECONDS, default 15) to a minimal sequence by
// replaying subsequences on a fresh table. The whole sequence is written
// to a log file named in the report.
func TestModel(t *testing.T) {
	t.Parallel()
	seed, ops := modelSeed(t), modelOps(t)
	for i, rate := range []float64{0, 0.10, 0.30} {
		t.Run(fmt.Sprintf("rate=%.0f%%", rate*100), func(t *testing.T) {
			t.Parallel()
			runModel(t, seed, ops, i, rate, "")
		})
	}
	for i, mode := range []string{"conflicts", "hot"} {
		t.Run("mode="+mode, func(t *testing.T) {
			t.Parallel()
			runModel(t, seed, ops, 3+i, 0, mode)
		})
	}
}

// modelModes are the ddbfault modes TestModel runs under, by name.
var modelModes = map[string]func(cfg *ddbfault.Config){
	"conflicts": func(cfg *ddbfault.Config) { cfg.Conflicts = ddbfault.Conflicts{Rate: 0.20} },
	"hot":       func(cfg *ddbfault.Config) { cfg.Hot = []ddbfault.Hot{{Value: "P#p0", Rate: 0.60}} },
}

// envRefusal reports whether err is DynamoDB refusing a request for a
// reason of its own, not the data: a conflict with a transaction or a
// throttle, for a single write or (every reason other than None) a
// transaction. Such a refusal wrote nothing.
func envRefusal(err error) bool {
	var tce *types.TransactionConflictException
	var pte *types.ProvisionedThroughputExceededException
	var cancel *types.TransactionCanceledException
	switch {
	case errors.As(err, &tce), errors.As(err, &pte):
		return true
	case errors.As(err, &cancel):
		for _, r := range cancel.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "None", "TransactionConflict", "ThrottlingError":
			default:
				return false
			}
		}
		return true
	}
	return false
}

func modelSeed(t *testing.T) uint64 {
	s := os.Getenv("MODEL_SEED")
	switch s {
	case "":
		return 1
	case "random":
		seed := rand.Uint64() % 1_000_000_000
		t.Logf("MODEL_SEED=%d (drawn at random)", seed)
		return seed
	}
	seed, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("MODEL_SEED=%q: %v", s, err)
	}
	return seed
}

func modelOps(t *testing.T) int {
	if s := os.Getenv("MODEL_OPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("MODEL_OPS=%q: want a positive integer", s)
		}
		return n
	}
	return 200
}

// ---- operations ----

// mvals are the field values an operation writes (each entity uses some).
type mvals struct {
	Name, Email, Status string
	Public              bool
	Rank                int
	Label, Handle       string
	Tier, Note          string
	Exp                 int
	Msg                 string
	// MLog's; Owner, Tag and Lvl are index keys (see mLogDesign).
	Owner, Tag, Lvl string
	Hot             bool
}

// mop is one operation, as data: it names keys and values, and version
// modes rather than versions, so that it can be replayed against any
// state (shrinking drops operations).
type mop struct {
	Kind   string // Create Put Update Upsert Delete Batch Tx QueryDelete QueryIndex CrossTx Expire
	Ent    int    // 0 MItem, 1 MCode, 2 MManaged, 3 MEvent, 4 MLog
	Part   int
	Key    int
	V      mvals
	Fields []string // Update, Upsert: the fields set
	VMode  int      // 0: the stored version, 1: 0 (no check), 2: stale
	Pick   int      // QueryDelete: which item of the query; QueryIndex: which index
	Sub    []mop    // Batch (Put, Delete) and Tx (single kinds)
	// Lost scripts, in the runs with faults, a lost response (the server
	// applies the request, the client sees a reset connection) for the
	// op's write request, so that the SDK's retry of an applied write
	// happens in every run, whatever the drawn faults.
	Lost bool
	// Ops are the update operators of an Update or Upsert of MManaged,
	// each on its own field (Tags, Labels, Hits).
	Ops []mOperator
	// Again is what an Expire creates under the expired item's key before
	// its expiry is handled: 0 nothing, 1 an item of the same entity with
	// the same unique values (V otherwise), 2 one with V's values, 3 an
	// item of the other entity with unique fields (MItem <-> MCode).
	Again int
}

// mOperator is one update operator: Append, Prepend or SetIfNotExists
// on the list Tags; Add or Delete on the string set Labels; Add or
// Subtract on the number Hits (in GSI7's sort key, and GSI7 is sparse on
// Labels, so operators on them are computed from the stored item).
type mOperator struct {
	Op, Field string
	Arg       int
}

func (x mOperator) String() string { return fmt.Sprintf("%s(%s,%d)", x.Op, x.Field, x.Arg) }

// genOperators draws operators on some of MManaged's operator fields.
func genOperators(rng *rand.Rand) []mOperator {
	var out []mOperator
	for _, c := range []struct {
		field string
		ops   []string
	}{{"Tags", []string{"Append", "Prepend", "SetIfNotExists"}}, {"Labels", []string{"Add", "Delete"}}, {"Hits", []string{"Add", "Subtract"}}} {
		if rng.IntN(3) == 0 {
			out = append(out, mOperator{Op: mPick(rng, c.ops...), Field: c.field, Arg: rng.IntN(3)})
		}
	}
	return out
}

// applyOperator gives the canonical value an operator leaves, from the
// canonical value before it ("-": absent).
func applyOperator(x mOperator, before string) string {
	elems := func(prefix string) []string {
		if before == "-" || before == "?" {
			return nil
		}
		return strings.Split(strings.TrimPrefix(before, prefix), ",")
	}
	switch x.Field {
	case "Tags":
		cur := elems("L:")
		switch x.Op {
		case "Append":
			cur = append(cur, canonS(fmt.Sprintf("t%d", x.Arg)))
		case "Prepend":
			cur = append([]string{canonS(fmt.Sprintf("t%d", x.Arg))}, cur...)
		case "SetIfNotExists":
			if before == "-" || before == "?" {
				cur = []string{canonS(fmt.Sprintf("s%d", x.Arg))}
			}
		}
		return "L:" + strings.Join(cur, ",")
	case "Labels":
		cur := elems("SS:")
		e := fmt.Sprintf("l%d", x.Arg)
		if x.Op == "Add" && !slices.Contains(cur, e) {
			cur = append(cur, e)
		}
		if x.Op == "Delete" {
			cur = slices.DeleteFunc(cur, func(c string) bool { return c == e })
		}
		if len(cur) == 0 {
			return "-"
		}
		sort.Strings(cur)
		return "SS:" + strings.Join(cur, ",")
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(before, "N:"))
	if x.Op == "Subtract" {
		return canonN(int64(n - x.Arg))
	}
	return canonN(int64(n + x.Arg))
}

// modelFields are the fields an update may set, per entity.
var modelFields = [][]string{
	{"Name", "Email", "Status", "Public", "Rank"},
	{"Label", "Handle"},
	{"Tier", "Note", "Expires"},
	{"Msg"},
	{"Owner", "Tag", "Lvl", "Hot", "Note"},
}

// modelEntities is the number of the model's entities (mop.Ent).
const modelEntities = 5

var singleKinds = []string{"Create", "Put", "Update", "Upsert", "Delete"}

func mPick[T any](rng *rand.Rand, xs ...T) T { return xs[rng.IntN(len(xs))] }

func genVals(rng *rand.Rand) mvals {
	return mvals{
		Name:   fmt.Sprintf("n%d", rng.IntN(10)),
		Email:  mPick(rng, "", "e0", "e1", "e2", "e3"),
		Status: mPick(rng, "", "s0", "s1"),
		Public: rng.IntN(2) == 0,
		Rank:   rng.IntN(4),
		Label:  mPick(rng, "", "l0", "l1"),
		Handle: mPick(rng, "", "h0", "h1", "h2", "h3"),
		Tier:   mPick(rng, "", "t0", "t1"),
		Note:   fmt.Sprintf("o%d", rng.IntN(10)),
		Exp:    rng.IntN(4),
		Msg:    fmt.Sprintf("m%d", rng.IntN(4)),
		Owner:  mPick(rng, "", "o0", "o1"),
		Tag:    mPick(rng, "", "t0", "t1", "t2"),
		Lvl:    mPick(rng, "", "v0", "v1"),
		Hot:    rng.IntN(2) == 0,
	}
}

func genSingle(rng *rand.Rand, kind string, ent int) mop {
	o := mop{Kind: kind, Ent: ent, Part: rng.IntN(2), Key: rng.IntN(4), V: genVals(rng), Pick: rng.IntN(8)}
	switch r := rng.IntN(100); {
	case r < 70:
		o.VMode = 0
	case r < 85:
		o.VMode = 1
	default:
		o.VMode = 2
	}
	if kind == "Update" || kind == "Upsert" {
		all := modelFields[ent]
		for len(o.Fields) == 0 {
			for _, f := range all {
				if rng.IntN(3) == 0 {
					o.Fields = append(o.Fields, f)
				}
			}
		}
		if ent == 2 {
			o.Ops = genOperators(rng)
		}
		// GSI1 of MItem needs Status and Public together (or a *KeyError);
		// set both most of the time.
		hasS, hasP := slices.Contains(o.Fields, "Status"), slices.Contains(o.Fields, "Public")
		if ent == 0 && hasS != hasP && rng.IntN(10) < 7 {
			if hasS {
				o.Fields = append(o.Fields, "Public")
			} else {
				o.Fields = append(o.Fields, "Status")
			}
		}
	}
	return o
}

func (o mop) slot() [3]int { return [3]int{o.Ent, o.Part, o.Key} }

func genOp(rng *rand.Rand) mop {
	o := genOpKind(rng)
	o.Lost = rng.IntN(100) < 12
	return o
}

func genOpKind(rng *rand.Rand) mop {
	switch w := rng.IntN(104); {
	case w < 14:
		return genSingle(rng, "Create", rng.IntN(modelEntities))
	case w < 28:
		return genSingle(rng, "Put", rng.IntN(modelEntities))
	case w < 43:
		return genSingle(rng, "Update", rng.IntN(modelEntities))
	case w < 53:
		return genSingle(rng, "Upsert", rng.IntN(modelEntities))
	case w < 63:
		return genSingle(rng, "Delete", rng.IntN(modelEntities))
	case w < 74:
		o := mop{Kind: "Batch"}
		withUnique := rng.IntN(100) < 15
		seen := map[[3]int]bool{}
		for n := 1 + rng.IntN(5); len(o.Sub) < n; {
			ent := mPick(rng, 2, 3, 4)
			if withUnique && len(o.Sub) == 0 {
				ent = rng.IntN(2)
			}
			s := genSingle(rng, mPick(rng, "Put", "Put", "Put", "Delete"), ent)
			if !seen[s.slot()] {
				seen[s.slot()] = true
				o.Sub = append(o.Sub, s)
			}
		}
		return o
	case w < 88:
		o := mop{Kind: "Tx"}
		seen := map[[3]int]bool{}
		for n := 1 + rng.IntN(3); len(o.Sub) < n; {
			s := genSingle(rng, mPick(rng, singleKinds...), rng.IntN(modelEntities))
			if !seen[s.slot()] || rng.IntN(100) < 15 {
				seen[s.slot()] = true
				o.Sub = append(o.Sub, s)
			}
		}
		return o
	case w < 95:
		o := genSingle(rng, "Create", rng.IntN(2))
		o.Kind = "Expire"
		switch a := rng.IntN(100); {
		case a < 30:
			o.Again = 0
		case a < 60:
			o.Again = 1
		case a < 85:
			o.Again = 2
		default:
			o.Again = 3
		}
		return o
	case w < 99:
		return mop{Kind: "QueryDelete", Ent: rng.IntN(modelEntities), Part: rng.IntN(2), Pick: rng.IntN(8)}
	case w < 100:
		o := genSingle(rng, "Put", 2)
		o.Kind = "CrossTx"
		return o
	default:
		// A query of one of MLog's indexes, by the partition of o's
		// values (never empty: an empty key value is refused).
		o := genSingle(rng, "QueryIndex", 4)
		o.V.Owner, o.V.Lvl = mPick(rng, "o0", "o1"), mPick(rng, "v0", "v1")
		return o
	}
}

func genOps(seed uint64, stream, n int) []mop {
	rng := rand.New(rand.NewPCG(seed, uint64(stream)))
	ops := make([]mop, n)
	for i := range ops {
		ops[i] = genOp(rng)
	}
	return ops
}

// ---- model state ----

// mitem is an item as the model sees it: its entity type and canonical
// attribute values (see canonS).
type mitem struct {
	ent   string
	attrs map[string]string
}

// mstate is the table: items by "PK|SK", and unique guards by
// "Entity.Attr=value" with their owner's "PK|SK".
type mstate struct {
	items  map[string]mitem
	guards map[string]string
}

func (s mstate) clone() mstate {
	c := mstate{items: make(map[string]mitem, len(s.items)), guards: make(map[string]string, len(s.guards))}
	for k, v := range s.items {
		c.items[k] = mitem{ent: v.ent, attrs: copyMap(v.attrs)}
	}
	for k, v := range s.guards {
		c.guards[k] = v
	}
	return c
}

func copyMap(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func gidOf(ent, attr, val string) string { return ent + "." + attr + "=" + val }

// gidOfKey is the gid of a guard item's partition key, as the library
// renders it: UNIQUE#<ent>#<attr>#<value>, UNIQUE#<ent>#<a1>#…#<an>#<v1>#…#<vn>
// for a tuple, UNIQUE#<ent>#<a1>#…#<an>#$SHA256:<hex> hashed. The model's
// values need no escaping.
func gidOfKey(pk string) (string, bool) {
	segs := strings.Split(strings.TrimPrefix(pk, "UNIQUE#"), "#")
	if len(segs) < 3 {
		return "", false
	}
	ent, rest := segs[0], segs[1:]
	if last := rest[len(rest)-1]; strings.HasPrefix(last, "$SHA256:") {
		return gidOf(ent, strings.Join(rest[:len(rest)-1], "+"), last), true
	}
	if len(rest)%2 != 0 {
		return "", false
	}
	n := len(rest) / 2
	return gidOf(ent, strings.Join(rest[:n], "+"), strings.Join(rest[n:], "#")), true
}

// uvalOf is the value the guard of the unique u holds for an item with
// attrs (canonical values), "" when a field of the tuple is absent.
func (in *mInfo) uvalOf(u string, attrs map[string]string) string {
	var vals []string
	for _, f := range strings.Split(u, "+") {
		v := uval(attrs[f])
		if v == "" {
			return ""
		}
		vals = append(vals, v)
	}
	v := strings.Join(vals, "#")
	if in.hashed[u] {
		sum := sha256.Sum256([]byte(v))
		return "$SHA256:" + hex.EncodeToString(sum[:])
	}
	return v
}

// touches reports whether one of fields is a field of the unique u.
func touches(u string, fields []string) bool {
	return slices.ContainsFunc(strings.Split(u, "+"), func(f string) bool { return slices.Contains(fields, f) })
}

func parseGid(gid string) (ent, attr, val string) {
	ent, rest, _ := strings.Cut(gid, ".")
	attr, val, _ = strings.Cut(rest, "=")
	return ent, attr, val
}

// uval is the string value of a canonical S attribute ("" otherwise).
func uval(c string) string {
	if v, ok := strings.CutPrefix(c, "S:"); ok {
		return v
	}
	return ""
}

func storedVersion(it mitem, ok bool) int {
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(it.attrs["Version"], "N:"))
	return n
}

func canonAV(av types.AttributeValue) string {
	switch v := av.(type) {
	case nil:
		return "-"
	case *types.AttributeValueMemberS:
		return canonS(v.Value)
	case *types.AttributeValueMemberN:
		if n, err := strconv.ParseInt(v.Value, 10, 64); err == nil {
			return canonN(n)
		}
		return "N:" + v.Value
	case *types.AttributeValueMemberBOOL:
		return canonB(v.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberL:
		elems := make([]string, len(v.Value))
		for i, e := range v.Value {
			elems[i] = canonAV(e)
		}
		return "L:" + strings.Join(elems, ",")
	case *types.AttributeValueMemberSS:
		elems := slices.Clone(v.Value)
		sort.Strings(elems)
		return "SS:" + strings.Join(elems, ",")
	default:
		return fmt.Sprintf("%T", av)
	}
}

func canonMatch(want, got string) bool {
	switch want {
	case "?":
		return true
	case "?+":
		return got != "-"
	case "?0":
		return slices.Contains([]string{"-", "S:", "N:0", "BOOL:false"}, got)
	}
	return want == got
}

func itemMatch(want, got mitem) bool { return len(itemDiff(want, got)) == 0 }

// itemDiff names what differs: "owner", or the attributes.
func itemDiff(want, got mitem) []string {
	if want.ent != got.ent {
		return []string{"owner"}
	}
	var out []string
	for a, w := range want.attrs {
		g, ok := got.attrs[a]
		if !ok {
			g = "-"
		}
		if !canonMatch(w, g) {
			out = append(out, a)
		}
	}
	for a, g := range got.attrs {
		if _, ok := want.attrs[a]; !ok && g != "-" {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

func (it mitem) String() string {
	keys := make([]string, 0, len(it.attrs))
	for a := range it.attrs {
		keys = append(keys, a)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(it.ent + "{")
	for i, a := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a + "=" + it.attrs[a])
	}
	b.WriteString("}")
	return b.String()
}

// stateDiff compares the table with a wanted state: a summary (what kind
// of difference: owner, presence, attribute names, guard) and details.
func stateDiff(want, got mstate) (summary []string, details []string) {
	add := func(s, d string) {
		if !slices.Contains(summary, s) {
			summary = append(summary, s)
		}
		details = append(details, d)
	}
	for _, k := range unionKeys(want.items, got.items) {
		w, wok := want.items[k]
		g, gok := got.items[k]
		switch {
		case wok && !gok:
			add("presence", fmt.Sprintf("%s: want %s, table has nothing", k, w))
		case !wok && gok:
			add("presence", fmt.Sprintf("%s: want nothing, table has %s", k, g))
		case wok && gok:
			if d := itemDiff(w, g); len(d) > 0 {
				add(strings.Join(d, ","), fmt.Sprintf("%s: want %s, table has %s", k, w, g))
			}
		}
	}
	for _, k := range unionKeys(want.guards, got.guards) {
		w, wok := want.guards[k]
		g, gok := got.guards[k]
		if wok != gok || w != g {
			add("guard", fmt.Sprintf("guard %s: want owner %q, table has %q", k, w, g))
		}
	}
	return summary, details
}

func unionKeys[V any](a, b map[string]V) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// ---- entities ----

// mInfo is what the model knows of an entity's declaration.
type mInfo struct {
	name string
	// unique names the uniques: a field ("Email"), or a tuple of fields
	// joined by "+" ("Part+Handle"); hashed says which are hashed.
	unique    []string
	hashed    map[string]bool
	versioned bool
	stamped   bool // CreatedAt and UpdatedAt managed
	keyFields []string
	indexDeps [][]string // fields of each templated index's keys (and When)
	full      func(o mop) map[string]string
	attrs     []string
	// keyOnly are the fields held only in keys (Schema.KeyOnly): the item
	// has no attribute of theirs, and the model holds the value a key
	// holds as "key:<field>", which keyVals reads from a raw item.
	keyOnly []string
	keyVals func(raw map[string]types.AttributeValue) map[string]string
	// derive sets, from the fields, the attributes the model derives
	// (derived: index keys the library renders), when an update sets one
	// of deriveDeps.
	derive     func(attrs map[string]string)
	derived    []string
	deriveDeps []string
	// unsetZero: an Upsert that creates the item leaves each field it
	// does not set absent or zero ("?0"; else the model allows anything,
	// "?"), and the attributes derived from them as derive says.
	unsetZero bool
}

var modelManaged = map[string]bool{"Version": true, "CreatedAt": true, "UpdatedAt": true}

func (in *mInfo) init() *mInfo {
	for a := range in.full(mop{}) {
		in.attrs = append(in.attrs, a)
	}
	if in.versioned {
		in.attrs = append(in.attrs, "Version")
	}
	if in.stamped {
		in.attrs = append(in.attrs, "CreatedAt", "UpdatedAt")
	}
	sort.Strings(in.attrs)
	return in
}

// newItem is the item a full write of o stores.
func (in *mInfo) newItem(o mop, version int) mitem {
	it := mitem{ent: in.name, attrs: in.full(o)}
	if in.versioned {
		it.attrs["Version"] = canonN(int64(version))
	}
	if in.stamped {
		it.attrs["CreatedAt"], it.attrs["UpdatedAt"] = "?+", "?+"
	}
	return it
}

// mEntity is one entity of the model with the repositories that write it.
type mEntity interface {
	info() *mInfo
	key(o mop) string
	single(kind string, o mop, ver int) func(context.Context) error
	txOp(kind string, o mop, ver int) func() singletable.WriteOp
	writeOp(kind string, o mop, ver int) singletable.WriteOp
	query(ctx context.Context, part int) (keys []string, del func(context.Context, int) error, err error)
	// queryIndex queries the index of o's values' partition, and gives
	// the keys and canonical attributes of the items it returns.
	queryIndex(ctx context.Context, index string, o mop) (keys []string, canons []map[string]string, err error)
	renderDiff(ctx context.Context, raw map[string]types.AttributeValue) ([]string, error)
	crossTx(ctx context.Context, tbl *singletable.Table, o mop, ver1, ver2 int) error
	member() *singletable.Target
	// getOp is a TxGet read of o's key through the plain client, and the
	// canonical attributes of what it decoded (after the TxGet).
	getOp(o mop) (singletable.GetOp, func() map[string]string)
	// batchGet reads the keys of os with BatchGet (plain client), and
	// gives the canonical attributes of the items returned, in order.
	batchGet(ctx context.Context, os []mop) ([]map[string]string, error)
}

type mAdapter[T any] struct {
	in    *mInfo
	repo  *singletable.Repo[T] // the table reached through the faulty client
	plain *singletable.Repo[T] // the same table, plain client: reads and checks
	twin  *singletable.Repo[T] // declared without Unique, for rendering only
	value func(o mop, ver int) T
	keyOf func(o mop, ver int) T
}

func (a *mAdapter[T]) info() *mInfo { return a.in }

func modelKeyString(k map[string]types.AttributeValue) string {
	return attrS(k, "PK") + "|" + attrS(k, "SK")
}

func (a *mAdapter[T]) key(o mop) string { return modelKeyString(a.twin.DeleteOp(a.keyOf(o, 0)).Key()) }

func (a *mAdapter[T]) update(o mop, ver int) *singletable.Update[T] {
	u := a.repo.Update(a.keyOf(o, ver)).SetFrom(a.value(o, ver), o.Fields...)
	for _, x := range o.Ops {
		switch v := fmt.Sprintf("%s%d", strings.ToLower(x.Field[:1]), x.Arg); x.Op {
		case "Append":
			u = u.Append(x.Field, v)
		case "Prepend":
			u = u.Prepend(x.Field, v)
		case "SetIfNotExists":
			u = u.SetIfNotExists(x.Field, []string{fmt.Sprintf("s%d", x.Arg)})
		case "Add":
			if x.Field == "Hits" {
				u = u.Add(x.Field, x.Arg)
			} else {
				u = u.Add(x.Field, v)
			}
		case "Delete":
			u = u.Delete(x.Field, v)
		case "Subtract":
			u = u.Subtract(x.Field, x.Arg)
		}
	}
	if o.Kind == "Upsert" {
		u = u.Upsert()
	}
	return u
}

func (a *mAdapter[T]) single(kind string, o mop, ver int) func(context.Context) error {
	switch kind {
	case "Create":
		return func(ctx context.Context) error { _, err := a.repo.Create(ctx, a.value(o, ver)); return err }
	case "Put":
		return func(ctx context.Context) error { _, err := a.repo.Put(ctx, a.value(o, ver)); return err }
	case "Update", "Upsert":
		return func(ctx context.Context) error { _, err := a.update(o, ver).Run(ctx); return err }
	case "Delete":
		return func(ctx context.Context) error { _, err := a.repo.Delete(ctx, a.keyOf(o, ver)); return err }
	}
	panic("model: no single op " + kind)
}

func (a *mAdapter[T]) txOp(kind string, o mop, ver int) func() singletable.WriteOp {
	switch kind {
	case "Create":
		return func() singletable.WriteOp { return a.repo.CreateOp(a.value(o, ver)) }
	case "Put":
		return func() singletable.WriteOp { return a.repo.PutOp(a.value(o, ver)) }
	case "Update", "Upsert":
		return func() singletable.WriteOp { return a.update(o, ver).Op() }
	case "Delete":
		return func() singletable.WriteOp { return a.repo.DeleteOp(a.keyOf(o, ver)) }
	}
	panic("model: no tx op " + kind)
}

func (a *mAdapter[T]) writeOp(kind string, o mop, ver int) singletable.WriteOp {
	if kind == "Put" {
		return a.repo.PutOp(a.value(o, ver))
	}
	return a.repo.DeleteOp(a.keyOf(o, 0))
}

func (a *mAdapter[T]) query(ctx context.Context, part int) ([]string, func(context.Context, int) error, error) {
	vs, err := modelCollect(ctx, a.repo.Query(a.keyOf(mop{Part: part}, 0), func(o *singletable.ReadOptions) { o.ConsistentRead = true }))
	if err != nil {
		return nil, nil, err
	}
	keys := make([]string, len(vs))
	for i, v := range vs {
		keys[i] = modelKeyString(a.twin.DeleteOp(v).Key())
	}
	del := func(ctx context.Context, i int) error { _, err := a.repo.Delete(ctx, vs[i]); return err }
	return keys, del, nil
}

func (a *mAdapter[T]) queryIndex(ctx context.Context, index string, o mop) ([]string, []map[string]string, error) {
	vs, err := modelCollect(ctx, a.repo.QueryIndex(index, a.value(o, 0)))
	if err != nil {
		return nil, nil, err
	}
	keys, canons := make([]string, len(vs)), make([]map[string]string, len(vs))
	for i, v := range vs {
		keys[i], canons[i] = modelKeyString(a.twin.DeleteOp(v).Key()), a.canon(v)
	}
	return keys, canons, nil
}

// renderDiff reads the raw item back through the repository and compares
// its index attributes and primary key with what the library renders
// from the value read.
func (a *mAdapter[T]) renderDiff(ctx context.Context, raw map[string]types.AttributeValue) ([]string, error) {
	k, err := a.twin.Entity().ParseKeys(attrS(raw, "PK"), attrS(raw, "SK"))
	if err != nil {
		return []string{fmt.Sprintf("ParseKeys: %v", err)}, nil
	}
	v, err := a.plain.Get(ctx, k, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", a.in.name, err)
	}
	op := a.twin.PutOp(v)
	if op.Err() != nil {
		return []string{fmt.Sprintf("PutOp of the value read: %v", op.Err())}, nil
	}
	var diffs []string
	for _, attr := range modelIndexAttrs {
		if s, r := canonAV(raw[attr]), canonAV(op.Item()[attr]); s != r {
			diffs = append(diffs, fmt.Sprintf("%s stored %s, renders %s", attr, s, r))
		}
	}
	return diffs, nil
}

// crossTx puts o's item through a repository of another client and the
// next key's through the op table's, in one Tx.
func (a *mAdapter[T]) crossTx(ctx context.Context, tbl *singletable.Table, o mop, ver1, ver2 int) error {
	o2 := o
	o2.Key = (o.Key + 1) % 4
	return singletable.Tx(ctx, []singletable.WriteOp{
		a.plain.PutOp(a.value(o, ver1)),
		a.repo.PutOp(a.value(o2, ver2)),
	})
}

func (a *mAdapter[T]) member() *singletable.Target { return a.repo.Member() }

func (a *mAdapter[T]) getOp(o mop) (singletable.GetOp, func() map[string]string) {
	dest := new(T)
	return a.plain.GetOp(a.keyOf(o, 0), dest), func() map[string]string { return a.canon(*dest) }
}

func (a *mAdapter[T]) batchGet(ctx context.Context, os []mop) ([]map[string]string, error) {
	keys := make([]T, len(os))
	for i, o := range os {
		keys[i] = a.keyOf(o, 0)
	}
	vs, err := batchGet(ctx, a.plain, keys, []func(*singletable.ReadOptions){func(o *singletable.ReadOptions) { o.ConsistentRead = true }})
	out := make([]map[string]string, len(vs))
	for i, v := range vs {
		out[i] = a.canon(v)
	}
	return out, err
}

// canon is the model's canonical form (canonAV's) of the attributes of a
// value read through the library: each field by its dynamodbav name and
// options, times as the library stores them (epoch seconds with unixtime
// or as the TTL field), except those it stores as text: "T:" and the
// instant in RFC 3339 (the stored text may be the fixed-width key form;
// readItemDiff compares instants). A KeyOnly field is "key:<field>", and
// the attributes the model derives are derived from the values read.
func (a *mAdapter[T]) canon(v T) map[string]string {
	out := map[string]string{}
	rv := reflect.ValueOf(v)
	if a.in.derive != nil {
		defer a.in.derive(out)
	}
	for j := range rv.NumField() {
		f := rv.Type().Field(j)
		if slices.Contains(a.in.keyOnly, f.Name) {
			out["key:"+f.Name] = canonOmit(rv.Field(j).String())
			continue
		}
		name, opt, _ := strings.Cut(f.Tag.Get("dynamodbav"), ",")
		if !slices.Contains(a.in.attrs, name) {
			continue
		}
		opts := strings.Split(opt, ",")
		switch x := rv.Field(j).Interface().(type) {
		case string:
			if slices.Contains(opts, "omitempty") {
				out[name] = canonOmit(x)
			} else {
				out[name] = canonS(x)
			}
		case bool:
			out[name] = canonB(x)
		case int:
			out[name] = canonN(int64(x))
		case time.Time:
			switch {
			case slices.Contains(opts, "unixtime"):
				out[name] = canonN(x.Unix())
			case name == "Expires":
				out[name] = canonTTL(x)
			default:
				out[name] = "T:" + x.UTC().Format(time.RFC3339Nano)
			}
		case []string:
			switch {
			case len(x) == 0:
				out[name] = "-"
			case slices.Contains(opts, "stringset"):
				e := slices.Clone(x)
				sort.Strings(e)
				out[name] = "SS:" + strings.Join(e, ",")
			default:
				e := make([]string, len(x))
				for i, s := range x {
					e[i] = canonS(s)
				}
				out[name] = "L:" + strings.Join(e, ",")
			}
		default:
			out[name] = fmt.Sprintf("%T", x)
		}
	}
	return out
}

func mPart(o mop) string { return fmt.Sprintf("p%d", o.Part) }
func mKey(o mop) string  { return fmt.Sprintf("k%d", o.Key) }

// modelClock is a deterministic clock (so replays are exact): each
// reading is 1.0012345 s after the last, so its nanoseconds end in zeros
// as a microsecond clock's do (macOS), which RFC 3339 trims and the
// fixed-width key form keeps.
type modelClock struct{ n atomic.Int64 }

func (c *modelClock) now() time.Time {
	return modelBase.Add(time.Duration(c.n.Add(1)) * (time.Second + 1234500))
}

// mEnv is one table with the model's entities bound to it.
type mEnv struct {
	name  string
	tbl   *singletable.Table // through the fault transport
	raw   *dynamodb.Client   // plain: scans and checks
	ft    *wiretest.Faults   // ddbfault's, and bodies truncated or failing their CRC32
	paths wiretest.Paths     // tbl's responses with items, by the path that decoded them
	clock *modelClock
	ents  []mEntity
	infos map[string]*mInfo
	// design is MLog's declaration in this table.
	design mLogDesign
	// changes decodes the synthesized stream records of Expire.
	changes *streams.Changes
}

func newModelEnv(t *testing.T, rate float64, faultSeed uint64, mode string, design mLogDesign) *mEnv {
	t.Helper()
	env := &mEnv{raw: ddblocal.Shared(t).Client(), clock: &modelClock{}, infos: map[string]*mInfo{}, design: design}
	cfg := ddbfault.Config{Seed: faultSeed, Rate: rate}
	if mode != "" {
		modelModes[mode](&cfg)
	}
	env.ft = wiretest.NewFaults(ddbfault.New(nil, cfg), faultSeed, rate/3)
	env.ft.SetEnabled(false)
	faulty := ddblocal.Shared(t).Client(func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: env.ft}
		o.DisableValidateResponseChecksum = false // env.ft's CRC32s are right but for its mismatches
		env.paths.Option(o)
		// Short SDK backoff: the faults are frequent and the test sequential.
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 5
			so.MaxBackoff = 20 * time.Millisecond
			so.RateLimiter = ratelimit.None
		})
	})
	env.name = ddblocal.TableName(t)
	clock := func(o *singletable.TableOptions) { o.Now = env.clock.now }
	env.tbl = singletable.NewTable(faulty, env.name, clock)
	plainTbl := singletable.NewTable(env.raw, env.name, clock)
	twinTbl := singletable.NewTable(env.raw, env.name, clock)

	managedSchema, managedDeps := modelManagedSchema(t)
	itemE, itemT := singletable.MustDefine(modelItemSchema(true)), singletable.MustDefine(modelItemSchema(false))
	codeE, codeT := singletable.MustDefine(modelCodeSchema(true)), singletable.MustDefine(modelCodeSchema(false))
	managedE := singletable.MustDefine(managedSchema)
	eventE := singletable.MustDefine(modelEventSchema())

	env.ents = []mEntity{
		&mAdapter[MItem]{
			in: (&mInfo{name: "MItem", unique: []string{"Email"}, versioned: true, stamped: true,
				keyFields: []string{"Part", "ID"}, indexDeps: [][]string{{"Status", "ID", "Public"}, {"Part", "Rank", "ID"}},
				full: func(o mop) map[string]string {
					return map[string]string{"Part": canonS(mPart(o)), "ID": canonS(mKey(o)), "Name": canonS(o.V.Name),
						"Email": canonOmit(o.V.Email), "Status": canonOmit(o.V.Status), "Public": canonB(o.V.Public),
						"Rank": canonN(int64(o.V.Rank))}
				}}).init(),
			repo: singletable.MustBind(env.tbl, itemE), plain: singletable.MustBind(plainTbl, itemE), twin: singletable.MustBind(twinTbl, itemT),
			value: func(o mop, ver int) MItem {
				return MItem{Part: mPart(o), ID: mKey(o), Name: o.V.Name, Email: o.V.Email, Status: o.V.Status,
					Public: o.V.Public, Rank: o.V.Rank, Version: ver}
			},
			keyOf: func(o mop, ver int) MItem { return MItem{Part: mPart(o), ID: mKey(o), Version: ver} },
		},
		&mAdapter[MCode]{
			in: (&mInfo{name: "MCode", unique: []string{"Part+Handle"}, hashed: map[string]bool{"Part+Handle": true}, versioned: true,
				keyFields: []string{"Part", "Code"}, indexDeps: [][]string{{"Label", "Code"}},
				full: func(o mop) map[string]string {
					return map[string]string{"Part": canonS(mPart(o)), "Code": canonS(mKey(o)),
						"Label": canonS(o.V.Label), "Handle": canonOmit(o.V.Handle)}
				}}).init(),
			repo: singletable.MustBind(env.tbl, codeE), plain: singletable.MustBind(plainTbl, codeE), twin: singletable.MustBind(twinTbl, codeT),
			value: func(o mop, ver int) MCode {
				return MCode{Part: mPart(o), Code: mKey(o), Label: o.V.Label, Handle: o.V.Handle, Version: ver}
			},
			keyOf: func(o mop, ver int) MCode { return MCode{Part: mPart(o), Code: mKey(o), Version: ver} },
		},
		&mAdapter[MManaged]{
			in: (&mInfo{name: "MManaged", versioned: true, stamped: true,
				keyFields: []string{"Part", "ID"}, indexDeps: managedDeps,
				full: func(o mop) map[string]string {
					return map[string]string{"Part": canonS(mPart(o)), "ID": canonS(mKey(o)), "Tier": canonOmit(o.V.Tier),
						"Note": canonS(o.V.Note), "Expires": canonTTL(modelExpires(o.V.Exp)),
						"Tags": "-", "Labels": "-", "Hits": canonN(0)}
				}}).init(),
			repo: singletable.MustBind(env.tbl, managedE), plain: singletable.MustBind(plainTbl, managedE), twin: singletable.MustBind(twinTbl, managedE),
			value: func(o mop, ver int) MManaged {
				return MManaged{Part: mPart(o), ID: mKey(o), Tier: o.V.Tier, Note: o.V.Note, Expires: modelExpires(o.V.Exp), Version: ver}
			},
			keyOf: func(o mop, ver int) MManaged { return MManaged{Part: mPart(o), ID: mKey(o), Version: ver} },
		},
		&mAdapter[MEvent]{
			in: (&mInfo{name: "MEvent", keyFields: []string{"Part", "At"}, indexDeps: [][]string{{"Msg", "At"}},
				full: func(o mop) map[string]string {
					return map[string]string{"Part": canonS(mPart(o)), "At": canonN(modelAt(o.Key).Unix()), "Msg": canonS(o.V.Msg)}
				}}).init(),
			repo: singletable.MustBind(env.tbl, eventE), plain: singletable.MustBind(plainTbl, eventE), twin: singletable.MustBind(twinTbl, eventE),
			value: func(o mop, _ int) MEvent { return MEvent{Part: mPart(o), At: modelAt(o.Key), Msg: o.V.Msg} },
			keyOf: func(o mop, _ int) MEvent { return MEvent{Part: mPart(o), At: modelAt(o.Key)} },
		},
	}
	if design.Hidden {
		env.ents = append(env.ents, newLogAdapter(design, env.tbl, plainTbl, twinTbl, func(v MLog) MLogH { return MLogH(v) }, func(v MLogH) bool { return v.Hot }))
	} else {
		env.ents = append(env.ents, newLogAdapter(design, env.tbl, plainTbl, twinTbl, func(v MLog) MLog { return v }, func(v MLog) bool { return v.Hot }))
	}
	var targets []*singletable.Target
	for _, e := range env.ents {
		env.infos[e.info().name] = e.info()
		targets = append(targets, e.member())
	}
	var err error
	if env.changes, err = streams.NewChanges(env.tbl, targets); err != nil {
		t.Fatalf("changes: %v", err)
	}
	ctx := context.Background()
	if err := env.tbl.CreateTable(ctx); err != nil {
		t.Fatalf("create table: %v", err)
	}
	ddblocal.DeleteTableOnCleanup(t, env.raw, env.name)
	return env
}

// newLogAdapter declares design d of MLog for T (MLog, or MLogH with the
// key fields tagged "-"; conv converts, hot reads Hot for GSI9's When) and
// binds it to the op table tbl, plain and twin.
func newLogAdapter[T any](d mLogDesign, tbl, plain, twin *singletable.Table, conv func(MLog) T, hot func(T) bool) *mAdapter[T] {
	e := singletable.MustDefine(modelLogSchema(d, hot))
	in := &mInfo{name: "MLog", keyFields: mLogTableKeyFields, indexDeps: d.indexDeps(), full: d.full,
		keyOnly: d.KeyOnly, keyVals: d.keyVals, derive: d.derive, deriveDeps: mLogDeriveDeps, unsetZero: true}
	if d.Lvl > 0 {
		in.derived = []string{"GSI9PK"}
	}
	return &mAdapter[T]{
		in:   in.init(),
		repo: singletable.MustBind(tbl, e), plain: singletable.MustBind(plain, e), twin: singletable.MustBind(twin, e),
		value: func(o mop, _ int) T { return conv(mLogValue(o)) },
		keyOf: func(o mop, _ int) T { return conv(MLog{Part: mPart(o), State: mState(o), ID: mKey(o)}) },
	}
}

// clear deletes every item (for a replay) and resets the clock.
func (env *mEnv) clear(ctx context.Context) error {
	raws, err := env.scan(ctx)
	if err != nil {
		return err
	}
	var reqs []types.WriteRequest
	for _, it := range raws {
		reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{
			Key: map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]}}})
	}
	for len(reqs) > 0 {
		n := min(len(reqs), 25)
		out, err := env.raw.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{env.name: reqs[:n]}})
		if err != nil {
			return err
		}
		reqs = append(reqs[n:], out.UnprocessedItems[env.name]...)
	}
	env.clock.n.Store(0)
	return nil
}

func (env *mEnv) scan(ctx context.Context) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	in := &dynamodb.ScanInput{TableName: &env.name, ConsistentRead: aws.Bool(true), Limit: aws.Int32(1000)}
	for {
		page, err := env.raw.Scan(ctx, in)
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

// readState reads the whole table into the model's form.
func (env *mEnv) readState(ctx context.Context) (mstate, map[string]map[string]types.AttributeValue, error) {
	raws, err := env.scan(ctx)
	if err != nil {
		return mstate{}, nil, err
	}
	st := mstate{items: map[string]mitem{}, guards: map[string]string{}}
	byKey := map[string]map[string]types.AttributeValue{}
	for _, it := range raws {
		k := modelKeyString(it)
		ent := attrS(it, "EntityType")
		if ent == singletable.UniqueGuardType {
			if gid, ok := gidOfKey(attrS(it, "PK")); ok {
				st.guards[gid] = attrS(it, "OwnerPK") + "|" + attrS(it, "OwnerSK")
				continue
			}
		}
		byKey[k] = it
		mi := mitem{ent: ent, attrs: map[string]string{}}
		if in := env.infos[ent]; in != nil {
			for _, a := range in.attrs {
				mi.attrs[a] = canonAV(it[a])
			}
			if in.keyVals != nil {
				for a, v := range in.keyVals(it) {
					mi.attrs[a] = v
				}
			}
		} else {
			for a, v := range it {
				mi.attrs[a] = canonAV(v)
			}
		}
		st.items[k] = mi
	}
	return st, byKey, nil
}

// ---- expectations ----

// mexpect is what the model allows an operation to do.
type mexpect struct {
	fails  []error // sentinels of a refusal (nothing changes)
	valErr bool    // a *ValidationError before the network (nothing changes)
	keyErr bool    // a *KeyError before the network is documented here (nothing changes)
	ok     bool    // success is correct
	okSame bool    // success without any change is also correct
	apply  []func(*mstate)
	keys   []string   // primary keys written
	guards []string   // guard items written
	perKey bool       // under an unknown outcome, each key independently (batches)
	why    []string   // why it must fail, and notes
	situ   string     // the situation at the key: own, absent, foreign
	subs   []*mexpect // a batch: each op's own expectation, in op order
	what   string     // a batch op: "PutOp MItem"
}

func (x *mexpect) fail(why string, errs ...error) {
	x.fails = append(x.fails, errs...)
	x.why = append(x.why, why)
}

func (x *mexpect) refused(err error) bool {
	for _, s := range x.fails {
		if errors.Is(err, s) {
			return true
		}
	}
	var ve *singletable.ValidationError
	var ke *singletable.KeyError
	return (x.valErr && errors.As(err, &ve) && !errors.As(err, &ke)) || (x.keyErr && errors.As(err, &ke))
}

func (x *mexpect) wantText() string {
	var w []string
	if x.ok || x.okSame {
		w = append(w, "success")
	}
	for _, s := range x.fails {
		if n := sentinelName(s); !slices.Contains(w, n) {
			w = append(w, n)
		}
	}
	if x.valErr {
		w = append(w, "*ValidationError")
	}
	if x.keyErr {
		w = append(w, "*KeyError")
	}
	return strings.Join(w, "|")
}

var modelSentinels = []error{singletable.ErrMaybeApplied, singletable.ErrAlreadyExists, singletable.ErrVersionConflict,
	singletable.ErrConditionFailed, singletable.ErrNotFound}

func sentinelName(s error) string {
	switch s {
	case singletable.ErrMaybeApplied:
		return "ErrMaybeApplied"
	case singletable.ErrAlreadyExists:
		return "ErrAlreadyExists"
	case singletable.ErrVersionConflict:
		return "ErrVersionConflict"
	case singletable.ErrConditionFailed:
		return "ErrConditionFailed"
	case singletable.ErrNotFound:
		return "ErrNotFound"
	}
	return s.Error()
}

func errClass(err error) string {
	if err == nil {
		return "success"
	}
	for _, s := range modelSentinels {
		if errors.Is(err, s) {
			return sentinelName(s)
		}
	}
	var ke *singletable.KeyError
	var ve *singletable.ValidationError
	var te *singletable.TransactionError
	var be *singletable.BatchError
	switch {
	case errors.As(err, &ke):
		return "*KeyError"
	case errors.As(err, &ve):
		return "*ValidationError"
	case errors.As(err, &te):
		return "*TransactionError"
	case errors.As(err, &be):
		return "*BatchError"
	case ddbfault.IsInjected(err):
		return "injected fault"
	}
	return "error"
}

// modelRefusal reports whether err is one of the refusals the model
// predicts (a sentinel other than ErrMaybeApplied, or a validation error).
func modelRefusal(err error) bool {
	for _, s := range modelSentinels[1:] {
		if errors.Is(err, s) {
			return true
		}
	}
	var ve *singletable.ValidationError
	var ke *singletable.KeyError
	return errors.As(err, &ve) || errors.As(err, &ke)
}

// version resolves an op's version mode against the state.
func resolveVersion(st mstate, key string, mode int) int {
	it, ok := st.items[key]
	stored := storedVersion(it, ok)
	switch mode {
	case 0:
		return stored
	case 1:
		return 0
	}
	return stored + 1
}

// keyErrCheck says whether an update setting fields touches a templated
// index whose other fields are unknown to it: documented (a *KeyError
// naming fields the caller could have set) or managed (a field the caller
// cannot set, such as CreatedAt: the update must work).
func keyErrCheck(in *mInfo, fields []string) (documented, managed bool) {
	set := slices.Clone(fields)
	if in.stamped {
		set = append(set, "UpdatedAt")
	}
	known := append(slices.Clone(in.keyFields), set...)
	for _, deps := range in.indexDeps {
		touched := false
		for _, d := range deps {
			touched = touched || slices.Contains(set, d)
		}
		if !touched {
			continue
		}
		for _, d := range deps {
			if !slices.Contains(known, d) {
				if modelManaged[d] {
					managed = true
				} else {
					documented = true
				}
			}
		}
	}
	return documented, managed
}

// writeExpect is what a single write (alone or in a transaction) of o to
// key k may do from state st.
func writeExpect(st mstate, in *mInfo, o mop, k, kind string, ver int, inTx bool, faults bool) *mexpect {
	x := &mexpect{keys: []string{k}}
	cur, exists := st.items[k]
	own := exists && cur.ent == in.name
	foreign := exists && !own
	stored := storedVersion(cur, exists)
	switch {
	case own:
		x.situ = "own"
	case foreign:
		x.situ = "onto " + cur.ent + "'s item"
	default:
		x.situ = "absent"
	}
	full := in.full(o)
	softConflict := false

	// Unique guards: release the old values this write replaces (when the
	// item is this entity's) and claim the new ones.
	var release, claim []string
	swap := func(attrs []string, useOld, useNew bool) {
		for _, u := range in.unique {
			if attrs != nil && !touches(u, attrs) {
				continue // nil attrs: every unique
			}
			var old, nw string
			if useOld && own {
				old = in.uvalOf(u, cur.attrs)
			}
			if useNew {
				nw = in.uvalOf(u, full)
			}
			if old == nw {
				continue
			}
			if old != "" {
				gid := gidOf(in.name, u, old)
				x.guards = append(x.guards, gid)
				release = append(release, gid)
				if g, ok := st.guards[gid]; ok && g != k {
					x.fail("the guard of the old "+u+" belongs to "+g, singletable.ErrConditionFailed)
				}
			}
			if nw != "" {
				gid := gidOf(in.name, u, nw)
				x.guards = append(x.guards, gid)
				claim = append(claim, gid)
				if g, ok := st.guards[gid]; ok && g != k {
					x.fail(u+" "+nw+" is held by "+g, singletable.ErrAlreadyExists)
				}
			}
		}
	}
	guardsApply := func(s *mstate) {
		for _, g := range release {
			delete(s.guards, g)
		}
		for _, g := range claim {
			s.guards[g] = k
		}
	}
	versionCheck := func() {
		if in.versioned && ver != 0 && stored != ver {
			x.fail(fmt.Sprintf("version %d given, %d stored", ver, stored), singletable.ErrVersionConflict)
		}
	}

	switch kind {
	case "Create":
		if exists {
			x.fail("the key is taken ("+x.situ+")", singletable.ErrAlreadyExists)
			if foreign {
				x.fails = append(x.fails, singletable.ErrConditionFailed)
			}
			// plan_lost.go: after a lost response, an item exactly equal
			// to the one this Create writes reads as its own (documented:
			// indistinguishable without timestamps or an owner id).
			x.okSame = faults && own && !inTx && itemMatch(in.newItem(o, 1), cur)
		}
		swap(nil, false, true)
		x.apply = append(x.apply, func(s *mstate) { s.items[k] = in.newItem(o, 1) })
	case "Put", "PutOp":
		if foreign {
			x.fail("the item under the key is another entity's", singletable.ErrConditionFailed, singletable.ErrAlreadyExists)
		}
		next := ver + 1
		switch {
		case kind == "PutOp":
			// A batch put stores the version given, unchecked (PutOp).
			next = ver
		case in.versioned && ver == 0 && own && stored != 0:
			// Version 0 on Put: Schema.Version documents "not stored yet"
			// (ErrVersionConflict on an existing item); the write plan on
			// main reads the stored version and writes the next. Either is
			// allowed, each with its own state (see softFails).
			next = stored + 1
			softConflict = true
		case in.versioned && stored != ver:
			x.fail(fmt.Sprintf("version %d given, %d stored", ver, stored), singletable.ErrVersionConflict)
		}
		swap(nil, true, true)
		x.apply = append(x.apply, func(s *mstate) { s.items[k] = in.newItem(o, next) })
	case "Update", "Upsert":
		upsert := kind == "Upsert"
		switch {
		case !upsert && !own:
			x.fail("no item of this entity", singletable.ErrNotFound)
			if foreign {
				x.fails = append(x.fails, singletable.ErrConditionFailed)
			}
		case upsert && foreign:
			x.fail("the item under the key is another entity's", singletable.ErrConditionFailed, singletable.ErrAlreadyExists)
		}
		versionCheck()
		swap(o.Fields, true, true)
		documented, managed := keyErrCheck(in, o.Fields)
		x.keyErr = documented
		if managed {
			x.why = append(x.why, "the update touches an index whose key holds a managed field")
		}
		x.apply = append(x.apply, func(s *mstate) {
			var it mitem
			if own {
				it = mitem{ent: in.name, attrs: copyMap(cur.attrs)}
				if in.versioned {
					it.attrs["Version"] = canonN(int64(stored + 1))
				}
			} else {
				it = mitem{ent: in.name, attrs: map[string]string{}}
				for _, a := range in.attrs {
					it.attrs[a] = "?"
					if in.unsetZero {
						it.attrs[a] = "?0"
					}
				}
				for _, f := range in.keyFields {
					it.attrs[f] = full[f]
					if v, ok := full["key:"+f]; ok {
						it.attrs["key:"+f] = v
					}
				}
				if in.versioned {
					it.attrs["Version"] = canonN(1)
				}
				if in.stamped {
					it.attrs["CreatedAt"] = "?+"
				}
			}
			for _, f := range o.Fields {
				it.attrs[f] = full[f]
				if v, ok := full["key:"+f]; ok {
					it.attrs["key:"+f] = v
				}
			}
			if in.derive != nil && (!own || slices.ContainsFunc(o.Fields, func(f string) bool { return slices.Contains(in.deriveDeps, f) })) {
				in.derive(it.attrs)
			}
			for _, op := range o.Ops {
				before := it.attrs[op.Field]
				if !own {
					before = "-"
				}
				it.attrs[op.Field] = applyOperator(op, before)
			}
			if in.stamped {
				it.attrs["UpdatedAt"] = "?+"
			}
			s.items[k] = it
		})
	case "Delete", "DeleteOp":
		switch {
		case !exists && (inTx || kind == "DeleteOp") && (!in.versioned || ver == 0):
			// A transaction's delete of nothing is a no-op.
		case !exists && inTx:
			x.fail(fmt.Sprintf("nothing to delete at version %d", ver), singletable.ErrNotFound, singletable.ErrVersionConflict)
		case !exists:
			x.fail("nothing to delete", singletable.ErrNotFound)
			x.okSame = faults // after a lost response the retry finds nothing
		case foreign:
			x.fail("the item under the key is another entity's", singletable.ErrConditionFailed, singletable.ErrNotFound)
		}
		if own {
			versionCheck()
		}
		swap(nil, true, false)
		x.apply = append(x.apply, func(s *mstate) {
			if own {
				delete(s.items, k)
			}
		})
	default:
		panic("model: kind " + kind)
	}
	x.apply = append(x.apply, guardsApply)
	x.ok = len(x.fails) == 0
	if softConflict {
		x.fails = append(x.fails, singletable.ErrVersionConflict)
		x.why = append(x.why, fmt.Sprintf("version 0 given, %d stored: success (version %d) or ErrVersionConflict", stored, stored+1))
	}
	return x
}

// ---- the run ----

type mFailure struct {
	op     int // -1: the final check
	class  string
	detail string
}

type mRun struct {
	env   *mEnv
	rate  float64
	mode  string // a ddbfault mode (modelModes), "" for none
	ops   []mop
	st    mstate
	raws  map[string]map[string]types.AttributeValue
	bad   map[string]bool // guard violations of the current state
	log   []string
	fails []mFailure
	errs  int
	// envErrs counts, in a mode run, the ops that ended with a conflict
	// or a throttle (envRefusal).
	envErrs int
	stopAt  string // replays: stop at the first failure of this class
	// checked is the state of the last read check (readCheck); reads
	// counts the checks and readTime their time.
	checked  mstate
	reads    int
	readTime time.Duration
	done     bool
	// indexQueries counts the QueryIndex ops that read an index, and
	// indexItems the items they returned and checked.
	indexQueries, indexItems int
}

func (r *mRun) fail(i int, class, detail string) {
	r.fails = append(r.fails, mFailure{op: i, class: class, detail: detail})
	if class == r.stopAt {
		r.done = true
	}
}

func (r *mRun) ent(i int) mEntity { return r.env.ents[i] }

func (r *mRun) describe(o mop, ver int) string {
	e := r.ent(o.Ent)
	full := e.info().full(o)
	var parts []string
	names := make([]string, 0, len(full))
	for a := range full {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		if slices.Contains(e.info().keyFields, a) || strings.HasPrefix(a, "key:") || slices.Contains(e.info().derived, a) {
			continue
		}
		if (o.Kind == "Update" || o.Kind == "Upsert") && !slices.Contains(o.Fields, a) {
			continue
		}
		if strings.HasPrefix(o.Kind, "Delete") {
			continue
		}
		v := full[a]
		if slices.Contains(e.info().keyOnly, a) {
			v = full["key:"+a]
		}
		parts = append(parts, a+"="+strings.TrimPrefix(v, "S:"))
	}
	s := fmt.Sprintf("%s %s %s", o.Kind, e.info().name, e.key(o))
	if len(parts) > 0 {
		s += " {" + strings.Join(parts, " ") + "}"
	}
	if e.info().versioned && o.Kind != "Create" {
		s += fmt.Sprintf(" v=%d", ver)
	}
	if len(o.Ops) > 0 && (o.Kind == "Update" || o.Kind == "Upsert") {
		s += fmt.Sprint(" ops ", o.Ops)
	}
	return s
}

// plan resolves o against the state: what the model allows, how to run
// it, and its description and failure class prefix.
func (r *mRun) plan(st mstate, o mop) (x *mexpect, run func(context.Context) error, desc, class string) {
	faults := r.rate > 0
	switch o.Kind {
	case "Create", "Put", "Update", "Upsert", "Delete":
		e := r.ent(o.Ent)
		k := e.key(o)
		ver := resolveVersion(st, k, o.VMode)
		x = writeExpect(st, e.info(), o, k, o.Kind, ver, false, faults)
		return x, e.single(o.Kind, o, ver), r.describe(o, ver), fmt.Sprintf("%s %s [%s]", o.Kind, e.info().name, x.situ)
	case "Tx":
		x = &mexpect{ok: true}
		var adds []func() singletable.WriteOp
		var descs, kinds []string
		for _, s := range o.Sub {
			e := r.ent(s.Ent)
			k := e.key(s)
			ver := resolveVersion(st, k, s.VMode)
			sx := writeExpect(st, e.info(), s, k, s.Kind, ver, true, faults)
			x.fails = append(x.fails, sx.fails...)
			x.why = append(x.why, sx.why...)
			x.keyErr = x.keyErr || sx.keyErr
			x.ok = x.ok && sx.ok
			x.apply = append(x.apply, sx.apply...)
			for _, kk := range sx.keys {
				if slices.Contains(x.keys, kk) {
					x.valErr = true
					x.why = append(x.why, "two writes to "+kk)
				}
				x.keys = append(x.keys, kk)
			}
			for _, g := range sx.guards {
				if slices.Contains(x.guards, g) {
					x.valErr = true
					x.why = append(x.why, "two writes to the guard "+g)
				}
				x.guards = append(x.guards, g)
			}
			adds = append(adds, e.txOp(s.Kind, s, ver))
			descs = append(descs, r.describe(s, ver))
			// The class names the sub-ops that make this transaction
			// notable: those onto another entity's item, and updates
			// touching an index keyed by a managed field.
			switch _, managed := keyErrCheck(e.info(), s.Fields); {
			case strings.HasPrefix(sx.situ, "onto"):
				kinds = append(kinds, s.Kind+" "+e.info().name+" ["+sx.situ+"]")
			case managed && (s.Kind == "Update" || s.Kind == "Upsert"):
				kinds = append(kinds, s.Kind+" "+e.info().name+" [index keyed by a managed field]")
			}
		}
		if x.valErr {
			x.ok = false
		}
		run = func(ctx context.Context) error {
			ops := make([]singletable.WriteOp, len(adds))
			for i, op := range adds {
				ops[i] = op()
			}
			return singletable.Tx(ctx, ops)
		}
		slices.Sort(kinds)
		class = "Tx"
		if x.valErr {
			class = "Tx (two writes to one item)"
		} else if len(kinds) > 0 {
			class = "Tx{" + strings.Join(slices.Compact(kinds), ", ") + "}"
		}
		return x, run, "Tx[" + strings.Join(descs, "; ") + "]", class
	case "Batch":
		x = &mexpect{perKey: true}
		var wops []singletable.WriteOp
		var descs []string
		unique := false
		for _, s := range o.Sub {
			e := r.ent(s.Ent)
			in := e.info()
			k := e.key(s)
			ver := resolveVersion(st, k, 0) + 1
			if s.Kind == "Delete" {
				ver = 0 // a DeleteOp checks no version
			}
			if len(in.unique) > 0 {
				unique = true
			}
			wops = append(wops, e.writeOp(s.Kind, s, ver))
			s.Kind += "Op"
			descs = append(descs, r.describe(s, ver))
			// Each op on its own: a batch request replaces or deletes
			// (the keys of MManaged and MEvent meet no other entity); an
			// op of an entity with unique fields is written as a guarded
			// Put or Delete would be, the version as given.
			sx := writeExpect(st, in, s, k, s.Kind, ver, false, faults)
			sx.what = s.Kind + " " + in.name + " [" + sx.situ + "]"
			x.subs = append(x.subs, sx)
			x.keys = append(x.keys, sx.keys...)
			x.guards = append(x.guards, sx.guards...)
			x.apply = append(x.apply, sx.apply...)
		}
		class = "Batch"
		if unique {
			// A batch request cannot carry the guards: an op of an entity
			// with unique fields is either refused before the network
			// (*ValidationError, nothing written) or written with its
			// guards, as a Put or Delete would be (judgeBatch).
			x.valErr = true
			x.why = append(x.why, "a batch op of an entity with Unique fields: refused whole, or written with its guards")
			class = "Batch (with a Unique entity)"
		}
		run = func(ctx context.Context) error {
			if faults {
				return singletable.BatchWrite(ctx, wops, fastRetries)
			}
			return singletable.BatchWrite(ctx, wops)
		}
		return x, run, "BatchWrite[" + strings.Join(descs, "; ") + "]", class
	case "CrossTx":
		e := r.ent(o.Ent)
		o2 := o
		o2.Key = (o.Key + 1) % 4
		k1, k2 := e.key(o), e.key(o2)
		v1, v2 := resolveVersion(st, k1, 0), resolveVersion(st, k2, 0)
		x = &mexpect{valErr: true, keys: []string{k1, k2}, why: []string{"a Tx over repositories of two clients"}}
		run = func(ctx context.Context) error { return e.crossTx(ctx, r.env.tbl, o, v1, v2) }
		return x, run, fmt.Sprintf("Tx across two clients[%s; %s]", r.describe(o, v1), r.describe(o2, v2)), "Tx across two clients"
	}
	panic("model: kind " + o.Kind)
}

func (r *mRun) step(ctx context.Context, i int, o mop) error {
	// No timeout of its own: on a loaded machine an operation may take
	// minutes; a hung one is go test's -timeout to report.
	before := r.st
	switch o.Kind {
	case "QueryDelete":
		return r.queryDelete(ctx, i, o)
	case "QueryIndex":
		return r.queryIndex(ctx, i, o)
	case "Expire":
		return r.expire(ctx, i, o)
	}
	x, run, desc, class := r.plan(before, o)
	if o.Lost && r.rate > 0 {
		r.env.ft.Next(r.writeAPI(o), ddbfault.LostResponse)
		desc += " (response lost)"
	}
	err := run(ctx)
	return r.judge(ctx, i, desc, class, x, err, before)
}

// writeAPI is the DynamoDB operation that carries o's write.
func (r *mRun) writeAPI(o mop) string {
	switch o.Kind {
	case "Batch":
		return "BatchWriteItem"
	case "Tx", "CrossTx":
		return "TransactWriteItems"
	}
	in := r.ent(o.Ent).info()
	guarded := len(in.unique) > 0
	if o.Kind == "Update" || o.Kind == "Upsert" {
		guarded = false
		for _, u := range in.unique {
			guarded = guarded || touches(u, o.Fields)
		}
	}
	switch {
	case guarded:
		return "TransactWriteItems"
	case o.Kind == "Update" || o.Kind == "Upsert":
		return "UpdateItem"
	case o.Kind == "Delete":
		return "DeleteItem"
	}
	return "PutItem"
}

// queryDelete queries the entity's items of a partition and deletes one
// through the value read back.
func (r *mRun) queryDelete(ctx context.Context, i int, o mop) error {
	e := r.ent(o.Ent)
	in := e.info()
	pk, _, _ := strings.Cut(e.key(o), "|")
	var want []string
	for k, it := range r.st.items {
		if it.ent == in.name && strings.HasPrefix(k, pk+"|") {
			want = append(want, k)
		}
	}
	sort.Strings(want)
	desc := fmt.Sprintf("QueryDelete %s %s pick %d", in.name, pk, o.Pick)
	keys, del, err := e.query(ctx, o.Part)
	if err != nil {
		if r.rate == 0 && (r.mode == "" || !envRefusal(err)) {
			r.fail(i, "Query "+in.name+": error", fmt.Sprintf("op %d %s: %v", i, desc, err))
		}
		r.log = append(r.log, fmt.Sprintf("%4d %s -> query: %s", i, desc, errClass(err)))
		return nil
	}
	if len(keys) != len(want) {
		r.fail(i, "Query "+in.name+": wrong number of items",
			fmt.Sprintf("op %d %s: the query returned %d items (%v), the model has %d (%v)", i, desc, len(keys), keys, len(want), want))
		r.log = append(r.log, fmt.Sprintf("%4d %s -> %d items, want %d", i, desc, len(keys), len(want)))
		return nil
	}
	if len(want) == 0 {
		r.log = append(r.log, fmt.Sprintf("%4d %s -> no items", i, desc))
		return nil
	}
	j := o.Pick % len(want)
	k := want[j]
	desc += fmt.Sprintf(": Delete(the value read of %s, which renders %s)", k, keys[j])
	before := r.st
	it := before.items[k]
	x := writeExpect(before, in, o, k, "Delete", storedVersion(it, true), false, r.rate > 0)
	err = del(ctx, j)
	return r.judge(ctx, i, desc, "QueryDelete "+in.name+" [own]", x, err, before)
}

// queryIndex queries one of MLog's indexes (o.Pick among the design's) by
// the partition of o's values through the library, and compares the items
// returned with the model's: an item is in an index exactly when it holds
// all of the index's key attributes (mLogDesign.member), and each decodes
// as the table holds it (KeyOnly fields from its keys).
func (r *mRun) queryIndex(ctx context.Context, i int, o mop) error {
	e := r.ent(o.Ent)
	in := e.info()
	d := r.env.design
	names := d.indexes()
	if len(names) == 0 {
		r.log = append(r.log, fmt.Sprintf("%4d QueryIndex %s -> no index in %s", i, in.name, d))
		return nil
	}
	index := names[o.Pick%len(names)]
	var want []string
	for k, it := range r.st.items {
		if it.ent == in.name && d.member(index, o, k, it.attrs) {
			want = append(want, k)
		}
	}
	sort.Strings(want)
	desc := fmt.Sprintf("QueryIndex %s %s %s", in.name, index, d.probe(index, o))
	keys, canons, err := e.queryIndex(ctx, index, o)
	if err != nil {
		if r.rate == 0 && (r.mode == "" || !envRefusal(err)) {
			r.fail(i, "QueryIndex "+in.name+" "+index+": error", fmt.Sprintf("op %d %s: %v", i, desc, err))
		}
		r.log = append(r.log, fmt.Sprintf("%4d %s -> query: %s", i, desc, errClass(err)))
		return nil
	}
	got := slices.Clone(keys)
	sort.Strings(got)
	class := "QueryIndex " + in.name + " " + index
	if !slices.Equal(got, want) {
		r.fail(i, class+": the items differ from the model's",
			fmt.Sprintf("op %d %s (%s): the query returned %v, the model has %v", i, desc, d, got, want))
		r.log = append(r.log, fmt.Sprintf("%4d %s -> %d items, want %d", i, desc, len(got), len(want)))
		return nil
	}
	for j, k := range keys {
		it := r.st.items[k]
		if dd := readItemDiff(it, mitem{ent: in.name, attrs: canons[j]}); len(dd) > 0 {
			r.fail(i, fmt.Sprintf("%s: %s differ from the table", class, strings.Join(dd, ",")),
				fmt.Sprintf("op %d %s (%s)\n      %s: the table has %s, the query decoded %s", i, desc, d, k, it, mitem{ent: in.name, attrs: canons[j]}))
		}
	}
	r.indexQueries++
	r.indexItems += len(keys)
	r.log = append(r.log, fmt.Sprintf("%4d %s -> %d items", i, desc, len(keys)))
	return nil
}

// expire is DynamoDB's time to live at work on an item of an entity with
// unique fields: the item is deleted alone with the raw client (its guards
// stay), sometimes an item is created again under its key through the
// library (o.Again), and the expiry's stream record, synthesized as TTL
// writes it, is decoded and handed to Changes.ReleaseExpiredGuards. The
// model expects exactly: a guard of the expired item's values is released
// when it still names the expired key as owner and the item under that
// key (if any) does not hold its value; every other guard stays. Under
// faults an error leaves each guard released or not, and the record is
// handled again (a stream redelivers it) until it succeeds.
func (r *mRun) expire(ctx context.Context, i int, o mop) error {
	e := r.ent(o.Ent)
	in := e.info()
	faults := r.rate > 0 || r.mode != ""
	var slots []mop
	for p := range 2 {
		for k := range 4 {
			s := mop{Ent: o.Ent, Part: p, Key: k}
			if it, ok := r.st.items[e.key(s)]; ok && it.ent == in.name {
				slots = append(slots, s)
			}
		}
	}
	desc := fmt.Sprintf("Expire %s pick %d", in.name, o.Pick)
	if len(slots) == 0 {
		r.log = append(r.log, fmt.Sprintf("%4d %s -> no items", i, desc))
		return nil
	}
	s := slots[o.Pick%len(slots)]
	k := e.key(s)
	before := r.st
	old := before.items[k]
	desc = fmt.Sprintf("Expire %s %s (%s)", in.name, k, old)
	raw := r.raws[k]
	key := map[string]types.AttributeValue{"PK": raw["PK"], "SK": raw["SK"]}
	del, err := r.env.raw.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &r.env.name, Key: key, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return fmt.Errorf("op %d: the expiry's raw DeleteItem: %w", i, err)
	}
	if len(del.Attributes) == 0 {
		r.fail(i, "Expire: the item to expire was not in the table", fmt.Sprintf("op %d %s", i, desc))
	}
	mid := before.clone()
	delete(mid.items, k)
	cur := mid
	result := "expired"

	if o.Again > 0 {
		a := s
		a.Kind, a.V, a.Lost = "Create", o.V, o.Lost
		if o.Again == 3 {
			a.Ent = 1 - o.Ent
		}
		if o.Again == 1 {
			for _, u := range in.unique {
				for _, f := range strings.Split(u, "+") {
					if slices.Contains(in.keyFields, f) {
						continue
					}
					switch v := uval(old.attrs[f]); f {
					case "Email":
						a.V.Email = v
					case "Handle":
						a.V.Handle = v
					default:
						panic("model: Expire: unique field " + f)
					}
				}
			}
		}
		ae := r.ent(a.Ent)
		x := writeExpect(mid, ae.info(), a, k, "Create", 0, false, faults)
		cdesc := fmt.Sprintf("op %d %s, then %s", i, desc, r.describe(a, 0))
		if a.Lost && r.rate > 0 {
			r.env.ft.Next(r.writeAPI(a), ddbfault.LostResponse)
			cdesc += " (response lost)"
		}
		cerr := ae.single("Create", a, 0)(ctx)
		got, _, rerr := r.env.readState(ctx)
		if rerr != nil {
			return fmt.Errorf("read the table after op %d's create: %w", i, rerr)
		}
		want := mid.clone()
		for _, f := range x.apply {
			f(&want)
		}
		r.judgeOutcome(i, strings.TrimPrefix(cdesc, fmt.Sprintf("op %d ", i)), fmt.Sprintf("Expire, then Create %s [expired key]", ae.info().name), x, cerr, mid, want, got)
		desc += ", then " + r.describe(a, 0)
		result = "create: " + errClass(cerr)
		cur = got
	}

	rec := streams.Record{EventID: fmt.Sprintf("op%d", i), EventName: "REMOVE", SequenceNumber: strconv.Itoa(i),
		Keys: key, OldImage: del.Attributes,
		UserIdentity: &streams.Identity{PrincipalID: "dynamodb.amazonaws.com", Type: "Service"}}
	ch, ok, err := r.env.changes.Decode(rec)
	if err != nil || !ok || !ch.TTL || ch.Kind != streams.ChangeRemove || ch.Entity != in.name {
		r.fail(i, "Expire: the TTL record does not decode as a TTL removal",
			fmt.Sprintf("op %d %s\n      Decode: ok %v, err %v, change %+v", i, desc, ok, err, ch))
	}

	// What the release must do, from the table as it is now.
	want := cur.clone()
	wantN, sends := 0, 0
	var release []string
	at, live := cur.items[k]
	for _, u := range in.unique {
		v := in.uvalOf(u, old.attrs)
		if v == "" {
			continue
		}
		sends++ // one transaction per value held
		gid := gidOf(in.name, u, v)
		owner, has := cur.guards[gid]
		switch {
		case live && at.ent == in.name && in.uvalOf(u, at.attrs) == v:
			// Held again by the item under the key.
		case has && owner != k:
			// Another item's.
		case !has:
			// Gone already: nothing to delete, nothing counted.
		default:
			wantN++
			release = append(release, gid)
			delete(want.guards, gid)
		}
	}
	head := fmt.Sprintf("op %d %s\n      model: release %v", i, desc, release)
	if o.Lost && r.rate > 0 && sends > 0 {
		r.env.ft.Next("TransactWriteItems", ddbfault.LostResponse)
		head += " (response lost)"
	}
	n, err := r.env.changes.ReleaseExpiredGuards(ctx, ch)
	after, raws, rerr := r.env.readState(ctx)
	if rerr != nil {
		return fmt.Errorf("read the table after op %d: %w", i, rerr)
	}
	result += fmt.Sprintf(", ReleaseExpiredGuards: %s", errClass(err))
	if err != nil {
		r.errs++
		if !faults {
			r.fail(i, "Expire: ReleaseExpiredGuards: unexpected "+errClass(err), fmt.Sprintf("%s\n      error: %v", head, err))
		} else {
			// Unknown outcome: the items as before, each guard as before or
			// released.
			var d []string
			if s, dd := stateDiff(mstate{items: cur.items}, mstate{items: after.items}); len(s) > 0 {
				d = append(d, dd...)
			}
			for _, g := range unionKeys(cur.guards, after.guards) {
				if cur.guards[g] != after.guards[g] && !(slices.Contains(release, g) && after.guards[g] == "") {
					d = append(d, fmt.Sprintf("guard %s: before %q, table has %q", g, cur.guards[g], after.guards[g]))
				}
			}
			if len(d) > 0 {
				r.fail(i, "Expire: ReleaseExpiredGuards failed and changed more than the guards to release",
					fmt.Sprintf("%s\n      error: %v\n      %s", head, err, strings.Join(d, "\n      ")))
			}
			// The stream delivers the record again until it is handled.
			// The call that succeeds counts the guards it deleted: those
			// to release that the failed calls left.
			for try := 0; err != nil && try < 20; try++ {
				wantN = 0
				for _, g := range release {
					if after.guards[g] != "" {
						wantN++
					}
				}
				n, err = r.env.changes.ReleaseExpiredGuards(ctx, ch)
				if after, raws, rerr = r.env.readState(ctx); rerr != nil {
					return fmt.Errorf("read the table after op %d: %w", i, rerr)
				}
			}
			if err != nil {
				return fmt.Errorf("op %d: ReleaseExpiredGuards still fails after 20 tries: %w", i, err)
			}
			result += " (handled again: success)"
		}
	}
	if err == nil {
		if s, d := stateDiff(want, after); len(s) > 0 {
			r.fail(i, "Expire: the table differs after ReleaseExpiredGuards ("+strings.Join(s, "; ")+")",
				head+"\n      "+strings.Join(d, "\n      "))
		}
		if n != wantN {
			r.fail(i, "Expire: ReleaseExpiredGuards reports a wrong count",
				fmt.Sprintf("%s\n      released %d, want %d", head, n, wantN))
		}
		result += fmt.Sprintf(" (%d released)", n)
	}
	r.log = append(r.log, fmt.Sprintf("%4d %s -> %s", i, desc, result))
	r.invariants(ctx, i, desc, before, after, raws)
	r.st, r.raws = after, raws
	return nil
}

// readCheck reads every live item of the model through the library, after
// op i of the run without faults: all the table's keys in one TxGet (each
// with the entity of the item there, or a slot's entity where there is
// none), and each entity's keys with BatchGet (a key given twice; the
// keys of other entities' items among them). Each must return exactly the
// table's items of its entity, as the raw scan read them. The reads are a
// function of the table, so they are made only after an op that changed
// it: the TxGet after any change, an entity's BatchGet after a change
// under one of its keys. They run concurrently.
func (r *mRun) readCheck(ctx context.Context, i int) error {
	changed := map[string]bool{}
	for _, k := range unionKeys(r.checked.items, r.st.items) {
		a, aok := r.checked.items[k]
		b, bok := r.st.items[k]
		if aok != bok || a.ent != b.ent || len(itemDiffExact(a, b)) > 0 {
			changed[k] = true
		}
	}
	first := r.checked.items == nil
	if !first && len(changed) == 0 {
		return nil
	}
	r.checked = r.st
	r.reads++
	defer func(start time.Time) { r.readTime += time.Since(start) }(time.Now())
	desc := fmt.Sprintf("op %d (read check after it)", i)
	if len(r.log) > 0 {
		desc = "read check after op " + strings.TrimSpace(r.log[len(r.log)-1])
	}
	type read struct {
		k     string
		ent   mEntity
		canon func() map[string]string
	}
	var ops []singletable.GetOp
	var reads []read
	seen := map[string]bool{}
	slots := make([][]mop, len(r.env.ents))
	for pass := range 2 {
		for ei, e := range r.env.ents {
			for p := range 2 {
				for kk := range 4 {
					s := mop{Ent: ei, Part: p, Key: kk}
					if pass == 0 {
						slots[ei] = append(slots[ei], s)
					}
					k := e.key(s)
					it, live := r.st.items[k]
					// First the keys' live items by their entity; then the
					// empty keys by the first slot's entity.
					if seen[k] || (pass == 0 && (!live || it.ent != e.info().name)) {
						continue
					}
					seen[k] = true
					op, canon := e.getOp(s)
					ops = append(ops, op)
					reads = append(reads, read{k, e, canon})
				}
			}
		}
	}
	var found []bool
	var txErr error
	batch := make([][]map[string]string, len(r.env.ents))
	batchErr := make([]error, len(r.env.ents))
	batchDone := make([]bool, len(r.env.ents))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); found, txErr = singletable.TxGet(ctx, ops) }()
	for ei, e := range r.env.ents {
		touched := first
		for _, s := range slots[ei] {
			touched = touched || changed[e.key(s)]
		}
		if !touched {
			continue
		}
		keys := append(slices.Clone(slots[ei]), slots[ei][i%len(slots[ei])]) // a key given twice
		slots[ei], batchDone[ei] = keys, true
		wg.Add(1)
		go func() { defer wg.Done(); batch[ei], batchErr[ei] = e.batchGet(ctx, keys) }()
	}
	wg.Wait()

	if txErr != nil {
		r.fail(i, "TxGet: error", fmt.Sprintf("%s\n      TxGet of %d keys: %v", desc, len(ops), txErr))
	} else {
		for j, rd := range reads {
			it, live := r.st.items[rd.k]
			name := rd.ent.info().name
			wantFound := live && it.ent == name
			if found[j] != wantFound {
				r.fail(i, fmt.Sprintf("TxGet %s: found %v, want %v", name, found[j], wantFound),
					fmt.Sprintf("%s\n      %s: the table has %v", desc, rd.k, it))
				continue
			}
			if !wantFound {
				continue
			}
			got := mitem{ent: name, attrs: rd.canon()}
			if d := readItemDiff(it, got); len(d) > 0 {
				r.fail(i, fmt.Sprintf("TxGet %s: %s differ from the table", name, strings.Join(d, ",")),
					fmt.Sprintf("%s\n      %s: the table has %s, TxGet decoded %s", desc, rd.k, it, got))
			}
		}
	}
	for ei, e := range r.env.ents {
		if !batchDone[ei] {
			continue
		}
		name := e.info().name
		if batchErr[ei] != nil {
			r.fail(i, "BatchGet "+name+": error", fmt.Sprintf("%s\n      %v", desc, batchErr[ei]))
			continue
		}
		var want []mitem
		for _, s := range slots[ei] {
			if it, ok := r.st.items[e.key(s)]; ok && it.ent == name {
				want = append(want, it)
			}
		}
		got := batch[ei]
		bad := len(got) != len(want)
		for j := 0; !bad && j < len(got); j++ {
			bad = len(readItemDiff(want[j], mitem{ent: name, attrs: got[j]})) > 0
		}
		if bad {
			var gs []string
			for _, g := range got {
				gs = append(gs, mitem{ent: name, attrs: g}.String())
			}
			r.fail(i, "BatchGet "+name+": the items differ from the table",
				fmt.Sprintf("%s\n      want %v\n      got  %v", desc, want, gs))
		}
	}
	return nil
}

// readItemDiff compares an item of the table with a value read through
// the library (canon): a time the value holds as "T:" matches the same
// instant stored as text in any RFC 3339 form, and an attribute the item
// lacks (an Upsert that created it did not set it) decodes as the zero
// value.
func readItemDiff(table, read mitem) []string {
	t := mitem{ent: table.ent, attrs: copyMap(table.attrs)}
	for a, v := range read.attrs {
		if t.attrs[a] == "-" && slices.Contains([]string{"S:", "N:0", "BOOL:false", "T:0001-01-01T00:00:00Z"}, v) {
			t.attrs[a] = v
			continue
		}
		if !strings.HasPrefix(v, "T:") {
			continue
		}
		if at, err := time.Parse(time.RFC3339Nano, uval(t.attrs[a])); err == nil {
			t.attrs[a] = "T:" + at.UTC().Format(time.RFC3339Nano)
		}
	}
	return itemDiff(t, read)
}

// judge compares the operation's result and the table after it with the
// model, checks the invariants and moves the model to the table's state.
func (r *mRun) judge(ctx context.Context, i int, desc, class string, x *mexpect, err error, before mstate) error {
	after, raws, rerr := r.env.readState(ctx)
	if rerr != nil {
		return fmt.Errorf("read the table after op %d: %w", i, rerr)
	}
	if err != nil {
		r.errs++
		if r.mode != "" && envRefusal(err) {
			r.envErrs++
		}
	}
	r.log = append(r.log, fmt.Sprintf("%4d %s -> %s", i, desc, errClass(err)))
	want := before.clone()
	for _, f := range x.apply {
		f(&want)
	}
	if x.subs != nil {
		r.judgeBatch(i, desc, class, x, err, before, after)
		r.invariants(ctx, i, desc, before, after, raws)
		r.st, r.raws = after, raws
		return nil
	}
	r.judgeOutcome(i, desc, class, x, err, before, want, after)
	r.invariants(ctx, i, desc, before, after, raws)
	r.st, r.raws = after, raws
	return nil
}

// judgeOutcome compares a single (not batch) write's result and the table
// after it (after) with what the model allows from before (want: before
// with the write applied).
func (r *mRun) judgeOutcome(i int, desc, class string, x *mexpect, err error, before, want, after mstate) {
	head := fmt.Sprintf("op %d %s\n      result: %s; the model allows: %s", i, desc, errClass(err), x.wantText())
	if err != nil {
		head += fmt.Sprintf("\n      error: %v", err)
	}
	if len(x.why) > 0 {
		head += "\n      model: " + strings.Join(x.why, "; ")
	}
	diffTo := func(w mstate) (string, string) {
		s, d := stateDiff(w, after)
		return strings.Join(s, "; "), "\n      " + strings.Join(d, "\n      ")
	}
	var te *singletable.TransactionError
	unknown := r.rate > 0 && (errors.Is(err, singletable.ErrMaybeApplied) ||
		(errors.As(err, &te) && te.MaybeApplied) || !modelRefusal(err))
	switch {
	case err == nil && x.ok:
		if s, d := diffTo(want); s != "" {
			r.fail(i, class+": the table differs after a success ("+s+")", head+d)
		}
	case err == nil && x.okSame:
		if s, d := diffTo(before); s != "" {
			r.fail(i, class+": a success that changed nothing changed the table ("+s+")", head+d)
		}
	case err == nil:
		detail := head
		if s, d := diffTo(before); s != "" {
			detail += "\n      table changed (" + s + "):" + d
		}
		r.fail(i, class+": unexpected success", detail)
	case !unknown && x.refused(err), r.mode != "" && envRefusal(err):
		if s, d := diffTo(before); s != "" {
			r.fail(i, class+": refused ("+errClass(err)+") but the table changed ("+s+")", head+d)
		}
	case unknown:
		// The outcome is unknown: the state before, or (when the write is
		// allowed to succeed) the state after; a batch's keys each.
		if !r.beforeOrAfter(before, want, after, x) {
			_, d := diffTo(before)
			_, d2 := diffTo(want)
			r.fail(i, class+": an unknown outcome left the table neither before nor after the write",
				head+"\n      against before:"+d+"\n      against after:"+d2)
		}
	default:
		r.fail(i, class+": unexpected "+errClass(err), head)
	}
}

// judgeBatch judges a BatchWrite op by op: an op the *BatchError lists
// failed (with a refusal its own expectation allows, or an unknown outcome
// under faults), every other op was applied. A batch holding an op of an
// entity with unique fields may instead be refused whole before the
// network.
func (r *mRun) judgeBatch(i int, desc, class string, x *mexpect, err error, before, after mstate) {
	head := fmt.Sprintf("op %d %s\n      result: %s", i, desc, errClass(err))
	if err != nil {
		head += fmt.Sprintf("\n      error: %v", err)
	}
	var be *singletable.BatchError
	var ve *singletable.ValidationError
	isBatchErr := errors.As(err, &be)
	if x.valErr && errors.As(err, &ve) && (!isBatchErr || !be.Sent) {
		if s, d := stateDiff(before, after); len(s) > 0 {
			r.fail(i, class+": refused before the network but the table changed ("+strings.Join(s, "; ")+")",
				head+"\n      "+strings.Join(d, "\n      "))
		}
		return
	}
	unknownAll := false
	failed := map[int]error{}
	switch {
	case err == nil:
	case isBatchErr:
		for _, f := range be.Failed {
			failed[f.Index] = f.Err
		}
	case r.rate > 0, r.mode != "" && envRefusal(err):
		// A batch of several requests may be partly applied when one of
		// them is refused.
		unknownAll = true
	default:
		r.fail(i, class+": unexpected "+errClass(err), head)
		return
	}
	// want: before with every op applied that the batch reports done; maybe
	// holds the keys and guards of the ops whose outcome is unknown (or
	// already reported), with the state each would make.
	want := before.clone()
	maybe := map[string]bool{}
	for j, sx := range x.subs {
		ferr, isFailed := failed[j]
		unknown := unknownAll || (isFailed && r.rate > 0 && (errors.Is(ferr, singletable.ErrMaybeApplied) || !modelRefusal(ferr)))
		switch {
		case unknown:
		case !isFailed && sx.ok:
			for _, f := range sx.apply {
				f(&want)
			}
			continue
		case !isFailed && sx.okSame:
			continue
		case !isFailed:
			r.fail(i, fmt.Sprintf("%s: unexpected success of %s", class, sx.what),
				fmt.Sprintf("%s\n      op %d of the batch, %s: the model allows %s (%s)", head, j, sx.what, sx.wantText(), strings.Join(sx.why, "; ")))
		case sx.refused(ferr), r.mode != "" && envRefusal(ferr):
			continue
		default:
			r.fail(i, fmt.Sprintf("%s: unexpected %s from %s", class, errClass(ferr), sx.what),
				fmt.Sprintf("%s\n      op %d of the batch, %s: %v; the model allows %s", head, j, sx.what, ferr, sx.wantText()))
		}
		for _, k := range sx.keys {
			maybe[k] = true
		}
		for _, g := range sx.guards {
			maybe[g] = true
		}
	}
	// The keys and guards of unknown outcomes may be as before or as after
	// the op; everything else must be as wanted.
	full := want.clone()
	for _, sx := range x.subs {
		for _, f := range sx.apply {
			f(&full)
		}
	}
	var bad []string
	var details []string
	for _, k := range unionKeys(before.items, unionMap(after.items, want.items)) {
		a, aok := after.items[k]
		match := func(s mstate) bool {
			w, wok := s.items[k]
			return wok == aok && (!wok || itemMatch(w, a))
		}
		if match(want) || (maybe[k] && (match(before) || match(full))) {
			continue
		}
		w := want.items[k]
		bad = append(bad, k)
		details = append(details, fmt.Sprintf("%s: want %s, table has %s", k, w, a))
	}
	for _, g := range unionKeys(before.guards, unionMap(after.guards, want.guards)) {
		a := after.guards[g]
		if want.guards[g] == a || (maybe[g] && (before.guards[g] == a || full.guards[g] == a)) {
			continue
		}
		bad = append(bad, "guard")
		details = append(details, fmt.Sprintf("guard %s: want owner %q, table has %q", g, want.guards[g], a))
	}
	if len(bad) > 0 {
		what := "ops"
		if slices.Contains(bad, "guard") {
			what = "ops and guards"
		}
		r.fail(i, class+": the table is not what the ops reported done make ("+what+")",
			head+"\n      "+strings.Join(details, "\n      "))
	}
}

func unionMap[V any](a, b map[string]V) map[string]V {
	out := make(map[string]V, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func (r *mRun) beforeOrAfter(before, want, after mstate, x *mexpect) bool {
	if !x.perKey {
		if s, _ := stateDiff(before, after); len(s) == 0 {
			return true
		}
		s, _ := stateDiff(want, after)
		return x.ok && len(s) == 0
	}
	for _, k := range unionKeys(before.items, after.items) {
		b, bok := before.items[k]
		a, aok := after.items[k]
		w, wok := want.items[k]
		if (bok == aok && (!bok || itemMatch(b, a))) || (x.ok && wok == aok && (!wok || itemMatch(w, a))) {
			continue
		}
		return false
	}
	s, _ := stateDiff(mstate{guards: before.guards}, mstate{guards: after.guards})
	return len(s) == 0
}

// invariants checks the table after op i: guards against items, and the
// index attributes of every item the op changed.
func (r *mRun) invariants(ctx context.Context, i int, desc string, before, after mstate, raws map[string]map[string]types.AttributeValue) {
	bad := r.guardViolations(after)
	for v, class := range bad {
		if !r.bad[v] {
			r.fail(i, class, fmt.Sprintf("op %d %s\n      %s", i, desc, v))
		}
	}
	r.bad = map[string]bool{}
	for v := range bad {
		r.bad[v] = true
	}
	for _, k := range unionKeys(before.items, after.items) {
		a, ok := after.items[k]
		if b, bok := before.items[k]; !ok || (bok && b.ent == a.ent && len(itemDiffExact(b, a)) == 0) {
			continue
		}
		r.renderCheck(ctx, i, desc, k, a, raws[k])
	}
}

func itemDiffExact(a, b mitem) []string {
	var out []string
	for _, k := range unionKeys(a.attrs, b.attrs) {
		if a.attrs[k] != b.attrs[k] {
			out = append(out, k)
		}
	}
	return out
}

func (r *mRun) renderCheck(ctx context.Context, i int, desc, k string, it mitem, raw map[string]types.AttributeValue) {
	in := r.env.infos[it.ent]
	if in == nil {
		r.fail(i, "item of an unknown entity type "+it.ent, fmt.Sprintf("op %d %s\n      %s: %s", i, desc, k, it))
		return
	}
	for _, e := range r.env.ents {
		if e.info() != in {
			continue
		}
		diffs, err := e.renderDiff(ctx, raw)
		if err != nil {
			r.fail(i, "render "+in.name+": cannot read the item back", fmt.Sprintf("op %d %s\n      %s: %v", i, desc, k, err))
			return
		}
		if len(diffs) > 0 {
			var attrs []string
			for _, d := range diffs {
				a, _, _ := strings.Cut(d, " ")
				attrs = append(attrs, a)
			}
			r.fail(i, fmt.Sprintf("render %s: stored %s differ from the rendering of the stored item", in.name, strings.Join(attrs, ",")),
				fmt.Sprintf("op %d %s\n      %s (%s):\n      %s", i, desc, k, it, strings.Join(diffs, "\n      ")))
		}
	}
}

// guardViolations lists, with their classes, the guards without a live
// item of their entity holding their value, and the held values without
// their guard.
func (r *mRun) guardViolations(st mstate) map[string]string {
	out := map[string]string{}
	for gid, owner := range st.guards {
		ent, attr, val := parseGid(gid)
		it, ok := st.items[owner]
		in := r.env.infos[ent]
		if !ok || it.ent != ent || in == nil || in.uvalOf(attr, it.attrs) != val {
			holder := "nothing"
			if ok {
				holder = it.String()
			}
			out[fmt.Sprintf("orphan guard %s -> %s, which holds %s", gid, owner, holder)] = "guard: orphan " + ent + "." + attr
		}
	}
	for k, it := range st.items {
		in := r.env.infos[it.ent]
		if in == nil {
			continue
		}
		for _, u := range in.unique {
			if v := in.uvalOf(u, it.attrs); v != "" {
				if g := st.guards[gidOf(in.name, u, v)]; g != k {
					out[fmt.Sprintf("%s %s holds %s=%s without its guard (guard owner: %q)", k, in.name, u, v, g)] = "guard: missing " + in.name + "." + u
				}
			}
		}
	}
	return out
}

// finalCheck renders every item of the table.
func (r *mRun) finalCheck(ctx context.Context) {
	for _, k := range unionKeys(r.st.items, nil) {
		r.renderCheck(ctx, -1, "final check of the whole table", k, r.st.items[k], r.raws[k])
	}
}

func (r *mRun) runAll(ctx context.Context) error {
	st, raws, err := r.env.readState(ctx)
	if err != nil {
		return err
	}
	r.st, r.raws, r.bad = st, raws, map[string]bool{}
	r.env.ft.SetEnabled(true)
	defer r.env.ft.SetEnabled(false)
	for i, o := range r.ops {
		if err := r.step(ctx, i, o); err != nil {
			return err
		}
		if r.rate == 0 && r.mode == "" {
			if err := r.readCheck(ctx, i); err != nil {
				return err
			}
		}
		if r.done {
			return nil
		}
	}
	r.env.ft.SetEnabled(false)
	r.finalCheck(ctx)
	return nil
}

// ---- driver, shrinking and the report ----

func runModel(t *testing.T, seed uint64, n, stream int, rate float64, mode string) {
	ctx := context.Background()
	faultSeed := seed*31 + uint64(stream)
	design := drawLogDesign(rand.New(rand.NewPCG(seed, uint64(stream)+100)), modelDraw)
	t.Logf("seed %d: %s", seed, design)
	env := newModelEnv(t, rate, faultSeed, mode, design)
	ops := genOps(seed, stream, n)
	r := &mRun{env: env, rate: rate, mode: mode, ops: ops}
	start := time.Now()
	if err := r.runAll(ctx); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	stats := env.ft.Stats()
	truncated, crc := env.ft.BodyStats()
	t.Logf("seed %d, %d ops in %v: %d returned an error; %d requests, %d faults injected %v, %d bodies truncated, %d CRC32 mismatches; %d read checks in %v; %d index queries checked %d items; %d failures",
		seed, n, time.Since(start).Round(time.Millisecond), r.errs, stats.Requests, stats.Total(), stats.Faults, truncated, crc,
		r.reads, r.readTime.Round(time.Millisecond), r.indexQueries, r.indexItems, len(r.fails))
	if direct, sdk := env.paths.Counts(); ddblocal.Wire() {
		t.Logf("on the direct wire path: %d responses with items decoded directly, %d by the SDK", direct, sdk)
		if direct == 0 {
			t.Errorf("no response took the direct wire path")
		}
	}
	if rate > 0 || mode != "" {
		if stats.Total() == 0 {
			t.Errorf("no faults injected at rate %.0f%% mode %q", rate*100, mode)
		}
	}
	if mode != "" {
		t.Logf("mode %s: %d conflicts, %d hot throttles injected; %d ops returned an error, %d of them a conflict or throttle (the table as before each)",
			mode, stats.Conflicts, stats.HotThrottles, r.errs, r.envErrs)
	}
	if len(r.fails) == 0 {
		return
	}
	run := fmt.Sprintf("rate=%.0f%%", rate*100)
	if mode != "" {
		run = "mode=" + mode
	}
	logPath := filepath.Join(os.TempDir(), fmt.Sprintf("singletable-model-seed%d-%s.log", seed, strings.NewReplacer("=", "", "%", "").Replace(run)))
	if err := os.WriteFile(logPath, []byte(strings.Join(r.log, "\n")+"\n"), 0o644); err != nil {
		logPath = "(not written: " + err.Error() + ")"
	}

	// Group the failures by class, in order of first occurrence.
	type group struct {
		first mFailure
		count int
	}
	var order []string
	groups := map[string]*group{}
	for _, f := range r.fails {
		g := groups[f.class]
		if g == nil {
			g = &group{first: f}
			groups[f.class] = g
			order = append(order, f.class)
		}
		g.count++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "model failures, seed %d, %s: %d failures in %d classes\n", seed, run, len(r.fails), len(order))
	fmt.Fprintf(&b, "the run's declaration of MLog: %s\n", design)
	fmt.Fprintf(&b, "replay: MODEL_SEED=%d MODEL_OPS=%d go test -race -count=1 -v -run 'TestModel/%s' .\n", seed, n, run)
	fmt.Fprintf(&b, "every operation: %s\n", logPath)
	budget := 15 * time.Second
	if s := os.Getenv("MODEL_SHRINK_SECONDS"); s != "" {
		if v, err := strconv.Atoi(s); err == nil {
			budget = time.Duration(v) * time.Second
		}
	}
	deadline := time.Now().Add(budget)
	var shrinkEnv *mEnv
	for ci, class := range order {
		g := groups[class]
		fmt.Fprintf(&b, "\n[%d] %s — %d times, first at op %d\n    %s\n", ci+1, class, g.count, g.first.op, g.first.detail)
		if g.first.op < 0 {
			continue
		}
		prefix := ops[:g.first.op+1]
		slice := relevantSlice(env, prefix)
		fmt.Fprintf(&b, "    the operations up to it on the same keys or unique values (%d of %d", len(slice), len(prefix))
		if len(slice) > 30 {
			fmt.Fprintf(&b, "; the last 30")
			slice = slice[len(slice)-30:]
		}
		fmt.Fprintf(&b, "):\n")
		for _, j := range slice {
			fmt.Fprintf(&b, "      %s\n", r.log[j])
		}
		if rate > 0 || mode != "" || time.Now().After(deadline) {
			continue
		}
		if shrinkEnv == nil {
			shrinkEnv = newModelEnv(t, 0, 0, "", design)
		}
		// Each class gets an equal share of the time left.
		share := time.Until(deadline) / time.Duration(len(order)-ci)
		minimal, tries := shrinkOps(ctx, shrinkEnv, prefix, slice, class, time.Now().Add(share))
		if minimal == nil {
			fmt.Fprintf(&b, "    (shrinking did not reproduce it in %d replays)\n", tries)
			continue
		}
		fmt.Fprintf(&b, "    minimal sequence (%d ops, %d replays; from an empty table):\n", len(minimal), tries)
		rr := &mRun{env: shrinkEnv, ops: minimal, stopAt: class}
		if err := shrinkEnv.clear(ctx); err == nil && rr.runAll(ctx) == nil {
			for _, l := range rr.log {
				fmt.Fprintf(&b, "      %s\n", l)
			}
		}
	}
	t.Error(b.String())
}

// relevantSlice lists the indexes of the operations of prefix that share
// a primary key or a unique value with its last operation (a query-delete
// shares its partition).
func relevantSlice(env *mEnv, prefix []mop) []int {
	last := prefix[len(prefix)-1]
	want := map[string]bool{}
	for _, tok := range opTokens(env, last, true) {
		want[tok] = true
	}
	var out []int
	for i, o := range prefix {
		for _, tok := range opTokens(env, o, false) {
			if want[tok] {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

func opTokens(env *mEnv, o mop, target bool) []string {
	var out []string
	switch o.Kind {
	case "Tx", "Batch":
		for _, s := range o.Sub {
			out = append(out, opTokens(env, s, target)...)
		}
		return out
	case "QueryDelete":
		pk, _, _ := strings.Cut(env.ents[o.Ent].key(o), "|")
		return []string{"part:" + pk}
	case "Expire", "QueryIndex":
		// The expired key is picked from the state, and an index holds
		// any of the entity's keys.
		for p := range 2 {
			for k := range 4 {
				out = append(out, env.ents[o.Ent].key(mop{Ent: o.Ent, Part: p, Key: k}))
			}
		}
		return out
	}
	e := env.ents[o.Ent]
	in := e.info()
	k := e.key(o)
	pk, _, _ := strings.Cut(k, "|")
	out = append(out, k)
	if !target {
		out = append(out, "part:"+pk)
	}
	full := in.full(o)
	for _, u := range in.unique {
		if v := uval(full[u]); v != "" {
			out = append(out, gidOf(in.name, u, v))
		}
	}
	if o.Kind == "CrossTx" {
		o2 := o
		o2.Key = (o.Key + 1) % 4
		out = append(out, e.key(o2))
	}
	return out
}

// shrinkOps finds a short sequence that still fails with class: the
// relevant slice if it reproduces, else the whole prefix, then removes
// chunks of operations while it still fails (ddmin), until deadline.
func shrinkOps(ctx context.Context, env *mEnv, prefix []mop, slice []int, class string, deadline time.Time) ([]mop, int) {
	tries := 0
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	fails := func(ops []mop) bool {
		tries++
		if ctx.Err() != nil || env.clear(ctx) != nil {
			return false
		}
		r := &mRun{env: env, ops: ops, stopAt: class}
		if r.runAll(ctx) != nil {
			return false
		}
		for _, f := range r.fails {
			if f.class == class {
				return true
			}
		}
		return false
	}
	var cur []mop
	for _, j := range slice {
		cur = append(cur, prefix[j])
	}
	if !fails(cur) {
		if cur = prefix; !fails(cur) {
			return nil, tries
		}
	}
	for n := 2; len(cur) >= 2 && time.Now().Before(deadline); {
		chunk := (len(cur) + n - 1) / n
		removed := false
		for start := 0; start < len(cur) && time.Now().Before(deadline); start += chunk {
			cand := append(slices.Clone(cur[:start]), cur[min(start+chunk, len(cur)):]...)
			if len(cand) > 0 && fails(cand) {
				cur, removed = cand, true
				n = max(n-1, 2)
				break
			}
		}
		if !removed {
			if chunk == 1 {
				break
			}
			n = min(n*2, len(cur))
		}
	}
	// Then the ops of each batch and transaction, one at a time.
	for j := 0; j < len(cur) && time.Now().Before(deadline); j++ {
		for k := 0; k < len(cur[j].Sub) && len(cur[j].Sub) > 1 && time.Now().Before(deadline); {
			cand := slices.Clone(cur)
			cand[j].Sub = slices.Delete(slices.Clone(cur[j].Sub), k, k+1)
			if fails(cand) {
				cur = cand
			} else {
				k++
			}
		}
	}
	return cur, tries
}
