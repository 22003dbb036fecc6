package singletable_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // America/New_York on a machine without a zone database

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/singletable-go/singletable"
)

// The key model's edges left at issue 24's close: a collection of an
// index that does not hold the entity type, an index keyed on the entity
// type attribute, a constrained raw template on a field's own attribute,
// and zone-less key times in the entity's Location.

// Crew members and their badges share an index partition per team,
// their items typed (no MatchKeys), in two indexes that do not hold the
// entity type: ByTeam projects role and level (INCLUDE), ByTeamKeys the
// keys only. Only the primary keys tell the entities apart there.
type CrewMember struct {
	Name string `dynamodbav:"name"`
	Team string `dynamodbav:"team"`
	Role string `dynamodbav:"role"`
	Note string `dynamodbav:"note"`
}

type CrewBadge struct {
	Serial string `dynamodbav:"serial"`
	Team   string `dynamodbav:"team"`
	Level  string `dynamodbav:"level"`
}

type CrewVisitor struct {
	Name string `dynamodbav:"name"`
	Team string `dynamodbav:"team"`
}

// crewIndexes are the two team indexes, for an entity whose sort key in
// them is sk.
func crewIndexes[T any](sk string) []singletable.IndexSchema[T] {
	return []singletable.IndexSchema[T]{
		{Name: "ByTeam", PK: "T#{Team}", SK: sk, Projection: types.ProjectionTypeInclude, Include: []string{"role", "level"}},
		{Name: "ByTeamKeys", PK: "T#{Team}", SK: sk, Projection: types.ProjectionTypeKeysOnly},
	}
}

var (
	crewMembers  = singletable.MustDefine(singletable.Schema[CrewMember]{Type: "CrewMember", PK: "M#{Name}", SK: "M", Indexes: crewIndexes[CrewMember]("M#{Name}")})
	crewBadges   = singletable.MustDefine(singletable.Schema[CrewBadge]{Type: "CrewBadge", PK: "B#{Serial}", SK: "B", Indexes: crewIndexes[CrewBadge]("B#{Serial}")})
	crewVisitors = singletable.MustDefine(singletable.Schema[CrewVisitor]{Type: "CrewVisitor", PK: "V#{Name}", SK: "V", Indexes: crewIndexes[CrewVisitor]("V#{Name}")})
)

// TestIndexCollectionProjectedByKeyShape: a collection of an INCLUDE or
// KEYS_ONLY index without the entity type routes each item by its
// primary key's shape (routing by the entity type found "no entity type"
// for every item), fills the key fields and what the index projects,
// pages with cursors, asks for no entity type in Fields, reports an item
// no target takes (or skips it with SkipUnknown), and refuses before the
// network a Filter or Fields naming an attribute the index does not hold.
func TestIndexCollectionProjectedByKeyShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mr *singletable.Repo[CrewMember]
	var br *singletable.Repo[CrewBadge]
	var vr *singletable.Repo[CrewVisitor]
	_, c := newTable(t, func(tbl *singletable.Table) {
		mr, br, vr = singletable.MustBind(tbl, crewMembers), singletable.MustBind(tbl, crewBadges), singletable.MustBind(tbl, crewVisitors)
	})
	for i := range 5 {
		if _, err := mr.Create(ctx, CrewMember{Name: fmt.Sprint("m", i), Team: "red", Role: "pilot", Note: "n"}); err != nil {
			t.Fatal(err)
		}
		if _, err := br.Create(ctx, CrewBadge{Serial: fmt.Sprint("b", i), Team: "red", Level: "gold"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := mr.Create(ctx, CrewMember{Name: "other", Team: "blue"}); err != nil {
		t.Fatal(err)
	}
	for _, index := range []string{"ByTeam", "ByTeamKeys"} {
		var members []CrewMember
		var badges []CrewBadge
		n, pages := 0, 0
		for after := ""; pages == 0 || after != "" && pages < 10; pages++ {
			page, err := mr.IndexCollection(index, CrewMember{Team: "red"}).Limit(3).After(after).Page(ctx, mr.Into(&members), br.Into(&badges))
			if err != nil {
				t.Fatalf("%s page %d: %v", index, pages, err)
			}
			n, after = n+len(page.Items), page.Cursor
		}
		if n != 10 || pages != 4 || len(members) != 5 || len(badges) != 5 {
			t.Fatalf("%s: %d items in %d pages: members %+v, badges %+v", index, n, pages, members, badges)
		}
		role, level := "pilot", "gold" // the keys give the rest back; note is not projected
		if index == "ByTeamKeys" {
			role, level = "", ""
		}
		for i := range 5 {
			if members[i] != (CrewMember{Name: fmt.Sprint("m", i), Team: "red", Role: role}) || badges[i] != (CrewBadge{Serial: fmt.Sprint("b", i), Team: "red", Level: level}) {
				t.Errorf("%s item %d: %+v, %+v", index, i, members[i], badges[i])
			}
		}
	}
	fields := func(o *singletable.ReadOptions) { o.Fields = []string{"Role", "Level"} }
	in, err := mr.IndexCollection("ByTeam", CrewMember{Team: "red"}, fields).Request(mr.Member(), br.Member())
	if err != nil || in.ProjectionExpression == nil || in.FilterExpression != nil || slices.Contains(mapValues(in.ExpressionAttributeNames), "EntityType") {
		t.Errorf("Fields request: %+v, %v; want a projection without the entity type, no filter", in, err)
	}
	got, err := mr.IndexCollection("ByTeam", CrewMember{Team: "red"}, fields).Collect(ctx, mr.Member(), br.Member())
	if err != nil || len(got) != 10 || got[9] != (CrewMember{Name: "m4", Team: "red", Role: "pilot"}) {
		t.Errorf("Fields: %+v, %v", got, err)
	}

	// A visitor in the partition: no target takes it, or SkipUnknown.
	if _, err := vr.Create(ctx, CrewVisitor{Name: "v", Team: "red"}); err != nil {
		t.Fatal(err)
	}
	coll := mr.IndexCollection("ByTeamKeys", CrewMember{Team: "red"})
	var ute *singletable.UnknownTypeError
	if _, err := coll.Collect(ctx, mr.Member(), br.Member()); !errors.As(err, &ute) {
		t.Errorf("a visitor without a target: %v, want an *UnknownTypeError", err)
	}
	if got, err := coll.SkipUnknown().Collect(ctx, mr.Member(), br.Member()); err != nil || len(got) != 10 {
		t.Errorf("SkipUnknown: %d items, %v", len(got), err)
	}
	if got, err := coll.Collect(ctx, mr.Member(), br.Member(), vr.Member()); err != nil || len(got) != 11 {
		t.Errorf("with a visitor target: %d items, %v", len(got), err)
	}

	before := c.requests.Load()
	note := expression.Name("note").Equal(expression.Value("n"))
	if _, err := mr.IndexCollection("ByTeam", CrewMember{Team: "red"}).Filter(note).Collect(ctx, mr.Member(), br.Member()); !errors.As(err, new(*singletable.ValidationError)) {
		t.Errorf("Filter on an attribute ByTeam lacks: %v, want a *ValidationError", err)
	}
	if _, err := mr.IndexCollection("ByTeam", CrewMember{Team: "red"}, func(o *singletable.ReadOptions) { o.Fields = []string{"Note"} }).
		Collect(ctx, mr.Member()); !errors.As(err, new(*singletable.ValidationError)) {
		t.Errorf("Fields an attribute ByTeam lacks: %v, want a *ValidationError", err)
	}
	if n := c.requests.Load() - before; n != 0 {
		t.Errorf("%d requests sent for refused collections", n)
	}
	pilots := expression.Name("role").Equal(expression.Value("pilot"))
	if got, err := mr.IndexCollection("ByTeam", CrewMember{Team: "red"}).Filter(pilots).Collect(ctx, mr.Member(), br.Member()); err != nil || len(got) != 5 {
		t.Errorf("Filter on role, which ByTeam holds: %d items, %v", len(got), err)
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// Widgets and gears share partitions; TYP is keyed on the entity type
// attribute (every widget, in SK order), ByType on the table's PK and
// the entity type (a partition's widgets).
type Widget struct {
	Shop string `dynamodbav:"shop"`
	ID   string `dynamodbav:"id"`
	Size int    `dynamodbav:"size"`
}

type Gear struct {
	Shop string `dynamodbav:"shop"`
	ID   string `dynamodbav:"id"`
}

func widgetSchema(matchKeys bool) singletable.Schema[Widget] {
	return singletable.Schema[Widget]{Type: "Widget", PK: "S#{Shop}", SK: "W#{ID}", MatchKeys: matchKeys,
		Indexes: []singletable.IndexSchema[Widget]{
			{Name: "TYP", PK: "Widget", PKAttr: "EntityType", SK: "W#{ID}", SKAttr: "SK"},
			{Name: "ByType", PK: "S#{Shop}", PKAttr: "PK", SK: "Widget", SKAttr: "EntityType"},
		}}
}

var gears = singletable.MustDefine(singletable.Schema[Gear]{Type: "Gear", PK: "S#{Shop}", SK: "G#{ID}",
	Indexes: []singletable.IndexSchema[Gear]{
		{Name: "TYP", PK: "Gear", PKAttr: "EntityType", SK: "G#{ID}", SKAttr: "SK"},
		{Name: "ByType", PK: "S#{Shop}", PKAttr: "PK", SK: "Gear", SKAttr: "EntityType"},
	}})

// TestQueryIndexKeyedOnEntityType: a query of an index whose partition
// (TYP) or sort (ByType) key attribute is the entity type sends no filter
// on it (DynamoDB refuses a filter naming a key attribute: "Filter
// Expression can only contain non-primary key attributes"), the key
// condition pinning it to the entity's name; it finds exactly the
// entity's items, with and without MatchKeys, with a caller's filter,
// paged and counted.
func TestQueryIndexKeyedOnEntityType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, matchKeys := range []bool{false, true} {
		var wr *singletable.Repo[Widget]
		var gr *singletable.Repo[Gear]
		newTable(t, func(tbl *singletable.Table) {
			wr, gr = singletable.MustBind(tbl, singletable.MustDefine(widgetSchema(matchKeys))), singletable.MustBind(tbl, gears)
		})
		for i := range 7 {
			if _, err := wr.Create(ctx, Widget{Shop: fmt.Sprint("s", i%2), ID: fmt.Sprint(i), Size: i}); err != nil {
				t.Fatal(err)
			}
			if _, err := gr.Create(ctx, Gear{Shop: fmt.Sprint("s", i%2), ID: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		where := fmt.Sprintf("MatchKeys %v", matchKeys)
		for _, q := range []*singletable.Query[Widget]{wr.QueryIndex("TYP", Widget{}), wr.QueryIndex("ByType", Widget{Shop: "s0"})} {
			if in, err := q.Request(); err != nil || in.FilterExpression != nil {
				t.Errorf("%s: request %+v, %v: want no filter", where, in, err)
			}
		}
		got, skipped := pageAll(t, func(after string) (singletable.Page[Widget], error) {
			return wr.QueryIndex("TYP", Widget{}).Limit(3).After(after).Page(ctx)
		})
		if len(got) != 7 || len(skipped) > 0 {
			t.Fatalf("%s: TYP: %+v, skipped %v", where, got, skipped)
		}
		for i, w := range got {
			if w != (Widget{Shop: fmt.Sprint("s", i%2), ID: fmt.Sprint(i), Size: i}) {
				t.Errorf("%s: TYP item %d: %+v", where, i, w)
			}
		}
		big := expression.Name("size").GreaterThanEqual(expression.Value(4))
		if ws, err := wr.QueryIndex("TYP", Widget{}).Filter(big).Collect(ctx); err != nil || len(ws) != 3 {
			t.Errorf("%s: TYP with a filter: %+v, %v", where, ws, err)
		}
		if ws, err := wr.QueryIndex("TYP", Widget{}).Where("ID", singletable.Ge, "5").Collect(ctx); err != nil || len(ws) != 2 {
			t.Errorf("%s: TYP from ID 5: %+v, %v", where, ws, err)
		}
		if n, err := wr.QueryIndex("TYP", Widget{}).Count(ctx); n != 7 || err != nil {
			t.Errorf("%s: TYP Count = %d, %v", where, n, err)
		}
		ws, err := wr.QueryIndex("ByType", Widget{Shop: "s0"}).Collect(ctx)
		if err != nil || len(ws) != 4 || slices.ContainsFunc(ws, func(w Widget) bool { return w.Shop != "s0" }) {
			t.Errorf("%s: ByType s0: %+v, %v", where, ws, err)
		}
		if gs, err := gr.QueryIndex("TYP", Gear{}).Collect(ctx); err != nil || len(gs) != 7 {
			t.Errorf("%s: gears of TYP: %d, %v", where, len(gs), err)
		}
	}
}

// Parcel's Owner is its own attribute and ByOwner's partition key, with
// a constrained raw template: the stored value is the key.
type Parcel struct {
	ID    string `dynamodbav:"id"`
	Owner string `dynamodbav:"Owner,omitempty"`
	Note  string `dynamodbav:"note"`
}

var parcels = singletable.MustDefine(singletable.Schema[Parcel]{Type: "Parcel", PK: "P#{ID}", SK: "P",
	Indexes: []singletable.IndexSchema[Parcel]{{Name: "ByOwner", PK: "{Owner:raw=[a-z]+}", PKAttr: "Owner", SK: "P#{ID}"}}})

// TestOwnIndexKeyRawConstraint: an index keyed on a field's own
// attribute takes a constrained raw template ({Owner:raw=[a-z]+}, refused
// before as not exactly {Owner:raw}). The field is stored as the key; a
// Put, Create or Update storing a value the constraint refuses, and a
// query rendering one, is a *KeyError before the network that does not
// quote the value; an empty Owner keeps the item out of the index.
func TestOwnIndexKeyRawConstraint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var pr *singletable.Repo[Parcel]
	tbl, c := newTable(t, func(tbl *singletable.Table) { pr = singletable.MustBind(tbl, parcels) })
	if err := tbl.Check(ctx); err != nil {
		t.Fatal(err)
	}
	for i, owner := range []string{"ann", "ann", "bob", ""} {
		if _, err := pr.Create(ctx, Parcel{ID: fmt.Sprint(i), Owner: owner, Note: "n"}); err != nil {
			t.Fatal(err)
		}
	}
	if raw := rawGet(t, tbl, "P#0", "P"); !avEq(raw["Owner"], sAV("ann")) {
		t.Errorf("stored Owner %#v", raw["Owner"])
	}
	if _, ok := rawGet(t, tbl, "P#3", "P")["Owner"]; ok {
		t.Error("an empty Owner is stored")
	}
	got, err := pr.QueryIndex("ByOwner", Parcel{Owner: "ann"}).Collect(ctx)
	if err != nil || len(got) != 2 || got[0] != (Parcel{ID: "0", Owner: "ann", Note: "n"}) {
		t.Errorf("ann's parcels: %+v, %v", got, err)
	}
	before := c.requests.Load()
	const bad = "Ann#Forged"
	for name, run := range map[string]func() error{
		"Create": func() error { _, err := pr.Create(ctx, Parcel{ID: "9", Owner: bad}); return err },
		"Put":    func() error { _, err := pr.Put(ctx, Parcel{ID: "0", Owner: bad}); return err },
		"Update": func() error { _, err := pr.Update(Parcel{ID: "0"}).Set("Owner", bad).Run(ctx); return err },
		"Query":  func() error { _, err := pr.QueryIndex("ByOwner", Parcel{Owner: bad}).Collect(ctx); return err },
	} {
		err := run()
		var ke *singletable.KeyError
		if !errors.As(err, &ke) || !strings.Contains(err.Error(), "constraint") || strings.Contains(err.Error(), bad) {
			t.Errorf("%s with Owner %q: %v, want a *KeyError naming the constraint, not the value", name, bad, err)
		}
	}
	if n := c.requests.Load() - before; n != 0 {
		t.Errorf("%d requests sent for refused writes and queries", n)
	}
	if _, err := pr.Update(Parcel{ID: "3"}).Set("Owner", "cy").Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := pr.QueryIndex("ByOwner", Parcel{Owner: "cy"}).Collect(ctx); err != nil || len(got) != 1 || got[0].ID != "3" {
		t.Errorf("cy's parcels after the update: %+v, %v", got, err)
	}
	// The constraint is the declaration's: another template is refused.
	_, err = singletable.Define(singletable.Schema[Parcel]{Type: "Parcel", PK: "P#{ID}", SK: "P",
		Indexes: []singletable.IndexSchema[Parcel]{{Name: "ByOwner", PK: "O#{Owner:raw=[a-z]+}", PKAttr: "Owner"}}})
	if !errors.As(err, new(*singletable.ValidationError)) || !strings.Contains(err.Error(), "must be {Owner:raw}") {
		t.Errorf("a literal before the constrained placeholder: %v", err)
	}
}

// A meter's readings as another service in New York keys them: the
// reading time zone-less in the sort key (local wall clock), and in
// GSI1 as Python's isoformat() of a naive local time, both held only in
// the keys; the day as a bare date key.
type MeterReading struct {
	Meter string    `dynamodbav:"meter"`
	At    time.Time `dynamodbav:"-"`
	Day   time.Time `dynamodbav:"day,date"`
	KWh   int       `dynamodbav:"kwh"`
}

func meterReadings(loc *time.Location) *singletable.Entity[MeterReading] {
	return singletable.MustDefine(singletable.Schema[MeterReading]{Type: "Reading", PK: "METER#{Meter}", SK: "AT#{At:2006-01-02T15:04:05}",
		KeyOnly: []string{"At"}, Location: loc,
		Indexes: []singletable.IndexSchema[MeterReading]{
			{Name: "GSI1", PK: "READINGS", SK: "{At:isoformat}#{Meter}"},
			{Name: "GSI2", PK: "DAY#{Day:date}", SK: "METER#{Meter}"},
		}})
}

// TestZonelessKeysInLocation: with Schema.Location, zone-less key times
// are the wall clock there, as the New York service writes them: its
// items are read back at the right instants, from both keys holding the
// time (a key read in UTC would hold another instant than the other
// key); the library's writes store the local wall clock in winter and in
// summer; ranges given in UTC find them; a date key holds midnight
// there; and a time whose wall clock the autumn clock change repeats is
// refused before the network rather than keyed as its twin.
func TestZonelessKeysInLocation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	var rr *singletable.Repo[MeterReading]
	tbl, c := newTable(t, func(tbl *singletable.Table) { rr = singletable.MustBind(tbl, meterReadings(ny)) })
	// The other service's reading at 09:00 New York time (14:00 UTC).
	rawPut(t, tbl, map[string]types.AttributeValue{"PK": sAV("METER#1"), "SK": sAV("AT#2024-01-10T09:00:00"), "EntityType": sAV("Reading"),
		"GSI1PK": sAV("READINGS"), "GSI1SK": sAV("2024-01-10T09:00:00#1"), "GSI2PK": sAV("DAY#2024-01-10"), "GSI2SK": sAV("METER#1"),
		"meter": sAV("1"), "day": sAV("2024-01-10"), "kwh": nAV("7")})
	theirs := time.Date(2024, 1, 10, 14, 0, 0, 0, time.UTC)
	got, err := rr.Get(ctx, MeterReading{Meter: "1", At: theirs})
	if err != nil || !got.At.Equal(theirs) || got.At.Location() != ny || got.KWh != 7 {
		t.Fatalf("Get of their reading at %v: %+v, %v", theirs, got, err)
	}
	if !got.Day.Equal(time.Date(2024, 1, 10, 0, 0, 0, 0, ny)) {
		t.Errorf("day %v, want midnight in New York", got.Day)
	}
	// The library's: winter (EST) and summer (EDT) wall clocks.
	winter, summer := time.Date(2024, 1, 10, 16, 30, 0, 0, time.UTC), time.Date(2024, 7, 10, 14, 4, 5, 0, time.UTC)
	for _, at := range []time.Time{winter, summer} {
		day := time.Date(at.In(ny).Year(), at.In(ny).Month(), at.In(ny).Day(), 0, 0, 0, 0, ny)
		if _, err := rr.Create(ctx, MeterReading{Meter: "1", At: at, Day: day, KWh: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for sk, gsi1 := range map[string]string{"AT#2024-01-10T11:30:00": "2024-01-10T16:30:00+00:00#1", "AT#2024-07-10T10:04:05": "2024-07-10T14:04:05+00:00#1"} {
		raw := rawGet(t, tbl, "METER#1", sk)
		if raw == nil || !avEq(raw["GSI1SK"], sAV(gsi1)) {
			t.Errorf("the library's reading %s: %v, want GSI1SK %s", sk, raw, gsi1)
		}
	}
	at := func(rs []MeterReading) []time.Time {
		var out []time.Time
		for _, r := range rs {
			out = append(out, r.At)
		}
		return out
	}
	rs, err := rr.Query(MeterReading{Meter: "1"}).Between("At", theirs, winter).Collect(ctx)
	if got := at(rs); err != nil || len(got) != 2 || !got[0].Equal(theirs) || !got[1].Equal(winter) {
		t.Errorf("between %v and %v (UTC): %v, %v", theirs, winter, got, err)
	}
	// GSI1 items hold At in two keys, which must agree: their naive
	// isoformat key is read in New York too.
	page, err := rr.QueryIndex("GSI1", MeterReading{}).Page(ctx)
	if got := at(page.Items); err != nil || len(page.Skipped) > 0 || len(got) != 3 || !got[0].Equal(theirs) || !got[1].Equal(winter) || !got[2].Equal(summer) {
		t.Errorf("GSI1: %v, skipped %v, %v", got, page.Skipped, err)
	}
	// Day's date tag cuts it to its date (in its own zone, as the
	// attribute stores it), midnight in New York.
	for _, day := range []time.Time{time.Date(2024, 1, 10, 0, 0, 0, 0, ny), time.Date(2024, 1, 10, 0, 0, 0, 0, time.UTC)} {
		in, err := rr.QueryIndex("GSI2", MeterReading{Day: day}).Request()
		if err != nil || !avEq(in.ExpressionAttributeValues[":v0"], sAV("DAY#2024-01-10")) {
			t.Errorf("GSI2 on %v: %v, %v", day, in, err)
		}
		if rs, err := rr.QueryIndex("GSI2", MeterReading{Day: day}).Collect(ctx); err != nil || len(rs) != 2 || !rs[0].Day.Equal(time.Date(2024, 1, 10, 0, 0, 0, 0, ny)) {
			t.Errorf("GSI2 on %v: %+v, %v", day, rs, err)
		}
	}
	// 2024-11-03 01:30 in New York is 05:30 and 06:30 UTC.
	refused := 0
	for _, at := range []time.Time{time.Date(2024, 11, 3, 5, 30, 0, 0, time.UTC), time.Date(2024, 11, 3, 6, 30, 0, 0, time.UTC)} {
		before := c.requests.Load()
		_, err := rr.Put(ctx, MeterReading{Meter: "2", At: at, Day: time.Date(2024, 11, 3, 0, 0, 0, 0, ny)})
		var ke *singletable.KeyError
		switch {
		case errors.As(err, &ke):
			refused++
			if n := c.requests.Load() - before; n != 0 || !strings.Contains(err.Error(), "America/New_York") {
				t.Errorf("Put at %v: %v after %d requests; want a refusal naming the location, before the network", at, err, n)
			}
		case err != nil:
			t.Errorf("Put at %v: %v", at, err)
		}
	}
	if refused != 1 {
		t.Errorf("the repeated 01:30: %d of its two instants refused, want 1", refused)
	}
}
