package keys

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRangeBounds(t *testing.T) {
	if got := Predecessor("abc"); got != "abb" {
		t.Errorf("Predecessor(abc) = %q", got)
	}
	if got := Predecessor("a\ue000"); got != "a\ud7ff" {
		t.Errorf("Predecessor skips surrogates: %q", got)
	}
	if got := FormattedAbove("2024", ""); got != "2024\x00" {
		t.Errorf("FormattedAbove at the end = %q", got)
	}
	if got := FormattedAbove("2024", "#"); got != "2024#"+AboveAll {
		t.Errorf("FormattedAbove = %q", got)
	}
	if got := FormattedBelow("ab\x00"); got != "ab" {
		t.Errorf("FormattedBelow(NUL end) = %q", got)
	}
	if got := FormattedBelow("ab"); got != "aa"+AboveAll {
		t.Errorf("FormattedBelow = %q", got)
	}
	u := strings.Repeat("x", 1023) + "é"
	got := ClampBound(u, 1024)
	if len(got) > 1024 || !utf8.ValidString(got) || got > u || got != strings.Repeat("x", 1023)+"\x7f" {
		t.Errorf("ClampBound = %q", got[1020:])
	}
}
