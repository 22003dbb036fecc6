#!/usr/bin/env bash
# instr.sh: instructions per call of the library and of hand-raw SDK code,
# counted by valgrind, which repeats to a fraction of a percent where CPU
# time on a shared machine swings by tens of percent.
#
#   ./instr.sh [benchmark ...]     (default: the *SDK benchmarks of ./request)
#
# Each benchmark runs a real *dynamodb.Client on a canned HTTP transport
# (bench/request/sdk_test.go), so everything but the network is counted.
# The count per call is (I(400 calls) - I(100 calls)) / 300, which removes
# start-up; GOMAXPROCS=1 keeps idle Ps from spinning (which valgrind would
# count), and GOGC=off leaves the collector out: its cost follows the bytes
# allocated, which `go test -benchmem` reports; memprofilerate=0 turns off
# the heap profiler's random sampling, which moved a row by up to 1.5%
# between runs of one binary. The median of REPS runs.
# With BENCH_SIGNED=1 every request is signed (SigV4, static credentials),
# as against DynamoDB; without it the clients send them unsigned.
set -euo pipefail
cd "$(dirname "$0")"
command -v valgrind >/dev/null || { echo "instr.sh needs valgrind (apt-get install valgrind)" >&2; exit 1; }
REPS=${REPS:-3}
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
CGO_ENABLED=0 go test -c -o "$bin" ./request

count() { # benchmark impl calls
	GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1,memprofilerate=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		"$bin" -test.run '^$' -test.bench "^Benchmark$1/impl=$2\$" -test.benchtime "$3x" 2>&1 |
		sed -n 's/.*Collected : //p'
}
perCall() { # benchmark impl → median instructions per call
	local vals=()
	for _ in $(seq "$REPS"); do
		local a c
		a=$(count "$1" "$2" 100)
		c=$(count "$1" "$2" 400)
		vals+=($(((c - a) / 300)))
	done
	printf '%s\n' "${vals[@]}" | sort -n | sed -n "$(((REPS + 1) / 2))p"
}

[ -n "${BENCH_SIGNED:-}" ] && echo "Requests signed (SigV4, static credentials)." && echo
echo "| benchmark | library | hand-raw | library / hand-raw |"
echo "|---|---:|---:|---:|"
for b in "${@:-PutSDK GetSDK Query20SDK BatchWrite25SDK}"; do
	for bb in $b; do
		lib=$(perCall "$bb" library)
		raw=$(perCall "$bb" hand-raw)
		awk -v b="$bb" -v l="$lib" -v r="$raw" 'BEGIN { printf "| %s | %d | %d | %.3f |\n", b, l, r, l / r }'
	done
done
