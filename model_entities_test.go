package singletable_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/singletable-go/singletable"
)

// The entities of the model-based property test (model_test.go). All four
// live in the partition "P#{Part}"; MItem and MCode have sort key
// templates that render the same string for the same value ("ITEM#k1"),
// so each can meet the other's item under its key. Go field names equal
// attribute names, so the model can name both the same way.

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
	"GSI5PK", "GSI5SK", "GSI6PK", "GSI6SK", "GSI7PK", "GSI7SK", "Status", "Rank", "Tier", "CreatedAt", "Expires"}

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
// matches anything, "?+" any present value.
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
