package wiretest

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/singletable-go/singletable/ddbfault"
)

// Faults is a ddbfault.Transport that also spoils responses as they
// arrive, the faults a direct read of the body meets and ddbfault does
// not make:
//   - a truncated body: the first part of a 200 response's body, then
//     io.ErrUnexpectedEOF (a connection cut after the server answered;
//     the request was applied);
//   - a CRC32 mismatch: a 200 response whose X-Amz-Crc32 header is not
//     its body's (the body intact: the SDK's deserializer only logs a
//     mismatch, the direct path refuses the response, so neither reads
//     corrupt data).
//
// Every other response gets its body's true X-Amz-Crc32, so a client may
// check the checksum (DynamoDB Local's is not always right). It draws its
// faults at Rate of the data-plane requests while enabled (SetEnabled
// turns both it and the ddbfault.Transport on and off), from a source of
// its own: the ddbfault.Transport's draws stay as they were.
type Faults struct {
	*ddbfault.Transport
	Rate float64

	mu        sync.Mutex
	on        bool
	rng       *rand.Rand
	truncated int
	crc       int
}

// NewFaults returns ft with truncated bodies and CRC32 mismatches at
// rate, drawn from seed.
func NewFaults(ft *ddbfault.Transport, seed uint64, rate float64) *Faults {
	return &Faults{Transport: ft, Rate: rate, on: true, rng: rand.New(rand.NewPCG(seed^0x2545f4914f6cdd1d, seed))}
}

// SetEnabled turns injection on or off, ddbfault's and f's own.
func (f *Faults) SetEnabled(on bool) {
	f.Transport.SetEnabled(on)
	f.mu.Lock()
	f.on = on
	f.mu.Unlock()
}

// BodyStats returns the number of truncated bodies and of CRC32
// mismatches injected.
func (f *Faults) BodyStats() (truncated, crc int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.truncated, f.crc
}

// dataPlane reports whether target (X-Amz-Target) is a data-plane
// operation.
func dataPlane(target string) bool {
	_, op, _ := strings.Cut(target, ".")
	switch op {
	case "CreateTable", "DescribeTable", "DeleteTable", "UpdateTimeToLive", "DescribeTimeToLive", "ListTables", "UpdateTable":
		return false
	}
	return true
}

// RoundTrip sends req through the ddbfault.Transport and spoils the
// response as drawn.
func (f *Faults) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := f.Transport.RoundTrip(req)
	if err != nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	crc := crc32.ChecksumIEEE(body)
	kind := 0
	f.mu.Lock()
	if f.on && resp.StatusCode == 200 && len(body) > 1 && dataPlane(req.Header.Get("X-Amz-Target")) && f.rng.Float64() < f.Rate {
		kind = 1 + f.rng.IntN(2)
	}
	cut := f.rng.IntN(max(len(body)-1, 1)) // at least the last byte is missing
	switch kind {
	case 1:
		f.truncated++
	case 2:
		f.crc++
		crc ^= 1 << f.rng.IntN(32)
	}
	f.mu.Unlock()
	resp.Header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc), 10))
	resp.ContentLength = int64(len(body))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if kind == 1 {
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body[:cut]), failing{fmt.Errorf("injected: %w", io.ErrUnexpectedEOF)}))
	}
	return resp, nil
}
