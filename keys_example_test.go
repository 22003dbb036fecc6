package singletable_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/singletable-go/singletable"
)

// Key formats write the key strings another service already stores: here
// the elections service's event log, "EVENTS" / "00000042#2025-01-15T10:30:00Z",
// and its elections, "ELECTION#Favorite Language". A value the format
// cannot write exactly is a *KeyError, not a different key.
func ExampleEntity_RenderKeys() {
	type Event struct {
		Seq int64
		At  time.Time
	}
	events := singletable.MustDefine(singletable.Schema[Event]{
		Type: "VoteEvent", PK: "EVENTS", SK: "{Seq:%08d}#{At:rfc3339}",
	})
	type Election struct{ Name string }
	elections := singletable.MustDefine(singletable.Schema[Election]{
		Type: "Election", PK: "ELECTION#{Name:raw}", SK: "METADATA",
	})

	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	pk, sk, _ := events.RenderKeys(Event{Seq: 42, At: at})
	fmt.Println(pk, sk)
	back, _ := events.ParseKeys(pk, sk)
	fmt.Println(back.Seq, back.At.Format(time.RFC3339))
	pk, sk, _ = elections.RenderKeys(Election{Name: "Favorite Language"})
	fmt.Println(pk, sk)

	_, _, err := events.RenderKeys(Event{Seq: 42, At: at.Add(250 * time.Millisecond)})
	var ke *singletable.KeyError
	fmt.Println(errors.As(err, &ke))
	fmt.Println(err)
	// Output:
	// EVENTS 00000042#2025-01-15T10:30:00Z
	// 42 2025-01-15T10:30:00Z
	// ELECTION#Favorite Language METADATA
	// true
	// singletable: VoteEvent key SK: field At: value cannot be written in the key format: {At:rfc3339}: time has a fraction of a second the format cannot show (truncate it: t.Truncate(time.Second))
}
