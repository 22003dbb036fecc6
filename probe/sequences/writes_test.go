package sequences_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
	"github.com/singletable-go/singletable/ddbfault"
	"github.com/singletable-go/singletable/ddblocal"
)

type UItem struct {
	Part      string    `dynamodbav:"Part"`
	ID        string    `dynamodbav:"ID"`
	Email     string    `dynamodbav:"Email,omitempty"`
	Status    string    `dynamodbav:"Status,omitempty"`
	Public    bool      `dynamodbav:"Public"`
	Rank      int       `dynamodbav:"Rank"`
	Note      string    `dynamodbav:"Note,omitempty"`
	Tags      []string  `dynamodbav:"Tags,omitempty"`
	Version   int       `dynamodbav:"Version"`
	CreatedAt time.Time `dynamodbav:"CreatedAt"`
	UpdatedAt time.Time `dynamodbav:"UpdatedAt"`
	Expires   time.Time `dynamodbav:"Expires"`
}

func uitemSchema(unique bool) singletable.Schema[UItem] {
	s := singletable.Schema[UItem]{
		Type: "UItem", PK: "P#{Part}", SK: "U#{ID}",
		Version: "Version", CreatedAt: "CreatedAt", UpdatedAt: "UpdatedAt", TTL: "Expires",
		Indexes: []singletable.IndexSchema[UItem]{
			{Name: "GSI1", PK: "ST#{Status}", SK: "U#{ID}", When: func(v UItem) bool { return v.Public }, WhenFields: []string{"Public"}},
			{Name: "GSI2", PK: "N#{Note}", SK: "R#{Rank}#{ID}"},
			{Name: "MA1", PartitionAttrs: []string{"Status"}, SortAttrs: []string{"Rank"}},
		},
	}
	if unique {
		s.Unique = []singletable.Unique{{Fields: []string{"Email"}}}
	}
	return s
}

var UItems = singletable.MustDefine(uitemSchema(true))
var UItemsTwin = singletable.MustDefine(uitemSchema(false))

// wop is one drawn operation.
type wop struct {
	Kind   string // Create Put Update Upsert Delete Tx Batch
	ID     int
	V      UItem
	Set    []string
	Remove []string
	Append bool
	VMode  int  // 0: version 0, 1: stored, 2: stale
	If     int  // 0: none, else condition Rank >= If-1
	Must   bool // MustExist
	Sub    []wop
	Lost   bool
	Idem   string // Update, Upsert: Idempotent token
}

func (o wop) String() string {
	if len(o.Sub) > 0 {
		var b []string
		for _, s := range o.Sub {
			b = append(b, s.String())
		}
		return o.Kind + "[" + strings.Join(b, "; ") + "]"
	}
	return fmt.Sprintf("%s(id=%d email=%q st=%q pub=%v rank=%d note=%q exp=%v set=%v rm=%v app=%v vmode=%d if=%d must=%v lost=%v idem=%q)",
		o.Kind, o.ID, o.V.Email, o.V.Status, o.V.Public, o.V.Rank, o.V.Note, !o.V.Expires.IsZero(), o.Set, o.Remove, o.Append, o.VMode, o.If, o.Must, o.Lost, o.Idem)
}

var uFields = []string{"Email", "Status", "Public", "Rank", "Note", "Expires"}

func genW(rng *rand.Rand, kind string) wop {
	o := wop{Kind: kind, ID: rng.IntN(4)}
	o.V = UItem{Part: "p", ID: strconv.Itoa(o.ID),
		Email:  []string{"", "e0", "e1", "e2"}[rng.IntN(4)],
		Status: []string{"", "s0", "s1"}[rng.IntN(3)],
		Public: rng.IntN(2) == 0,
		Rank:   rng.IntN(3),
		Note:   []string{"", "n0", "n1"}[rng.IntN(3)],
	}
	if rng.IntN(2) == 0 {
		o.V.Expires = time.Date(2100, 1, 1, rng.IntN(3), 0, 0, 0, time.UTC)
	}
	switch r := rng.IntN(10); {
	case r < 5:
		o.VMode = 0
	case r < 8:
		o.VMode = 1
	default:
		o.VMode = 2
	}
	if rng.IntN(5) == 0 {
		o.If = 1 + rng.IntN(3)
	}
	o.Must = rng.IntN(6) == 0
	if kind == "Update" || kind == "Upsert" {
		for _, f := range uFields {
			switch rng.IntN(5) {
			case 0, 1:
				o.Set = append(o.Set, f)
			case 2:
				if f != "Public" && f != "Rank" {
					o.Remove = append(o.Remove, f)
				}
			}
		}
		o.Append = rng.IntN(3) == 0
		if rng.IntN(4) == 0 {
			o.Idem = "idem"
		}
		if len(o.Set) == 0 && len(o.Remove) == 0 && !o.Append {
			o.Set = []string{"Rank"}
		}
	}
	return o
}

func genWOp(rng *rand.Rand) wop {
	var o wop
	switch w := rng.IntN(100); {
	case w < 14:
		o = genW(rng, "Create")
	case w < 30:
		o = genW(rng, "Put")
	case w < 55:
		o = genW(rng, "Update")
	case w < 67:
		o = genW(rng, "Upsert")
	case w < 78:
		o = genW(rng, "Delete")
	case w < 92:
		o = wop{Kind: "Tx"}
		seen := map[int]bool{}
		for n := 1 + rng.IntN(3); len(o.Sub) < n; {
			s := genW(rng, []string{"Create", "Put", "Update", "Upsert", "Delete", "Check"}[rng.IntN(6)])
			s.Idem = ""
			if !seen[s.ID] {
				seen[s.ID] = true
				o.Sub = append(o.Sub, s)
			}
		}
	default:
		o = wop{Kind: "Batch"}
		for n := 1 + rng.IntN(4); len(o.Sub) < n; {
			o.Sub = append(o.Sub, genW(rng, []string{"Put", "Put", "Delete"}[rng.IntN(3)]))
		}
	}
	o.Lost = rng.IntN(100) < 10
	return o
}

type wstate map[string]UItem // by ID

// readState reads the table raw and checks its invariants: index attributes
// as rendered, guards equal to the live emails. It returns the items by ID.
func readState(t *testing.T, plain *dynamodb.Client, table string, twin *singletable.Repo[UItem], dec *singletable.Repo[UItem]) (wstate, []string) {
	t.Helper()
	var problems []string
	items := wstate{}
	guards := map[string]string{}
	for _, raw := range rawScan(t, plain, table) {
		switch s(raw["EntityType"]) {
		case singletable.UniqueGuardType:
			guards[s(raw["PK"])] = s(raw["OwnerPK"]) + "|" + s(raw["OwnerSK"])
		case singletable.SequenceType, "Tally", singletable.MigrationLedgerType:
		case "UItem":
			id := strings.TrimPrefix(s(raw["SK"]), "U#")
			part := strings.TrimPrefix(s(raw["PK"]), "P#")
			v, err := dec.Get(context.Background(), UItem{Part: part, ID: id}, func(o *singletable.ReadOptions) { o.ConsistentRead = true })
			if err != nil {
				problems = append(problems, fmt.Sprintf("get %s: %v", id, err))
				continue
			}
			if part != "p" {
				id = part + "/" + id
			}
			items[id] = v
			want := twin.PutOp(v).Item()
			for _, a := range []string{"PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "Status", "Rank", "Expires", "Email", "Note"} {
				if fmt.Sprint(want[a]) != fmt.Sprint(raw[a]) {
					problems = append(problems, fmt.Sprintf("item %s: attr %s is %v, render gives %v", id, a, show(raw[a]), show(want[a])))
				}
			}
		default:
			problems = append(problems, fmt.Sprintf("unexpected item %v", raw))
		}
	}
	wantGuards := map[string]string{}
	for _, v := range items {
		if v.Email != "" {
			wantGuards["UNIQUE#UItem#Email#"+v.Email] = "P#" + v.Part + "|U#" + v.ID
		}
	}
	for g, o := range guards {
		if wantGuards[g] != o {
			problems = append(problems, fmt.Sprintf("guard %s owned by %s, want %q", g, o, wantGuards[g]))
		}
	}
	for g, o := range wantGuards {
		if _, ok := guards[g]; !ok {
			problems = append(problems, fmt.Sprintf("guard %s for %s missing", g, o))
		}
	}
	return items, problems
}

func readStateP(t *testing.T, plain *dynamodb.Client, table string) (wstate, []string) {
	ptbl := singletable.NewTable(plain, table)
	dec := singletable.MustBind(ptbl, UItems)
	ttbl := singletable.NewTable(plain, table)
	twin := singletable.MustBind(ttbl, UItemsTwin)
	return readState(t, plain, table, twin, dec)
}

func show(av types.AttributeValue) string {
	if av == nil {
		return "<absent>"
	}
	return fmt.Sprintf("%T%v", av, av)
}

// TestWritesModel drives random writes through the library (with faults at
// the given rate) and checks the raw table after each: index attributes as
// rendered, guards exact, and the state what the op's result implies.
func TestWritesModel(t *testing.T) {
	t.Parallel()
	seed := uint64(1)
	if v := os.Getenv("WSEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	nops := 150
	if v := os.Getenv("WOPS"); v != "" {
		nops, _ = strconv.Atoi(v)
	}
	rates := []float64{0, 0.15}
	if v := os.Getenv("WRATE"); v != "" {
		r, _ := strconv.ParseFloat(v, 64)
		rates = []float64{r}
	}
	for _, rate := range rates {
		t.Run(fmt.Sprintf("rate=%v", rate), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, uint64(rate*100)))
			ops := make([]wop, nops)
			for i := range ops {
				ops[i] = genWOp(rng)
			}
			if v := os.Getenv("WONLY"); v != "" {
				var keep []wop
				for _, f := range strings.Split(v, ",") {
					i, _ := strconv.Atoi(f)
					keep = append(keep, ops[i])
				}
				ops = keep
			}
			runWrites(t, seed, rate, ops)
		})
	}
}

func runWrites(t *testing.T, seed uint64, rate float64, ops []wop) {
	ctx := context.Background()
	var ft *ddbfault.Transport
	if rate > 0 {
		ft = ddbfault.New(http.DefaultTransport, ddbfault.Config{Seed: seed, Rate: rate})
	}
	var repo *singletable.Repo[UItem]
	tbl, plain := newTable(t, ft, func(tb *singletable.Table) { repo = singletable.MustBind(tb, UItems) })
	ptbl := singletable.NewTable(plain, tbl.Name())
	dec := singletable.MustBind(ptbl, UItems)
	twinTbl := singletable.NewTable(plain, tbl.Name())
	twin := singletable.MustBind(twinTbl, UItemsTwin)
	var lost *ddbfault.Transport = ft
	state := wstate{}
	outcomes := map[string]int{}
	defer func() { t.Logf("outcomes: %v\nidempotent refusals: %v", outcomes, idemRefusals) }()
	for i, o := range ops {
		if o.Lost && lost != nil {
			for _, op := range []string{"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"} {
				lost.Next(op, ddbfault.LostResponse)
			}
		}
		if o.Idem != "" {
			o.Idem = fmt.Sprintf("w%d-%d-%d-%d", seed, int(rate*100), i, time.Now().UnixNano()%1e9)
		}
		err := runW(ctx, tbl, repo, state, o)
		if lost != nil {
			// drop unused scripted faults
			lost.SetEnabled(false)
			for _, op := range []string{"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"} {
				_ = op
			}
		}
		var got wstate
		var problems []string
		if lost != nil {
			// Scripted faults still queued would hit readState's plain client? No: plain client has no transport.
		}
		got, problems = readState(t, plain, tbl.Name(), twin, dec)
		outcomes[o.Kind+":"+errClass(err)]++
		if rate == 0 {
			problems = append(problems, checkReads(ctx, dec, got)...)
		}
		if lost != nil {
			lost.SetEnabled(true)
		}
		for _, p := range problems {
			t.Errorf("op %d %v -> err %v: %s", i, o, err, p)
		}
		if msg := judge(state, got, o, err, rate > 0); msg != "" {
			t.Errorf("op %d %v -> err %v: %s", i, o, err, msg)
		}
		if t.Failed() {
			t.Logf("seed %d rate %v: stopped at op %d", seed, rate, i)
			return
		}
		state = got
	}
}

func keyOf(o wop, state wstate) UItem {
	k := UItem{Part: "p", ID: strconv.Itoa(o.ID)}
	cur, ok := state[k.ID]
	switch o.VMode {
	case 1:
		if ok {
			k.Version = cur.Version
		}
	case 2:
		if ok {
			k.Version = cur.Version + 1
		} else {
			k.Version = 3
		}
	}
	return k
}

func writeOpts(o wop) func(*singletable.WriteOptions) {
	return func(w *singletable.WriteOptions) {
		if o.If > 0 {
			w.If = expression.Name("Rank").GreaterThanEqual(expression.Value(o.If - 1))
		}
		w.MustExist = o.Must
	}
}

func buildUpdate(repo *singletable.Repo[UItem], o wop, state wstate) *singletable.Update[UItem] {
	k := keyOf(o, state)
	u := repo.Update(k).SetFrom(o.V, o.Set...)
	if len(o.Remove) > 0 {
		u = u.Remove(o.Remove...)
	}
	if o.Append {
		u = u.Append("Tags", "t")
	}
	if o.If > 0 {
		u = u.If(expression.Name("Rank").GreaterThanEqual(expression.Value(o.If - 1)))
	}
	if o.Kind == "Upsert" {
		u = u.Upsert()
	}
	if o.Idem != "" {
		u = u.Idempotent(o.Idem)
	}
	return u
}

func withVersion(o wop, state wstate) UItem {
	v := o.V
	v.Version = keyOf(o, state).Version
	return v
}

func runW(ctx context.Context, tbl *singletable.Table, repo *singletable.Repo[UItem], state wstate, o wop) error {
	switch o.Kind {
	case "Create":
		_, err := repo.Create(ctx, o.V)
		return err
	case "Put":
		_, err := repo.Put(ctx, withVersion(o, state), writeOpts(o))
		return err
	case "Update", "Upsert":
		_, err := buildUpdate(repo, o, state).Run(ctx)
		return err
	case "Delete":
		_, err := repo.Delete(ctx, keyOf(o, state), writeOpts(o))
		return err
	case "Tx":
		return singletable.Tx(ctx, tbl, func(tx *singletable.Txn) error {
			for _, s := range o.Sub {
				switch s.Kind {
				case "Create":
					repo.TxCreate(tx, s.V)
				case "Put":
					repo.TxPut(tx, withVersion(s, state), writeOpts(s))
				case "Update", "Upsert":
					buildUpdate(repo, s, state).Tx(tx)
				case "Delete":
					repo.TxDelete(tx, keyOf(s, state), writeOpts(s))
				case "Check":
					repo.TxCheck(tx, UItem{Part: "p", ID: strconv.Itoa(s.ID)}, expression.Name("Rank").GreaterThanEqual(expression.Value(s.If)))
				}
			}
			return nil
		})
	case "Batch":
		var wops []singletable.WriteOp
		for _, s := range o.Sub {
			if s.Kind == "Put" {
				v := s.V
				v.Version = 1
				wops = append(wops, repo.PutOp(v))
			} else {
				wops = append(wops, repo.DeleteOp(UItem{Part: "p", ID: strconv.Itoa(s.ID)}))
			}
		}
		return singletable.BatchWrite(ctx, wops, func(b *singletable.BatchWriteOptions) {
			b.Backoff = singletable.Backoff{Base: time.Millisecond, Max: 5 * time.Millisecond}
		})
	}
	panic(o.Kind)
}

// judge checks the outcome: err must be one the model allows from before,
// and got must be the state it implies. It returns "" when all is well.
func judge(before, got wstate, o wop, err error, faults bool) string {
	if o.Kind == "Tx" || o.Kind == "Batch" {
		return judgeMulti(before, got, o, err, faults)
	}
	want, allowed := expectSingle(before, o)
	unknown := faults && err != nil && (errors.Is(err, singletable.ErrMaybeApplied) || ddbfault.IsInjected(err) || isThrottle(err))
	if err == nil {
		if want == nil {
			return "succeeded where the model says it must fail with " + fmt.Sprint(allowed)
		}
		return diffState(before, *want, got, o)
	}
	if unknown {
		if diffState(before, before, got, o) == "" {
			return ""
		}
		if want != nil && diffState(before, *want, got, o) == "" {
			return ""
		}
		return "unknown outcome, table neither before nor after: " + diffState(before, before, got, o)
	}
	ok := false
	for _, a := range allowed {
		if errors.Is(err, a) {
			ok = true
		}
	}
	var ke *singletable.KeyError
	if errors.As(err, &ke) && (allowKeyError(before, o) || idemRefusable(o)) {
		ok = true
		idemRefusals[fmt.Sprintf("%T", err)]++
	}
	var ve *singletable.ValidationError
	if errors.As(err, &ve) && idemRefusable(o) {
		ok = true
		idemRefusals[fmt.Sprintf("%T:%s", err, ve.Reason)]++
	}
	if !ok {
		return fmt.Sprintf("error %v not allowed (allowed %v, success possible %v)", err, allowed, want != nil)
	}
	return diffState(before, before, got, o)
}

func isThrottle(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "Throughput") || strings.Contains(err.Error(), "Throttl") || strings.Contains(err.Error(), "InternalServerError") || strings.Contains(err.Error(), "StatusCode: 500") || strings.Contains(err.Error(), "exceeded maximum number of attempts") || strings.Contains(err.Error(), "TransactionConflict"))
}

var idemRefusals = map[string]int{}

func allowKeyError(before wstate, o wop) bool { return false }

// idemRefusable: an idempotent update that may need a read (a unique
// value moved, an index key touched in part, an upsert): the library
// refuses it with a *ValidationError before the network.
func idemRefusable(o wop) bool {
	if o.Idem == "" {
		return false
	}
	if o.Kind == "Upsert" {
		return true
	}
	touched := append(slices.Clone(o.Set), o.Remove...)
	given := func(fs ...string) bool {
		for _, f := range fs {
			if !slices.Contains(touched, f) {
				return false
			}
		}
		return true
	}
	if slices.Contains(touched, "Email") {
		return true
	}
	if (slices.Contains(touched, "Status") || slices.Contains(touched, "Public")) && !given("Status", "Public") {
		return true
	}
	if (slices.Contains(touched, "Note") || slices.Contains(touched, "Rank")) && !given("Note", "Rank") {
		return true
	}
	return false
}

// expectSingle returns the state after success (nil if the op cannot
// succeed) and the errors allowed.
func expectSingle(before wstate, o wop) (*wstate, []error) {
	id := strconv.Itoa(o.ID)
	cur, exists := before[id]
	k := keyOf(o, before)
	after := wstate{}
	for k, v := range before {
		after[k] = v
	}
	emailTaken := func(e string) bool {
		if e == "" {
			return false
		}
		for oid, v := range before {
			if oid != id && v.Email == e {
				return true
			}
		}
		return false
	}
	condOK := func() bool { return o.If == 0 || (exists && cur.Rank >= o.If-1) }
	versionOK := func() bool { return k.Version == 0 || (exists && k.Version == cur.Version) }
	switch o.Kind {
	case "Create":
		if exists || emailTaken(o.V.Email) {
			return nil, []error{singletable.ErrAlreadyExists}
		}
		v := o.V
		v.Version = 1
		after[id] = v
		return &after, nil
	case "Put":
		var errs []error
		if o.Must && !exists {
			errs = append(errs, singletable.ErrNotFound)
		}
		if !condOK() {
			errs = append(errs, singletable.ErrConditionFailed)
		}
		if !versionOK() {
			errs = append(errs, singletable.ErrVersionConflict, singletable.ErrNotFound)
		}
		if emailTaken(o.V.Email) {
			errs = append(errs, singletable.ErrAlreadyExists)
		}
		if len(errs) > 0 {
			return nil, errs
		}
		v := o.V
		v.Version = cur.Version + 1
		after[id] = v
		return &after, nil
	case "Update", "Upsert":
		var errs []error
		if !exists && o.Kind == "Update" {
			errs = append(errs, singletable.ErrNotFound, singletable.ErrConditionFailed, singletable.ErrVersionConflict)
		}
		if !condOK() {
			errs = append(errs, singletable.ErrConditionFailed, singletable.ErrNotFound)
		}
		if !versionOK() {
			errs = append(errs, singletable.ErrVersionConflict, singletable.ErrNotFound)
		}
		v := cur
		if !exists {
			v = UItem{Part: "p", ID: id}
		}
		for _, f := range o.Set {
			setField(&v, o.V, f)
		}
		for _, f := range o.Remove {
			setField(&v, UItem{}, f)
		}
		if o.Append {
			v.Tags = append(slices.Clone(v.Tags), "t")
		}
		if emailTaken(v.Email) && v.Email != cur.Email {
			errs = append(errs, singletable.ErrAlreadyExists)
		}
		if len(errs) > 0 {
			return nil, errs
		}
		v.Version = cur.Version + 1
		after[id] = v
		return &after, nil
	case "Delete":
		var errs []error
		if !exists {
			// a delete of nothing: ErrNotFound, state unchanged
			errs = append(errs, singletable.ErrNotFound, singletable.ErrConditionFailed, singletable.ErrVersionConflict)
			return nil, errs
		}
		if !condOK() {
			errs = append(errs, singletable.ErrConditionFailed)
		}
		if !versionOK() {
			errs = append(errs, singletable.ErrVersionConflict)
		}
		if len(errs) > 0 {
			return nil, errs
		}
		delete(after, id)
		return &after, nil
	}
	panic(o.Kind)
}

func setField(v *UItem, from UItem, f string) {
	switch f {
	case "Email":
		v.Email = from.Email
	case "Status":
		v.Status = from.Status
	case "Public":
		v.Public = from.Public
	case "Rank":
		v.Rank = from.Rank
	case "Note":
		v.Note = from.Note
	case "Expires":
		v.Expires = from.Expires
	}
}

// diffState compares got with want: items by field, managed times checked
// for presence and CreatedAt kept where the item was kept.
func diffState(before, want, got wstate, o wop) string {
	var out []string
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			out = append(out, "item "+id+" missing")
			continue
		}
		if g.CreatedAt.IsZero() || g.UpdatedAt.IsZero() {
			out = append(out, "item "+id+" lacks managed times")
		}
		if b, ok := before[id]; ok && keepsCreated(o, id) && !b.CreatedAt.IsZero() && !g.CreatedAt.Equal(b.CreatedAt) {
			out = append(out, fmt.Sprintf("item %s CreatedAt changed %v -> %v", id, b.CreatedAt, g.CreatedAt))
		}
		w2, g2 := w, g
		w2.CreatedAt, w2.UpdatedAt, g2.CreatedAt, g2.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if len(w2.Tags) == 0 {
			w2.Tags = nil
		}
		if len(g2.Tags) == 0 {
			g2.Tags = nil
		}
		if fmt.Sprintf("%+v", w2) != fmt.Sprintf("%+v", g2) {
			out = append(out, fmt.Sprintf("item %s: want %+v\n got %+v", id, w2, g2))
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			out = append(out, "item "+id+" unexpected")
		}
	}
	return strings.Join(out, "; ")
}

// keepsCreated: the op leaves item id's CreatedAt as stored (an update;
// a Put replaces the item, and a zero CreatedAt is set anew).
func keepsCreated(o wop, id string) bool {
	if o.Kind == "Update" || o.Kind == "Upsert" {
		return true
	}
	if o.Kind == "Tx" {
		for _, s := range o.Sub {
			if strconv.Itoa(s.ID) == id {
				return s.Kind == "Update" || s.Kind == "Upsert"
			}
		}
	}
	return false
}

// judgeMulti: a Tx is all or nothing (each sub judged in order from the
// state its predecessors leave); a Batch applies each op independently.
func judgeMulti(before, got wstate, o wop, err error, faults bool) string {
	if o.Kind == "Batch" {
		// each key ends as before, or as after some prefix of its ops;
		// accept any state reachable by applying a subset of ops in order.
		return judgeBatch(before, got, o, err, faults)
	}
	cur := before
	var failed []error
	for _, s := range o.Sub {
		if s.Kind == "Check" {
			it, ok := cur[strconv.Itoa(s.ID)]
			if !ok {
				failed = append(failed, singletable.ErrNotFound, singletable.ErrConditionFailed)
			} else if it.Rank < s.If {
				failed = append(failed, singletable.ErrConditionFailed)
			}
			continue
		}
		if s.Kind == "Delete" {
			if _, ok := cur[strconv.Itoa(s.ID)]; !ok {
				// a transactional delete of nothing deletes nothing, unless
				// something required the item
				if s.Must || s.If > 0 || keyOf(s, before).Version != 0 {
					failed = append(failed, singletable.ErrNotFound, singletable.ErrConditionFailed, singletable.ErrVersionConflict)
				}
				continue
			}
		}
		// versions in a tx are taken from the state before the tx (keyOf(before))
		w, errs := expectSingle(before, s)
		if w == nil {
			failed = append(failed, errs...)
			continue
		}
		// unique values claimed by earlier subs: recompute with cur
		w2, errs2 := expectSingle(cur, s)
		if w2 == nil {
			failed = append(failed, errs2...)
			continue
		}
		next := wstate{}
		for k, v := range cur {
			next[k] = v
		}
		id := strconv.Itoa(s.ID)
		if v, ok := (*w2)[id]; ok {
			next[id] = v
		} else {
			delete(next, id)
		}
		cur = next
	}
	if err == nil {
		if len(failed) > 0 {
			return fmt.Sprintf("tx succeeded, model expects failure %v", failed)
		}
		return diffState(before, cur, got, o)
	}
	unknown := faults && (errors.Is(err, singletable.ErrMaybeApplied) || ddbfault.IsInjected(err) || isThrottle(err))
	var te *singletable.TransactionError
	if errors.As(err, &te) && te.MaybeApplied {
		unknown = true
	}
	if unknown || len(failed) == 0 && faults {
		if diffState(before, before, got, o) == "" {
			return ""
		}
		if len(failed) == 0 && diffState(before, cur, got, o) == "" {
			return ""
		}
		return "tx unknown outcome, neither before nor after: " + diffState(before, before, got, o)
	}
	var ve *singletable.ValidationError
	if errors.As(err, &ve) && strings.Contains(err.Error(), "twice") {
		// two ops on one guard item (a value moved between two items of
		// the transaction): refused before the network.
		return diffState(before, before, got, o)
	}
	if len(failed) == 0 {
		return fmt.Sprintf("tx failed with %v, model expects success", err)
	}
	ok := false
	for _, a := range failed {
		if errors.Is(err, a) {
			ok = true
		}
	}
	if !ok {
		return fmt.Sprintf("tx error %v not among %v", err, failed)
	}
	return diffState(before, before, got, o)
}

func judgeBatch(before, got wstate, o wop, err error, faults bool) string {
	// For each ID, the possible end states: before, or after its ops in
	// order (all applied). With an error, any prefix for keys that failed.
	ends := map[string][]*UItem{}
	for _, s := range o.Sub {
		id := strconv.Itoa(s.ID)
		if _, ok := ends[id]; !ok {
			if v, ok := before[id]; ok {
				v := v
				ends[id] = []*UItem{&v}
			} else {
				ends[id] = []*UItem{nil}
			}
		}
		var nv *UItem
		if s.Kind == "Put" {
			v := s.V
			v.Version = 1
			nv = &v
		}
		ends[id] = append(ends[id], nv)
	}
	var out []string
	for id, seq := range ends {
		g, gok := got[id]
		cands := seq[len(seq)-1:]
		if err != nil {
			cands = seq
		}
		match := false
		for _, c := range cands {
			if c == nil && !gok {
				match = true
			}
			if c != nil && gok {
				w := wstate{id: *c}
				if diffState(wstate{}, w, wstate{id: g}, wop{Kind: "Batch"}) == "" {
					match = true
				}
			}
		}
		if !match {
			out = append(out, fmt.Sprintf("batch key %s ends as %+v (present %v), not a state of its ops", id, g, gok))
		}
	}
	for id, g := range got {
		if _, ok := ends[id]; ok {
			continue
		}
		if b, ok := before[id]; !ok || diffState(wstate{}, wstate{id: b}, wstate{id: g}, wop{Kind: "Batch"}) != "" {
			out = append(out, "batch changed untouched key "+id)
		}
	}
	for id := range before {
		if _, ok := got[id]; !ok {
			if _, touched := ends[id]; !touched {
				out = append(out, "batch removed untouched key "+id)
			}
		}
	}
	// A put of a unique value taken by another item is refused: the model above ignores that.
	if err != nil && !faults {
		var be *singletable.BatchError
		if !errors.As(err, &be) {
			out = append(out, fmt.Sprintf("batch error %T %v", err, err))
		}
	}
	return strings.Join(out, "; ")
}

var _ = ddblocal.TableName

func errClass(err error) string {
	for _, e := range []error{singletable.ErrNotFound, singletable.ErrAlreadyExists, singletable.ErrConditionFailed, singletable.ErrVersionConflict, singletable.ErrMaybeApplied} {
		if errors.Is(err, e) {
			return strings.TrimPrefix(e.Error(), "singletable: ")[:12]
		}
	}
	if err == nil {
		return "ok"
	}
	return fmt.Sprintf("%T", err)
}

// checkReads reads the four items with TxGet and BatchGet (a key given
// twice) and compares them with the table as scanned.
func checkReads(ctx context.Context, dec *singletable.Repo[UItem], want wstate) []string {
	var out []string
	dests := make([]UItem, 4)
	var ops []singletable.GetOp
	var keys []UItem
	for i := range dests {
		dests[i] = UItem{Email: "junk"}
		k := UItem{Part: "p", ID: strconv.Itoa(i)}
		ops = append(ops, dec.GetOp(k, &dests[i]))
		keys = append(keys, k)
	}
	keys = append(keys, keys[0])
	found, err := singletable.TxGet(ctx, ops...)
	if err != nil {
		return []string{fmt.Sprintf("TxGet: %v", err)}
	}
	for i, d := range dests {
		w, ok := want[strconv.Itoa(i)]
		if found[i] != ok {
			out = append(out, fmt.Sprintf("TxGet %d found %v, table %v", i, found[i], ok))
			continue
		}
		if !ok {
			w = UItem{}
		}
		if fmt.Sprintf("%+v", d) != fmt.Sprintf("%+v", w) {
			out = append(out, fmt.Sprintf("TxGet %d: %+v, table %+v", i, d, w))
		}
	}
	got, err := dec.BatchGet(ctx, keys, func(o *singletable.BatchGetOptions) { o.ConsistentRead = true })
	if err != nil {
		return append(out, fmt.Sprintf("BatchGet: %v", err))
	}
	var wantList []UItem
	for _, k := range keys {
		if w, ok := want[k.ID]; ok {
			wantList = append(wantList, w)
		}
	}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", wantList) {
		out = append(out, fmt.Sprintf("BatchGet: %+v, table %+v", got, wantList))
	}
	return out
}
