package jsonvalue

// Strings are scanned eight bytes at a time (SWAR: SIMD within a
// register) while no byte in a word needs a closer look; that is most of
// the text in any long string.

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// load64 reads eight bytes of s at i, little-endian (one load on the
// architectures Go compiles this pattern for).
func load64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// hasByte reports whether any byte of w is b.
func hasByte(w uint64, b byte) bool {
	x := w ^ (lsb * uint64(b))
	return (x-lsb)&^x&msb != 0
}

// hasLess reports whether any byte of w is below n (n <= 128).
func hasLess(w uint64, n byte) bool { return (w-lsb*uint64(n))&^w&msb != 0 }

// stringSpan returns how far from i the bytes of s run that end no string
// and need no unescaping: everything but '"', '\\' and control
// characters, non-ASCII included.
func stringSpan(s string, i int) int {
	j := i
	for j+8 <= len(s) {
		w := load64(s, j)
		if hasByte(w, '"') || hasByte(w, '\\') || hasLess(w, 0x20) {
			break
		}
		j += 8
	}
	return j
}

// asciiSpan is stringSpan that also stops at non-ASCII bytes.
func asciiSpan(s string, i int) int {
	j := i
	for j+8 <= len(s) {
		w := load64(s, j)
		if w&msb != 0 || hasByte(w, '"') || hasByte(w, '\\') || hasLess(w, 0x20) {
			break
		}
		j += 8
	}
	return j
}

// safeSpan returns how far from i the bytes of s run that a JSON string
// holds as they are, as encoding/json writes it: ASCII other than control
// characters, '"', '\\', '<', '>' and '&'.
func safeSpan(s string, i int) int {
	j := i
	for j+8 <= len(s) {
		w := load64(s, j)
		if w&msb != 0 || hasByte(w, '"') || hasByte(w, '\\') || hasLess(w, 0x20) ||
			hasByte(w, '<') || hasByte(w, '>') || hasByte(w, '&') {
			break
		}
		j += 8
	}
	return j
}
