package backoff

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func seeded() func() float64 { return rand.New(rand.NewPCG(1, 2)).Float64 }

func TestDefault(t *testing.T) {
	want := Policy{Base: 25 * time.Millisecond, Max: 2 * time.Second, Attempts: 10}
	if Default != want {
		t.Errorf("Default = %+v, want %+v", Default, want)
	}
}

func TestCeiling(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		p       Policy
		attempt int
		want    time.Duration
	}{
		{Default, 0, 25 * ms},
		{Default, 1, 50 * ms},
		{Default, 2, 100 * ms},
		{Default, 6, 1600 * ms},
		{Default, 7, 2000 * ms},
		{Default, 8, 2000 * ms},
		{Default, 62, 2000 * ms},
		{Default, 63, 2000 * ms},
		{Default, 1 << 40, 2000 * ms},
		{Default, -1, 25 * ms},
		{Policy{Base: ms}, 10, 1024 * ms},      // no cap
		{Policy{Base: ms}, 200, math.MaxInt64}, // no cap, no overflow
		{Policy{Base: 3 * time.Second, Max: time.Second}, 0, time.Second}, // Base over Max
		{Policy{Base: 0, Max: time.Second}, 5, 0},
		{Policy{Base: -ms, Max: time.Second}, 5, 0},
		{Policy{Base: 1, Max: math.MaxInt64}, 62, 1 << 62},
		{Policy{Base: 1, Max: math.MaxInt64}, 63, math.MaxInt64},
		{Policy{Base: 3, Max: math.MaxInt64}, 62, math.MaxInt64}, // 3<<62 overflows
		{Policy{Base: 3, Max: math.MaxInt64}, 61, 3 << 61},
	}
	for _, tt := range tests {
		if got := tt.p.Ceiling(tt.attempt); got != tt.want {
			t.Errorf("%+v.Ceiling(%d) = %v, want %v", tt.p, tt.attempt, got, tt.want)
		}
	}
}

func TestDelayDeterministic(t *testing.T) {
	a, b := seeded(), seeded()
	for attempt := 0; attempt < 20; attempt++ {
		da, db := Default.Delay(attempt, a), Default.Delay(attempt, b)
		if da != db {
			t.Fatalf("attempt %d: same seed gave %v and %v", attempt, da, db)
		}
		if c := Default.Ceiling(attempt); da < 0 || da >= c {
			t.Errorf("attempt %d: delay %v outside [0, %v)", attempt, da, c)
		}
	}
	// Pin the sequence, so that a change of formula is seen.
	r := seeded()
	var got []time.Duration
	for attempt := 0; attempt < 4; attempt++ {
		got = append(got, Default.Delay(attempt, r))
	}
	r = seeded()
	for attempt, d := range got {
		if want := time.Duration(r() * float64(Default.Ceiling(attempt))); d != want {
			t.Errorf("attempt %d: %v, want %v", attempt, d, want)
		}
	}
}

func TestDelayFullJitter(t *testing.T) {
	// Uniform on [0, c): mean c/2, and both halves hit.
	r := seeded()
	const n = 20000
	c := Default.Ceiling(3)
	var sum float64
	low, high := 0, 0
	for i := 0; i < n; i++ {
		d := Default.Delay(3, r)
		sum += float64(d)
		if d < c/2 {
			low++
		} else {
			high++
		}
	}
	if mean := sum / n / float64(c); mean < 0.48 || mean > 0.52 {
		t.Errorf("mean delay is %.3f of the ceiling, want about 0.5", mean)
	}
	if low < n*45/100 || high < n*45/100 {
		t.Errorf("halves: %d below, %d above", low, high)
	}
}

func TestDelayRndEdges(t *testing.T) {
	c := Default.Ceiling(2)
	tests := []struct {
		name string
		f    float64
		want time.Duration
	}{
		{"zero", 0, 0},
		{"half", 0.5, c / 2},
		{"negative", -0.5, 0},
		{"NaN", math.NaN(), 0},
		{"one", 1, c - 1},
		{"above one", 1.5, c - 1},
		{"+Inf", math.Inf(1), c - 1},
	}
	for _, tt := range tests {
		if got := Default.Delay(2, func() float64 { return tt.f }); got != tt.want {
			t.Errorf("%s: Delay = %v, want %v", tt.name, got, tt.want)
		}
	}
	// Never reaches a huge ceiling through float rounding.
	huge := Policy{Base: 1, Max: math.MaxInt64}
	if d := huge.Delay(100, func() float64 { return math.Nextafter(1, 0) }); d < 0 {
		t.Errorf("huge ceiling: %v", d)
	}
	// nil means the global source.
	for i := 0; i < 100; i++ {
		if d := Default.Delay(1, nil); d < 0 || d >= Default.Ceiling(1) {
			t.Fatalf("nil rnd: %v", d)
		}
	}
	// No delay at all without a Base; rnd is not called.
	if d := (Policy{}).Delay(3, func() float64 { panic("called") }); d != 0 {
		t.Errorf("zero policy: %v", d)
	}
}

func TestSleep(t *testing.T) {
	if err := sleep(context.Background(), 0); err != nil {
		t.Errorf("sleep(0) = %v", err)
	}
	if err := sleep(context.Background(), -time.Second); err != nil {
		t.Errorf("sleep(-1s) = %v", err)
	}
	start := time.Now()
	if err := sleep(context.Background(), 5*time.Millisecond); err != nil {
		t.Errorf("sleep(5ms) = %v", err)
	}
	if el := time.Since(start); el < 5*time.Millisecond {
		t.Errorf("sleep(5ms) returned after %v", el)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled, sleep(0) = %v", err)
	}
	start = time.Now()
	if err := sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled, sleep(1h) = %v", err)
	}

	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline, sleep(1h) = %v", err)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("sleep did not stop at cancellation: %v", el)
	}
}

var fast = Policy{Base: time.Microsecond, Max: 10 * time.Microsecond, Attempts: 5}

func TestDoRetriesUntilSuccess(t *testing.T) {
	tries := 0
	err := fast.Do(context.Background(), seeded(), nil, func(context.Context) error {
		tries++
		if tries < 3 {
			return throttled()
		}
		return nil
	})
	if err != nil || tries != 3 {
		t.Errorf("err = %v after %d tries, want nil after 3", err, tries)
	}
}

func TestDoStopsOnFinalError(t *testing.T) {
	final := errors.New("bad request")
	tries := 0
	err := fast.Do(context.Background(), seeded(), nil, func(context.Context) error {
		tries++
		return final
	})
	if err != final || tries != 1 {
		t.Errorf("err = %v after %d tries, want %v after 1", err, tries, final)
	}
}

func TestDoGivesUp(t *testing.T) {
	tries := 0
	err := fast.Do(context.Background(), seeded(), IsRetryable, func(context.Context) error {
		tries++
		return throttled()
	})
	if !IsThrottle(err) || tries != fast.Attempts {
		t.Errorf("err = %v after %d tries, want a throttle after %d", err, tries, fast.Attempts)
	}
	for _, attempts := range []int{0, -3, 1} {
		tries = 0
		p := fast
		p.Attempts = attempts
		_ = p.Do(context.Background(), seeded(), nil, func(context.Context) error {
			tries++
			return throttled()
		})
		if tries != 1 {
			t.Errorf("Attempts %d: %d tries, want 1", attempts, tries)
		}
	}
}

func TestDoCustomClassifier(t *testing.T) {
	tries := 0
	err := fast.Do(context.Background(), seeded(), IsRetryableTx, func(context.Context) error {
		tries++
		if tries == 1 {
			return txConflict()
		}
		return nil
	})
	if err != nil || tries != 2 {
		t.Errorf("IsRetryableTx: err = %v after %d tries", err, tries)
	}
	tries = 0
	err = fast.Do(context.Background(), seeded(), IsRetryable, func(context.Context) error {
		tries++
		return txConflict()
	})
	if err == nil || tries != 1 {
		t.Errorf("IsRetryable retried a conflict: err = %v after %d tries", err, tries)
	}
}

func TestDoCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	slow := Policy{Base: time.Hour, Max: time.Hour, Attempts: 3}
	tries := 0
	err := slow.Do(ctx, func() float64 { return 0.5 }, nil, func(context.Context) error {
		tries++
		cancel()
		return throttled()
	})
	if !errors.Is(err, context.Canceled) || tries != 1 {
		t.Fatalf("err = %v after %d tries, want context.Canceled after 1", err, tries)
	}
	if IsRetryable(err) {
		t.Errorf("the cancellation error is classified as retryable: %v", err)
	}
}

func TestDoCancelledReturnsInterruptedError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tries := 0
	err := fast.Do(ctx, seeded(), nil, func(context.Context) error {
		tries++
		return throttled()
	})
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Tries != 1 || !IsThrottle(ie.Last) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %#v after %d tries, want an *InterruptedError after 1", err, tries)
	}
	if want := "context canceled (after 1 tries; last error: "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("text %q", err.Error())
	}
}

// Again retries partial progress whatever the classifier says, shares the
// tries with retried errors, and hands back its cause when they run out.
func TestDoAgain(t *testing.T) {
	never := func(error) bool { return false }
	left := 3
	tries := 0
	err := fast.Do(context.Background(), seeded(), never, func(context.Context) error {
		tries++
		if left--; left > 0 {
			return Again(nil)
		}
		return nil
	})
	if err != nil || tries != 3 {
		t.Fatalf("err = %v after %d tries, want nil after 3", err, tries)
	}

	tries = 0
	err = fast.Do(context.Background(), seeded(), never, func(context.Context) error {
		tries++
		return Again(nil)
	})
	if err != ErrWorkLeft || tries != fast.Attempts {
		t.Fatalf("err = %v after %d tries, want ErrWorkLeft after %d", err, tries, fast.Attempts)
	}

	stale := errors.New("item changed")
	tries = 0
	err = fast.Do(context.Background(), seeded(), IsRetryable, func(context.Context) error {
		tries++
		if tries%2 == 0 {
			return throttled()
		}
		return Again(stale)
	})
	if err != stale || tries != fast.Attempts {
		t.Fatalf("err = %v after %d tries, want the cause after %d", err, tries, fast.Attempts)
	}

	// A wrapped Again is an ordinary error.
	tries = 0
	err = fast.Do(context.Background(), seeded(), never, func(context.Context) error {
		tries++
		return fmt.Errorf("op: %w", Again(stale))
	})
	if tries != 1 || err == nil {
		t.Fatalf("wrapped Again: err = %v after %d tries", err, tries)
	}

	// Work left when ctx ends is an interruption, not the cause.
	ctx, cancel := context.WithCancel(context.Background())
	err = fast.Do(ctx, seeded(), never, func(context.Context) error {
		cancel()
		return Again(stale)
	})
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Last != stale || errors.Is(err, stale) {
		t.Fatalf("cancelled with work left: %v", err)
	}
}

func TestWith(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		base, max time.Duration
		attempts  int
		want      Policy
	}{
		{0, 0, 0, Default},
		{5 * ms, 0, 0, Policy{Base: 5 * ms, Max: Default.Max, Attempts: Default.Attempts}},
		{-1, 0, 0, Policy{Base: 0, Max: Default.Max, Attempts: Default.Attempts}},
		{0, time.Second, 3, Policy{Base: Default.Base, Max: time.Second, Attempts: 3}},
		{0, -1, -1, Default},
	}
	for _, c := range cases {
		if got := Default.With(c.base, c.max, c.attempts); got != c.want {
			t.Errorf("With(%v, %v, %d) = %+v, want %+v", c.base, c.max, c.attempts, got, c.want)
		}
	}
}
