package singletable

import (
	"testing"

	"github.com/singletable-go/singletable/internal/cursor"
)

// TestPartitionBindingInjective: a multi-attribute partition binds each
// value apart, so values that joined with NUL alike no longer collide;
// the legacy binding (which did collide) is kept for old cursors only.
func TestPartitionBindingInjective(t *testing.T) {
	a := partitionBinding("t", "GSI2", "E", []string{"Sx\x00Sy", "Sz"}, "asc")
	b := partitionBinding("t", "GSI2", "E", []string{"Sx", "Sy\x00Sz"}, "asc")
	if a.bind == b.bind {
		t.Fatal("(x\\x00Sy, z) and (x, y\\x00Sz) bind alike")
	}
	if !a.hasLegacy || a.legacy != b.legacy {
		t.Fatal("the legacy binding is the NUL-joined one")
	}
	one := partitionBinding("t", "", "E", []string{"USER#a"}, "asc")
	if one.hasLegacy || one.bind != cursor.Binding("t", "", "E", "USER#a", "asc") {
		t.Fatal("a single-attribute partition keeps its binding byte for byte")
	}
}
