package singletable_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
)

// The entities of the model-based property test (model_test.go). All five
// live in the partition "P#{Part}"; MItem and MCode have sort key
// templates that render the same string for the same value ("ITEM#k1"),
// so each can meet the other's item under its key. Go field names equal
// attribute names, so the model can name both the same way. MLog's
// declaration is drawn for each run (mLogDesign).

// MItem has a unique Email, a version, managed timestamps, a sparse index
// (GSI1, only while Public), a write-sharded index (GSI2) whose sort key
// holds a non-omitempty int (zero is a real value) and a multi-attribute
// index (MA1).
type MItem struct {
	Part      string    `dynamodbav:"Part"`
	ID        string    `dynamodbav:"ID"`
	Name      string    `dynamodbav:"Name"`
	Email     string    `dynamodbav:"Email,omitempty"`
	Status    string    `dynamodbav:"Status,omitempty"`
	Public    bool      `dynamodbav:"Public"`
	Rank      int       `dynamodbav:"Rank"`
	Version   int       `dynamodbav:"Version"`
	CreatedAt time.Time `dynamodbav:"CreatedAt"`
	UpdatedAt time.Time `dynamodbav:"UpdatedAt"`
}

// MCode shares MItem's key shape: SK "ITEM#{Code}". Its Handle is unique
// within its partition (the scoped, hashed tuple (Part, Handle)), a
// version, no timestamps; its GSI1 keys are templated like MItem's.
type MCode struct {
	Part    string `dynamodbav:"Part"`
	Code    string `dynamodbav:"Code"`
	Label   string `dynamodbav:"Label"`
	Handle  string `dynamodbav:"Handle,omitempty"`
	Version int    `dynamodbav:"Version"`
}

// MManaged puts managed fields in index keys: Version (GSI3), the TTL
// field (GSI4), CreatedAt (GSI5, and MA2's sort key), UpdatedAt (GSI6).
// Updates change Tags, Labels and Hits by operators; GSI7 holds Hits and
// is sparse on Labels.
type MManaged struct {
	Part      string    `dynamodbav:"Part"`
	ID        string    `dynamodbav:"ID"`
	Tier      string    `dynamodbav:"Tier,omitempty"`
	Note      string    `dynamodbav:"Note"`
	Version   int       `dynamodbav:"Version"`
	CreatedAt time.Time `dynamodbav:"CreatedAt"`
	UpdatedAt time.Time `dynamodbav:"UpdatedAt"`
	Expires   time.Time `dynamodbav:"Expires"`
	Tags      []string  `dynamodbav:"Tags,omitempty"`
	Labels    []string  `dynamodbav:"Labels,stringset,omitempty"`
	Hits      int       `dynamodbav:"Hits"`
}

// MEvent has a key field stored as unix seconds (unixtime) whose key
// rendering keeps nanoseconds.
type MEvent struct {
	Part string    `dynamodbav:"Part"`
	At   time.Time `dynamodbav:"At,unixtime"`
	Msg  string    `dynamodbav:"Msg"`
}

func modelItemSchema(unique bool) singletable.Schema[MItem] {
	s := singletable.Schema[MItem]{
		Type: "MItem", PK: "P#{Part}", SK: "ITEM#{ID}",
		Version: "Version", CreatedAt: "CreatedAt", UpdatedAt: "UpdatedAt",
		Indexes: []singletable.IndexSchema[MItem]{
			{Name: "GSI1", PK: "STATUS#{Status}", SK: "ITEM#{ID}",
				When: func(v MItem) bool { return v.Public }, WhenFields: []string{"Public"}},
			{Name: "GSI2", PK: "PART#{Part}", SK: "RANK#{Rank}#{ID}", Shards: 3},
			{Name: "MA1", PartitionAttrs: []string{"Status"}, SortAttrs: []string{"Rank"}},
		},
	}
	if unique {
		s.Unique = []singletable.Unique{{Fields: []string{"Email"}}}
	}
	return s
}

func modelCodeSchema(unique bool) singletable.Schema[MCode] {
	s := singletable.Schema[MCode]{
		Type: "MCode", PK: "P#{Part}", SK: "ITEM#{Code}", Version: "Version",
		Indexes: []singletable.IndexSchema[MCode]{{Name: "GSI1", PK: "LABEL#{Label}", SK: "CODE#{Code}"}},
	}
	if unique {
		s.Unique = []singletable.Unique{{Fields: []string{"Part", "Handle"}, Hash: true}}
	}
	return s
}

// modelManagedIndexes are MManaged's indexes with the fields each depends
// on; Define may refuse some (see modelManagedSchema).
var modelManagedIndexes = []struct {
	is   singletable.IndexSchema[MManaged]
	deps []string
}{
	{singletable.IndexSchema[MManaged]{Name: "GSI3", PK: "VER#{Version}", SK: "M#{ID}"}, []string{"Version", "ID"}},
	{singletable.IndexSchema[MManaged]{Name: "GSI4", PK: "EXP#{Expires}", SK: "M#{ID}"}, []string{"Expires", "ID"}},
	{singletable.IndexSchema[MManaged]{Name: "GSI5", PK: "TIER#{Tier}", SK: "C#{CreatedAt}"}, []string{"Tier", "CreatedAt"}},
	{singletable.IndexSchema[MManaged]{Name: "GSI6", PK: "UPD#{Part}", SK: "U#{UpdatedAt}"}, []string{"Part", "UpdatedAt"}},
	{singletable.IndexSchema[MManaged]{Name: "MA2", PartitionAttrs: []string{"Tier"}, SortAttrs: []string{"CreatedAt"}}, nil},
	// Changed by update operators (model_test.go's mOperator).
	{singletable.IndexSchema[MManaged]{Name: "GSI7", PK: "HITS#{Part}", SK: "H#{Hits}#{ID}",
		When: func(v MManaged) bool { return len(v.Labels) > 0 }, WhenFields: []string{"Labels"}}, []string{"Part", "Hits", "ID", "Labels"}},
}

// modelManagedSchema declares MManaged with every managed-field index
// Define accepts. An index it refuses must be refused with a
// *ValidationError, and is left out; deps lists the fields of the
// templated indexes kept.
func modelManagedSchema(t testing.TB) (s singletable.Schema[MManaged], deps [][]string) {
	t.Helper()
	base := func() singletable.Schema[MManaged] {
		return singletable.Schema[MManaged]{Type: "MManaged", PK: "P#{Part}", SK: "M#{ID}",
			Version: "Version", CreatedAt: "CreatedAt", UpdatedAt: "UpdatedAt", TTL: "Expires"}
	}
	s = base()
	for _, c := range modelManagedIndexes {
		try := base()
		try.Indexes = []singletable.IndexSchema[MManaged]{c.is}
		if _, err := singletable.Define(try); err != nil {
			var ve *singletable.ValidationError
			if !errors.As(err, &ve) {
				t.Errorf("Define refused index %s with %T (%v), want *ValidationError", c.is.Name, err, err)
			}
			t.Logf("Define refuses MManaged index %s (%v): left out of the model", c.is.Name, err)
			continue
		}
		s.Indexes = append(s.Indexes, c.is)
		if c.deps != nil {
			deps = append(deps, c.deps)
		}
	}
	return s, deps
}

func modelEventSchema() singletable.Schema[MEvent] {
	return singletable.Schema[MEvent]{
		Type: "MEvent", PK: "P#{Part}", SK: "EV#{At}",
		Indexes: []singletable.IndexSchema[MEvent]{{Name: "GSI1", PK: "MSG#{Msg}", SK: "EV#{At}"}},
	}
}

// modelIndexAttrs are the attributes compared with what the library
// renders from the decoded item: the primary key, every templated index
// key, the multi-attribute index attributes and the TTL attribute.
var modelIndexAttrs = []string{"EntityType", "PK", "SK",
	"GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK", "GSI4PK", "GSI4SK",
	"GSI5PK", "GSI5SK", "GSI6PK", "GSI6SK", "GSI7PK", "GSI7SK", "GSI9PK", "Status", "Rank", "Tier", "CreatedAt", "Expires"}

// modelBase is the instant the model's times are built from.
var modelBase = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// modelAt is MEvent k's At: whole seconds apart, with nanoseconds (as
// time.Now has), which a unixtime attribute cannot hold.
func modelAt(k int) time.Time {
	return modelBase.Add(time.Duration(k)*time.Second + time.Duration(k+1)*123456789)
}

// modelExpires is an expiry h hours into the year 2100 (far enough that
// no TTL sweep deletes the item), with nanoseconds; zero for h == 0 (no
// expiry).
func modelExpires(h int) time.Time {
	if h == 0 {
		return time.Time{}
	}
	return time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(h)*time.Hour + 987654321)
}

// Canonical attribute values, as the model writes them and as it reads
// them from raw items: "S:x", "N:1", "BOOL:true", "-" for absent. "?"
// matches anything, "?+" any present value, "?0" absent or a zero value.
func canonS(s string) string { return "S:" + s }
func canonOmit(s string) string {
	if s == "" {
		return "-"
	}
	return "S:" + s
}
func canonN(n int64) string { return "N:" + strconv.FormatInt(n, 10) }
func canonB(b bool) string  { return "BOOL:" + strconv.FormatBool(b) }
func canonTTL(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return canonN(t.Unix())
}

// MLog is the entity whose declaration each run draws (mLogDesign): a
// device log keyed P#{Part} | L#{State}#{ID}, with indexes keyed on the
// table's key attributes, the entity type attribute and fields' own
// attributes (sparse and not), and fields held only in the keys. Owner
// and Tag are each the key attribute of an index (their own attribute,
// absent while empty); Lvl is in GSI9's rendered partition key, which
// Hot makes sparse in one variant.
type MLog struct {
	Part  string `dynamodbav:"Part"`
	State string `dynamodbav:"State"`
	ID    string `dynamodbav:"ID"`
	Owner string `dynamodbav:"Owner"`
	Tag   string `dynamodbav:"Tag"`
	Lvl   string `dynamodbav:"Lvl,omitempty"`
	Hot   bool   `dynamodbav:"Hot"`
	Note  string `dynamodbav:"Note"`
}

// MLogH is MLog with its key fields tagged "-" (KeyOnly without an
// attribute name of their own); the two convert to each other.
type MLogH struct {
	Part  string `dynamodbav:"-"`
	State string `dynamodbav:"-"`
	ID    string `dynamodbav:"-"`
	Owner string `dynamodbav:"Owner"`
	Tag   string `dynamodbav:"Tag"`
	Lvl   string `dynamodbav:"Lvl,omitempty"`
	Hot   bool   `dynamodbav:"Hot"`
	Note  string `dynamodbav:"Note"`
}

// mLogPK and mLogSK are MLog's key templates; the model parses keys with
// them (mTemplateParse).
const (
	mLogPK = "P#{Part}"
	mLogSK = "L#{State}#{ID}"
)

// mLogDesign is one declaration of MLog: which indexes it has and which
// fields it holds only in keys. Each run of TestModel draws one
// (drawLogDesign) from its seed and stream.
type mLogDesign struct {
	Owner bool // GSI8 = Owner | SK: Owner's own attribute (sparse on Owner), the table's SK
	Inv   bool // INV = SK | PK: the inverted table key (every item)
	Lvl   int  // GSI9 = LVL#{Lvl} | SK: 0 absent, 1 sparse on Lvl, 2 also When(Hot)
	Tag   bool // GSI10 = PK | Tag: the table's PK, Tag's own attribute (sparse on Tag)
	Type  bool // TYP = EntityType | SK: every item of the entity, in SK order
	// Hidden declares MLogH instead of MLog: Part, State and ID tagged
	// "-", all KeyOnly.
	Hidden  bool
	KeyOnly []string
}

// mDrawOptions is what drawLogDesign may draw.
type mDrawOptions struct {
	// IndexKeyOnly makes a field held in an index key and in neither
	// table key (Lvl, in GSI9's partition key when GSI9 has no When, so
	// that the key always holds it) a KeyOnly candidate. Without it only
	// the table key's fields are. The model's oracle reads a KeyOnly
	// field from whichever key holds it (mLogDesign.holders).
	IndexKeyOnly bool
}

// modelDraw is what TestModel's runs draw.
var modelDraw = mDrawOptions{IndexKeyOnly: true}

// mLogTableKeyFields are the fields of MLog's table key templates.
var mLogTableKeyFields = []string{"Part", "State", "ID"}

// keyOnlyCandidates are the fields d may hold only in keys, under opts.
func (d mLogDesign) keyOnlyCandidates(opts mDrawOptions) []string {
	out := slices.Clone(mLogTableKeyFields)
	if opts.IndexKeyOnly && d.Lvl == 1 {
		out = append(out, "Lvl")
	}
	return out
}

// drawLogDesign draws a declaration of MLog: each index with probability
// 2/3 (GSI9 in either variant), the "-"-tagged type one time in four,
// else each KeyOnly candidate with probability 1/2.
func drawLogDesign(rng *rand.Rand, opts mDrawOptions) mLogDesign {
	d := mLogDesign{Owner: rng.IntN(3) > 0, Inv: rng.IntN(3) > 0, Lvl: rng.IntN(3), Tag: rng.IntN(3) > 0, Type: rng.IntN(3) > 0,
		Hidden: rng.IntN(4) == 0}
	if d.Hidden {
		d.KeyOnly = slices.Clone(mLogTableKeyFields)
		return d
	}
	for _, f := range d.keyOnlyCandidates(opts) {
		if rng.IntN(2) == 0 {
			d.KeyOnly = append(d.KeyOnly, f)
		}
	}
	return d
}

func (d mLogDesign) String() string {
	var parts []string
	for _, c := range []struct {
		on   bool
		name string
	}{{d.Owner, "GSI8=Owner|SK"}, {d.Inv, "INV=SK|PK"}, {d.Lvl == 1, "GSI9=LVL#{Lvl}|SK"}, {d.Lvl == 2, "GSI9=LVL#{Lvl}|SK When(Hot)"},
		{d.Tag, "GSI10=PK|Tag"}, {d.Type, "TYP=EntityType|SK"}, {d.Hidden, "type MLogH"}} {
		if c.on {
			parts = append(parts, c.name)
		}
	}
	if len(d.KeyOnly) > 0 {
		parts = append(parts, "KeyOnly "+strings.Join(d.KeyOnly, ","))
	}
	return "MLog{" + strings.Join(parts, "; ") + "}"
}

// indexes are the names of d's indexes.
func (d mLogDesign) indexes() []string {
	var out []string
	for _, c := range []struct {
		on   bool
		name string
	}{{d.Owner, "GSI8"}, {d.Inv, "INV"}, {d.Lvl > 0, "GSI9"}, {d.Tag, "GSI10"}, {d.Type, "TYP"}} {
		if c.on {
			out = append(out, c.name)
		}
	}
	return out
}

// modelLogSchema declares d for T (MLog or MLogH); hot reads Hot.
func modelLogSchema[T any](d mLogDesign, hot func(T) bool) singletable.Schema[T] {
	s := singletable.Schema[T]{Type: "MLog", PK: mLogPK, SK: mLogSK, KeyOnly: slices.Clone(d.KeyOnly)}
	add := func(is singletable.IndexSchema[T]) { s.Indexes = append(s.Indexes, is) }
	if d.Owner {
		add(singletable.IndexSchema[T]{Name: "GSI8", PK: "{Owner:raw}", PKAttr: "Owner", SK: mLogSK, SKAttr: "SK"})
	}
	if d.Inv {
		add(singletable.IndexSchema[T]{Name: "INV", PK: mLogSK, PKAttr: "SK", SK: mLogPK, SKAttr: "PK"})
	}
	if d.Lvl > 0 {
		is := singletable.IndexSchema[T]{Name: "GSI9", PK: "LVL#{Lvl}", SK: mLogSK, SKAttr: "SK"}
		if d.Lvl == 2 {
			is.When, is.WhenFields = hot, []string{"Hot"}
		}
		add(is)
	}
	if d.Tag {
		add(singletable.IndexSchema[T]{Name: "GSI10", PK: mLogPK, PKAttr: "PK", SK: "{Tag:raw}", SKAttr: "Tag"})
	}
	if d.Type {
		add(singletable.IndexSchema[T]{Name: "TYP", PK: "MLog", PKAttr: "EntityType", SK: mLogSK, SKAttr: "SK"})
	}
	return s
}

// mHolder is a key attribute that holds fields, and its template.
type mHolder struct{ attr, tpl string }

// holders are the key attributes holding field f, table key first.
func (d mLogDesign) holders(f string) []mHolder {
	var out []mHolder
	for _, h := range []mHolder{{"PK", mLogPK}, {"SK", mLogSK}, {"GSI9PK", "LVL#{Lvl}"}} {
		if (h.attr != "GSI9PK" || d.Lvl > 0) && strings.Contains(h.tpl, "{"+f+"}") {
			out = append(out, h)
		}
	}
	return out
}

// keyOnly reports whether d holds field f only in keys.
func (d mLogDesign) keyOnly(f string) bool { return slices.Contains(d.KeyOnly, f) }

// mTemplateParse reads field f from s, a key rendered from tpl ("L#{State}#{ID}"):
// the model's values hold no "#" and need no escaping.
func mTemplateParse(tpl, s, f string) (string, bool) {
	ts, vs := strings.Split(tpl, "#"), strings.Split(s, "#")
	if len(ts) != len(vs) {
		return "", false
	}
	val, found := "", false
	for i, t := range ts {
		switch {
		case t == "{"+f+"}":
			val, found = vs[i], true
		case strings.HasPrefix(t, "{"):
		case t != vs[i]:
			return "", false
		}
	}
	return val, found && val != ""
}

// keyVals are the canonical values of d's KeyOnly fields held in raw's
// keys ("key:<field>"), each from the first key attribute holding it,
// "-" where none does.
func (d mLogDesign) keyVals(raw map[string]types.AttributeValue) map[string]string {
	out := map[string]string{}
	for _, f := range d.KeyOnly {
		out["key:"+f] = "-"
		for _, h := range d.holders(f) {
			if v, ok := mTemplateParse(h.tpl, attrS(raw, h.attr), f); ok {
				out["key:"+f] = canonS(v)
				break
			}
		}
	}
	return out
}

// field is the canonical value of field f in attrs: its attribute, or
// for a KeyOnly field the value the keys hold.
func (d mLogDesign) field(attrs map[string]string, f string) string {
	if d.keyOnly(f) {
		return attrs["key:"+f]
	}
	return attrs[f]
}

// derive sets the index key attributes the library renders (GSI9PK) from
// the fields in attrs: present exactly when Lvl is and (in the When
// variant) Hot is true; "?" when a field it depends on is unknown ("?0",
// absent or zero, is empty and false). The
// other indexes' key attributes are the table key, the entity type or a
// field's own attribute, which the item holds as they are.
func (d mLogDesign) derive(attrs map[string]string) {
	if d.Lvl == 0 {
		return
	}
	lvl, hot := d.field(attrs, "Lvl"), attrs["Hot"]
	switch {
	case lvl == "?" || d.Lvl == 2 && hot == "?":
		attrs["GSI9PK"] = "?"
	case lvl == "-" || lvl == "?0" || lvl == canonS("") || d.Lvl == 2 && hot != canonB(true):
		attrs["GSI9PK"] = "-"
	default:
		attrs["GSI9PK"] = canonS("LVL#" + uval(lvl))
	}
}

// mLogDeriveDeps are the fields derive reads.
var mLogDeriveDeps = []string{"Lvl", "Hot"}

// member reports whether the item k (its model attributes attrs) is in
// d's index of the partition probe's values name: the item holds every
// key attribute of the index, and the partition's value.
func (d mLogDesign) member(index string, probe mop, k string, attrs map[string]string) bool {
	pk, sk, _ := strings.Cut(k, "|")
	switch index {
	case "GSI8":
		return attrs["Owner"] == canonS(probe.V.Owner)
	case "INV":
		return sk == "L#"+mState(probe)+"#"+mKey(probe)
	case "GSI9":
		return attrs["GSI9PK"] == canonS("LVL#"+probe.V.Lvl)
	case "GSI10":
		return pk == "P#"+mPart(probe) && attrs["Tag"] != "-"
	case "TYP":
		return true
	}
	panic("model: MLog index " + index)
}

// full is the item a full write of o stores, with the KeyOnly fields'
// key values ("key:<field>") and the derived index keys.
func (d mLogDesign) full(o mop) map[string]string {
	m := map[string]string{"Part": canonS(mPart(o)), "State": canonS(mState(o)), "ID": canonS(mKey(o)),
		"Owner": canonS(o.V.Owner), "Tag": canonS(o.V.Tag), "Lvl": canonOmit(o.V.Lvl), "Hot": canonB(o.V.Hot), "Note": canonS(o.V.Note)}
	// A field whose own attribute is an index key is not stored empty
	// (DynamoDB refuses an empty key value): the item leaves the index.
	if d.Owner {
		m["Owner"] = canonOmit(o.V.Owner)
	}
	if d.Tag {
		m["Tag"] = canonOmit(o.V.Tag)
	}
	for _, f := range d.KeyOnly {
		m["key:"+f], m[f] = m[f], "-"
		if m["key:"+f] == canonS("") {
			m["key:"+f] = "-"
		}
	}
	d.derive(m)
	return m
}

// mState is the State of o's MLog key: two keys a state.
func mState(o mop) string { return fmt.Sprintf("st%d", o.Key/2) }

func mLogValue(o mop) MLog {
	return MLog{Part: mPart(o), State: mState(o), ID: mKey(o), Owner: o.V.Owner, Tag: o.V.Tag, Lvl: o.V.Lvl, Hot: o.V.Hot, Note: o.V.Note}
}

// indexDeps are the fields of each templated index's rendered keys and
// When (keyErrCheck): a key attribute that is the table's key, the
// entity type or a field's own depends on no other field.
func (d mLogDesign) indexDeps() [][]string {
	var out [][]string
	for _, c := range []struct {
		on   bool
		deps []string
	}{{d.Owner, []string{"State", "ID"}}, {d.Inv, []string{"State", "ID", "Part"}}, {d.Lvl == 1, []string{"Lvl", "State", "ID"}},
		{d.Lvl == 2, []string{"Lvl", "State", "ID", "Hot"}}, {d.Tag, []string{"Part"}}, {d.Type, []string{"State", "ID"}}} {
		if c.on {
			out = append(out, c.deps)
		}
	}
	return out
}

// probe describes the partition of index that o's values query.
func (d mLogDesign) probe(index string, o mop) string {
	switch index {
	case "GSI8":
		return "Owner=" + o.V.Owner
	case "INV":
		return "SK=L#" + mState(o) + "#" + mKey(o)
	case "GSI9":
		return "GSI9PK=LVL#" + o.V.Lvl
	case "GSI10":
		return "PK=P#" + mPart(o)
	}
	return "EntityType=MLog"
}

// TestModelDesigns checks the declarations TestModel draws for MLog and
// the model's account of them, without DynamoDB: every design
// drawLogDesign draws under modelDraw is accepted by Define and Bind, and
// the draws cover every index variant, the "-"-tagged type, every KeyOnly
// candidate and none; the candidates are the table key's fields, plus Lvl
// (in GSI9's key only, without When) with IndexKeyOnly; and for each
// design, the item the model expects a write of o to store (full, keyVals)
// is the item the library renders, attribute by attribute. Declarations
// the library cannot keep correct (a sparse index whose key attributes
// are all the table's or a field's, a sharded index keyed on the table's
// SK) are refused at Bind with a *ValidationError naming the index.
func TestModelDesigns(t *testing.T) {
	t.Parallel()
	seen := map[string]int{}
	for i := range 400 {
		d := drawLogDesign(rand.New(rand.NewPCG(uint64(i), 7)), modelDraw)
		for _, f := range d.KeyOnly {
			if !slices.Contains(d.keyOnlyCandidates(modelDraw), f) {
				t.Fatalf("%s: KeyOnly %s is not a candidate", d, f)
			}
			seen["KeyOnly "+f]++
		}
		if len(d.KeyOnly) == 0 {
			seen["no KeyOnly"]++
		}
		for _, n := range d.indexes() {
			seen[n]++
		}
		seen[fmt.Sprintf("GSI9 variant %d", d.Lvl)]++
		if d.Hidden {
			seen["type MLogH"]++
			checkLogDesign(t, d, func(v MLog) MLogH { return MLogH(v) }, func(v MLogH) bool { return v.Hot })
		} else {
			checkLogDesign(t, d, func(v MLog) MLog { return v }, func(v MLog) bool { return v.Hot })
		}
	}
	for _, want := range []string{"GSI8", "INV", "GSI9", "GSI10", "TYP", "GSI9 variant 0", "GSI9 variant 1", "GSI9 variant 2",
		"type MLogH", "no KeyOnly", "KeyOnly Part", "KeyOnly State", "KeyOnly ID"} {
		if seen[want] == 0 {
			t.Errorf("400 draws never drew %s: %v", want, seen)
		}
	}

	// The candidates, with and without IndexKeyOnly.
	for _, lvl := range []int{0, 1, 2} {
		d := mLogDesign{Lvl: lvl}
		if got := d.keyOnlyCandidates(mDrawOptions{}); !slices.Equal(got, mLogTableKeyFields) {
			t.Errorf("GSI9 variant %d: candidates %v, want the table key's fields", lvl, got)
		}
		want := slices.Clone(mLogTableKeyFields)
		if lvl == 1 {
			want = append(want, "Lvl")
		}
		if got := d.keyOnlyCandidates(mDrawOptions{IndexKeyOnly: true}); !slices.Equal(got, want) {
			t.Errorf("GSI9 variant %d with IndexKeyOnly: candidates %v, want %v", lvl, got, want)
		}
	}
	drewLvl := false
	for i := range 200 {
		d := drawLogDesign(rand.New(rand.NewPCG(uint64(i), 7)), mDrawOptions{IndexKeyOnly: true})
		if d.keyOnly("Lvl") {
			drewLvl = true
			if d.Lvl != 1 || len(d.holders("Lvl")) != 1 {
				t.Errorf("%s: Lvl KeyOnly without GSI9's key holding it always", d)
			}
		}
	}
	if !drewLvl {
		t.Error("IndexKeyOnly: 200 draws never made Lvl KeyOnly")
	}

	// What the library cannot keep correct is refused.
	for _, c := range []struct {
		index string
		is    singletable.IndexSchema[MLog]
	}{
		{"GSI8", singletable.IndexSchema[MLog]{Name: "GSI8", PK: "{Owner:raw}", PKAttr: "Owner", SK: mLogSK, SKAttr: "SK",
			When: func(v MLog) bool { return v.Hot }, WhenFields: []string{"Hot"}}},
		{"INV", singletable.IndexSchema[MLog]{Name: "INV", PK: mLogSK, PKAttr: "SK", SK: mLogPK, SKAttr: "PK", Shards: 3}},
	} {
		e, err := singletable.Define(singletable.Schema[MLog]{Type: "MLog", PK: mLogPK, SK: mLogSK, Indexes: []singletable.IndexSchema[MLog]{c.is}})
		if err == nil {
			_, err = singletable.Bind(singletable.NewTable(nil, "model"), e)
		}
		var ve *singletable.ValidationError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), c.index) {
			t.Errorf("index %s: Define and Bind give %v, want a *ValidationError naming the index", c.index, err)
		}
	}
}

// checkLogDesign binds d for T and compares, for writes of several values,
// the item the model expects with the item the library renders: every
// attribute the model reads, and the KeyOnly fields' key values.
func checkLogDesign[T any](t *testing.T, d mLogDesign, conv func(MLog) T, hot func(T) bool) {
	t.Helper()
	if _, err := singletable.Define(modelLogSchema(d, hot)); err != nil {
		t.Fatalf("%s: Define: %v", d, err)
	}
	a := newLogAdapter(d, singletable.NewTable(nil, "model"), singletable.NewTable(nil, "plain"), singletable.NewTable(nil, "twin"), conv, hot)
	rng := rand.New(rand.NewPCG(uint64(len(d.String())), 1))
	for k := range 8 {
		o := mop{Ent: 4, Part: k % 2, Key: k % 4, V: genVals(rng)}
		op := a.twin.PutOp(a.value(o, 0))
		if op.Err() != nil {
			t.Fatalf("%s: PutOp of %+v: %v", d, a.value(o, 0), op.Err())
		}
		item, want := op.Item(), d.full(o)
		got := d.keyVals(item)
		for _, attr := range a.in.attrs {
			if !strings.HasPrefix(attr, "key:") {
				got[attr] = canonAV(item[attr])
			}
		}
		if dd := itemDiffExact(mitem{attrs: want}, mitem{attrs: got}); len(dd) > 0 {
			t.Errorf("%s: a write of %+v: the model expects %v, the library renders %v (%v differ)", d, a.value(o, 0), want, got, dd)
		}
		if attrS(item, "SK") != "L#"+mState(o)+"#"+mKey(o) || attrS(item, "PK") != "P#"+mPart(o) {
			t.Errorf("%s: a write of %+v has key %s | %s", d, a.value(o, 0), attrS(item, "PK"), attrS(item, "SK"))
		}
		if read := a.canon(a.value(o, 0)); len(readItemDiff(mitem{attrs: want}, mitem{attrs: read})) > 0 {
			t.Errorf("%s: the value %+v reads as %v, the model holds %v", d, a.value(o, 0), read, want)
		}
	}
}
