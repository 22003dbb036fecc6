package itemsize

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type item = map[string]types.AttributeValue

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func l(v ...types.AttributeValue) types.AttributeValue {
	return &types.AttributeValueMemberL{Value: v}
}
func m(v item) types.AttributeValue { return &types.AttributeValueMemberM{Value: v} }

var (
	boolean = &types.AttributeValueMemberBOOL{Value: true}
	null    = &types.AttributeValueMemberNULL{Value: true}
)

// The expected sizes below are those DynamoDB Local 3.3.1 reported (item
// {"a": value} measured as part of a larger item; see the package doc).
func TestOfTypes(t *testing.T) {
	tests := []struct {
		name string
		v    types.AttributeValue
		want int // size of {"a": v}
	}{
		{"S empty", s(""), 1},
		{"S ascii", s("abc"), 4},
		{"S 2-byte rune", s("é"), 3},
		{"S 4-byte rune", s("😀"), 5},
		{"S invalid UTF-8 counts as U+FFFD", s("a\xffb"), 6},
		{"B", &types.AttributeValueMemberB{Value: []byte{1, 2, 3, 4, 5}}, 6},
		{"B empty", &types.AttributeValueMemberB{Value: []byte{}}, 1},
		{"BOOL true", boolean, 2},
		{"BOOL false", &types.AttributeValueMemberBOOL{}, 2},
		{"NULL", null, 2},
		{"SS", &types.AttributeValueMemberSS{Value: []string{"a", "bb", "ccc"}}, 7},
		{"NS", &types.AttributeValueMemberNS{Value: []string{"1", "22", "333"}}, 8},
		{"BS", &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}}, 4},
		{"L empty", l(), 4},
		{"L one", l(s("a")), 6},
		{"L mixed", l(s("a"), s("bb"), n("1")), 12},
		{"M empty", m(item{}), 4},
		{"M one", m(item{"x": s("a")}), 7},
		{"M unicode key", m(item{"xyz": s("abc"), "é": &types.AttributeValueMemberBOOL{}}), 15},
		{"M>M>L>M", m(item{"m": m(item{"l": l(m(item{}))})}), 18},
		{"L>L>L", l(l(l())), 12},
		{"nil value", nil, 1},
		{"unknown member", &types.UnknownUnionMember{Tag: "X"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(item{"a": tt.v}); got != tt.want {
				t.Errorf("Of = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestOfNames(t *testing.T) {
	tests := []struct {
		name string
		item item
		want int
	}{
		{"empty item", item{}, 0},
		{"nil item", nil, 0},
		{"unicode name", item{"ñame😀": s("v")}, 9 + 1},
		{"CJK name and value", item{"名前": s("日本語")}, 6 + 9},
		{"several", item{"pk": s("USER#1"), "sk": s("PROFILE"), "age": n("42"), "ok": boolean}, 8 + 9 + 5 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Of(tt.item); got != tt.want {
				t.Errorf("Of = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestNumberSize(t *testing.T) {
	// All measured on DynamoDB Local.
	tests := []struct {
		n    string
		want int
	}{
		{"0", 1}, {"-0", 1}, {"-0.000", 1}, {"0e5", 1},
		{"1", 2}, {"9", 2}, {"10", 2}, {"11", 2}, {"99", 2}, {"100", 2},
		{"101", 3}, {"123", 3}, {"1234", 3}, {"12345", 4}, {"123456", 4},
		{"1.1", 3}, {"0.1", 2}, {"0.01", 2}, {"0.001", 2}, {"1.5", 3},
		{"12.5", 3}, {"1.25", 3}, {"1.0", 2}, {"1.000", 2}, {"0010", 2},
		{"00.0100", 2}, {"100000", 2}, {"1000000", 2}, {"10000000000", 2},
		{"12000", 3}, {"120000", 2}, {"0.12", 2}, {"0.012", 3}, {"0.0012", 2},
		{"-1", 3}, {"-12", 3}, {"-123", 4}, {"-0.1", 3}, {"-1.1", 4},
		{"+5", 2}, {".5", 2}, {"5.", 2}, {"0.5e1", 2}, {"5e0", 2},
		{"1e3", 2}, {"1E-3", 2}, {"1e+2", 2}, {"1e10", 2}, {"1e11", 2},
		{"1.23E+2", 3}, {"12.34e-3", 4}, {"123.456e7", 4}, {"10.01", 3},
		{"1001", 3}, {"100.001", 5}, {"-99.99e-101", 5}, {"3.14159", 5},
		{"1e125", 2}, {"1e-129", 2}, {"2e-130", 2}, {"-1e-130", 3}, {"-7e125", 3},
		{"12345678901234567890123456789012345678", 20},
		{"1234567890123456789012345678901234567", 20},
		{"0.1234567890123456789012345678901234567", 20},
		{"-12345678901234567890123456789012345678", 21},
		{"9.9999999999999999999999999999999999999e125", 20},
		{"-9.9999999999999999999999999999999999999e125", 21},
		{"52630.00e-32", 4}, {"000002627.", 3}, {"-0729.815608e39", 7},
	}
	for _, tt := range tests {
		if got := numberSize(tt.n); got != tt.want {
			t.Errorf("numberSize(%q) = %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestNumberSizeNotANumber(t *testing.T) {
	for _, v := range []string{"", "-", "+", ".", "e5", "1e", "1e+", "1.2.3", "12a", "0x10", "NaN", "1e5.5", " 1"} {
		if got := numberSize(v); got != len(v)+1 {
			t.Errorf("numberSize(%q) = %d, want %d", v, got, len(v)+1)
		}
	}
	// An absurd exponent must not overflow, and keeps its parity.
	if got := numberSize("11e99999999999999999999999999"); got != 3 {
		t.Errorf("huge odd exponent: %d, want 3", got)
	}
	if got := numberSize("11e99999999999999999999999998"); got != 2 {
		t.Errorf("huge even exponent: %d, want 2", got)
	}
}

// The guide's approximation, 1 + ceil(significant digits / 2), is never
// more than numberSize.
func TestNumberSizeNotBelowGuide(t *testing.T) {
	for _, v := range []string{"1", "1.1", "-12", "0.012", "12000", "123456789", "-1.5e-7", "3.14159"} {
		digits := strings.Trim(strings.NewReplacer("-", "", ".", "").Replace(strings.SplitN(strings.ToLower(v), "e", 2)[0]), "0")
		guide := (len(digits)+1)/2 + 1
		if got := numberSize(v); got < guide {
			t.Errorf("numberSize(%q) = %d, below the guide's %d", v, got, guide)
		}
	}
}

func TestCheck(t *testing.T) {
	exact := item{"pk": s("k"), "pad": s(strings.Repeat("x", MaxItemBytes-6))}
	if got := Of(exact); got != MaxItemBytes {
		t.Fatalf("Of = %d, want %d", got, MaxItemBytes)
	}
	if err := Check(exact); err != nil {
		t.Errorf("Check at the limit: %v", err)
	}
	over := item{"pk": s("k"), "pad": s(strings.Repeat("x", MaxItemBytes-5))}
	err := Check(over)
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("Check over the limit: %v, want *TooLargeError", err)
	}
	if tl.Size != MaxItemBytes+1 || tl.Max != MaxItemBytes {
		t.Errorf("TooLargeError = %+v", *tl)
	}
	if want := "singletable: item is 409601 bytes, over DynamoDB's 400 KB limit"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

func bigNested() item {
	var v types.AttributeValue = m(item{})
	for d := 0; d < 20; d++ {
		elems := make([]types.AttributeValue, 0, 50)
		for j := 0; j < 50; j++ {
			elems = append(elems, m(item{"a": n("-12.5"), "b": boolean, "é": l(s("x"), null)}))
		}
		v = m(item{"next": v, "list": l(elems...)})
	}
	return item{
		"pk":  s("USER#1"),
		"doc": v,
		"ss":  &types.AttributeValueMemberSS{Value: []string{"a", "b\xff"}},
		"ns":  &types.AttributeValueMemberNS{Value: []string{"1", "2.5e3"}},
		"bs":  &types.AttributeValueMemberBS{Value: [][]byte{{1, 2}}},
		"b":   &types.AttributeValueMemberB{Value: []byte("bytes")},
	}
}

func TestOfDoesNotAllocate(t *testing.T) {
	it := bigNested()
	if a := testing.AllocsPerRun(100, func() { _ = Of(it) }); a != 0 {
		t.Errorf("Of allocates %v times per call", a)
	}
	small := item{"pk": s("k")}
	if a := testing.AllocsPerRun(100, func() { _ = Check(small) }); a != 0 {
		t.Errorf("Check allocates %v times per call under the limit", a)
	}
}

func BenchmarkOf(b *testing.B) {
	it := bigNested()
	b.ReportAllocs()
	for b.Loop() {
		_ = Of(it)
	}
}

func TestIsASCII(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"", true}, {"a", true}, {"abcdefg", true}, {"abcdefgh", true},
		{"abcdefghi", true}, {strings.Repeat("x", 100), true}, {"\x7f\x00", true},
		{"é", false}, {"abcdefg\x80", false}, {"\x80abcdefgh", false},
		{"abcdefghi\xff", false}, {strings.Repeat("x", 13) + "😀" + strings.Repeat("y", 9), false},
	} {
		if got := isASCII(tc.s); got != tc.want {
			t.Errorf("isASCII(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
	// Every position of a non-ASCII byte is seen, for every length.
	for n := 1; n < 40; n++ {
		for i := 0; i < n; i++ {
			b := []byte(strings.Repeat("a", n))
			b[i] = 0xC3
			if isASCII(string(b)) {
				t.Fatalf("isASCII missed byte %d of %d", i, n)
			}
		}
	}
}

func TestValue(t *testing.T) {
	for _, v := range []types.AttributeValue{s("abc"), s("a\xffb"), n("12.5"), l(s("x"), n("1")), m(item{"k": s("v")}), null} {
		if got, want := Value(v), Of(item{"": v}); got != want {
			t.Errorf("Value(%#v) = %d, want %d", v, got, want)
		}
	}
}

// typical is an entity item as the library writes it: short ASCII strings,
// a few numbers, a list and a map, keys and the entity type.
func typical() item {
	return item{
		"Username": s("user-00003"), "SkillName": s("golang"), "ProficiencyLevel": s("Expert"),
		"Email": s("user-00003@example.com"), "Bio": s("Writes Go services and DynamoDB single-table designs for a living."),
		"YearsOfExperience": n("10"), "Endorsements": n("1234570"), "Rank": n("45"), "Score": n("97.5"),
		"Verified": boolean, "LastUsedDate": s("2025-03-14T18:09:26.535897932Z"), "Created": s("2019-01-02T03:04:05Z"),
		"Tags": l(s("backend"), s("aws"), s("dynamodb")), "Attrs": m(item{"team": s("platform"), "site": s("remote")}),
		"Manager": s("manager-3"), "PK": s("USER#user-00003"), "SK": s("SKILL#golang"), "EntityType": s("Profile"),
		"GSI1PK": s("SKILL#golang"), "GSI1SK": s("LEVEL#Expert#USER#user-00003"),
	}
}

func BenchmarkScanTypical(b *testing.B) {
	it := typical()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = Scan(it)
	}
}

// TestScanNamesSmallestInvalid: with several attributes holding invalid
// UTF-8, Scan names the smallest, whatever the map's order; Attr summed
// over the attributes is Scan's size, and its verdicts are Scan's.
func TestScanNamesSmallestInvalid(t *testing.T) {
	it := item{
		"zz":       s("\xff"),
		"b":        l(m(item{"k\xc3": s("ok")})), // a bad map key
		"m":        &types.AttributeValueMemberSS{Value: []string{"ok", "a\x80"}},
		"ok":       s("fine"),
		"a":        n("12"),
		"\xffname": s("valid"),
		"é":        s("é\xed\xa0\x80"),
	}
	for i := 0; i < 50; i++ {
		size, bad := Scan(it)
		// "\xffname" > "b" byte-wise: the smallest is "b".
		if bad != "b" {
			t.Fatalf("Scan names %q, want %q", bad, "b")
		}
		sum := 0
		for k, v := range it {
			n, inv := Attr(k, v)
			sum += n
			if want := k != "ok" && k != "a"; inv != want {
				t.Errorf("Attr(%q) invalid = %v, want %v", k, inv, want)
			}
		}
		if sum != size {
			t.Fatalf("Attr sums to %d, Scan says %d", sum, size)
		}
	}
	delete(it, "b")
	if _, bad := Scan(it); bad != "m" {
		t.Errorf("Scan names %q, want %q", bad, "m")
	}
	if _, bad := Scan(item{"a": s("ok")}); bad != "" {
		t.Errorf("Scan of a valid item names %q", bad)
	}
}

func TestStringNumberValueChecked(t *testing.T) {
	for _, c := range []struct {
		s    string
		size int
		bad  bool
	}{{"", 0, false}, {"abc", 3, false}, {"é", 2, false}, {"a\xffb", 5, true}, {"\xed\xa0\x80", 9, true}} {
		if n, bad := String(c.s); n != c.size || bad != c.bad {
			t.Errorf("String(%q) = %d, %v; want %d, %v", c.s, n, bad, c.size, c.bad)
		}
		if n, bad := ValueChecked(s(c.s)); n != c.size || bad != c.bad {
			t.Errorf("ValueChecked(S %q) = %d, %v; want %d, %v", c.s, n, bad, c.size, c.bad)
		}
	}
	for _, x := range []string{"0", "-1", "1.1", "12345678901234567890123456789012345678", "1e400", "abc"} {
		if Number(x) != Value(n(x)) {
			t.Errorf("Number(%q) = %d, Value = %d", x, Number(x), Value(n(x)))
		}
	}
}
