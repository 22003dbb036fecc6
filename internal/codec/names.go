package codec

// nameTable finds a field by attribute name faster than a Go map: a
// collision-free hash over the names' length and three of their bytes,
// found when the plan is built, and one string comparison. With lower set
// the hash reads bytes ASCII-lowercased (for the case-insensitive lookup).
type nameTable struct {
	seed  uint32
	shift uint32
	lower bool
	slots []int16 // field index + 1; 0 is empty
	names []string
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func (t *nameTable) hash(s string) uint32 {
	n := len(s)
	if n == 0 {
		return 0
	}
	c0, c1, c2 := s[0], s[n/2], s[n-1]
	if t.lower {
		c0, c1, c2 = lowerASCII(c0), lowerASCII(c1), lowerASCII(c2)
	}
	h := uint32(n)<<24 ^ uint32(c0)<<16 ^ uint32(c1)<<8 ^ uint32(c2)
	return (h * t.seed) >> t.shift
}

// newNameTable builds a table for names (in which index i stands for field
// i; later duplicates are skipped), or returns nil if no seed tried works.
func newNameTable(names []string, lower bool) *nameTable {
	size := 16
	for size < 4*len(names) {
		size *= 2
	}
	bits := uint32(0)
	for 1<<bits < size {
		bits++
	}
	seeds := []uint32{0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1, 0xD3A2646C, 0xFD7046C5, 0xB55A4F09}
	for attempt := 0; attempt < 4; attempt++ {
		for _, seed := range seeds {
			t := &nameTable{seed: seed, shift: 32 - bits, lower: lower, slots: make([]int16, size), names: names}
			ok := true
			for i, name := range names {
				key := name
				if lower {
					key = lowerString(name)
				}
				h := t.hash(key)
				if j := t.slots[h]; j != 0 {
					prev := names[j-1]
					if lower {
						prev = lowerString(prev)
					}
					if prev == key {
						continue // the first of equal names wins
					}
					ok = false
					break
				}
				t.slots[h] = int16(i + 1)
			}
			if ok {
				return t
			}
		}
		size *= 2
		bits++
	}
	return nil
}

func lowerString(s string) string {
	b := []byte(s)
	for i := range b {
		b[i] = lowerASCII(b[i])
	}
	return string(b)
}

// find returns the index of the field named exactly s.
func (t *nameTable) find(s string) (int, bool) {
	j := t.slots[t.hash(s)]
	if j == 0 || t.names[j-1] != s {
		return 0, false
	}
	return int(j - 1), true
}

// findFold returns the first field whose name equals s ignoring ASCII case
// (both are ASCII when the table is used).
func (t *nameTable) findFold(s string) (int, bool) {
	j := t.slots[t.hash(s)]
	if j == 0 {
		return 0, false
	}
	name := t.names[j-1]
	if len(name) != len(s) {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if lowerASCII(name[i]) != lowerASCII(s[i]) {
			return 0, false
		}
	}
	return int(j - 1), true
}
