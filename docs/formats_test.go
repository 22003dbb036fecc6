package docs_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/singletable-go/singletable"
)

// The README's key formats section: the elections service's event log,
// as its Kotlin service writes it.

type Event struct {
	Seq int64     `dynamodbav:"sequence"`
	At  time.Time `dynamodbav:"timestamp"`
}

var Events = singletable.MustDefine(singletable.Schema[Event]{
	Type: "VoteEvent",
	PK:   "EVENTS",
	SK:   "{Seq:%08d}#{At:rfc3339}", // 00000042#2025-01-15T10:30:00Z
})

func Example_formats() {
	at := time.Date(2025, 1, 15, 10, 30, 0, 0, time.UTC)
	pk, sk, err := Events.RenderKeys(Event{Seq: 42, At: at})
	fmt.Println(pk, sk, err)
	ev, err := Events.ParseKeys("EVENTS", "00000043#2025-01-15T10:30:05Z")
	fmt.Println(ev.Seq, ev.At.Format(time.RFC3339), err)

	// A millisecond that rfc3339 would drop: refused, not cut.
	_, _, err = Events.RenderKeys(Event{Seq: 44, At: at.Add(time.Millisecond)})
	var ke *singletable.KeyError
	fmt.Println(errors.As(err, &ke))
	// Output:
	// EVENTS 00000042#2025-01-15T10:30:00Z <nil>
	// 43 2025-01-15T10:30:05Z <nil>
	// true
}
