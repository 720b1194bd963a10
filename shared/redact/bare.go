package redact

import (
	"math"
	"strings"
)

// bare-secret (Policy.BareSecrets): a secret in an error message without its
// usual context (a lone AWS secret key, a PEM body line, an echoed token): a
// base64/base64url run of 20+ bytes mixing upper case, lower case and digits
// with near-random entropy. Hex, paths, identifiers, words and numbers do not
// qualify; see TestBareSecrets for both sides.

const minBare = 20

var bareClass = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-" {
		t[c] = true
	}
	return
}()

func findBareSecrets(line string) []span {
	var spans []span
	for i := 0; i < len(line); {
		if !bareClass[line[i]] {
			i++
			continue
		}
		j := i
		for j < len(line) && bareClass[line[j]] {
			j++
		}
		if j-i >= minBare && bareSecret(line[i:j]) {
			spans = append(spans, span{start: i, end: j})
		}
		i = j
	}
	return spans
}

func bareSecret(run string) bool {
	core := strings.TrimRight(strings.Trim(run, "-_/"), "=")
	if len(core) < minBare || strings.Contains(core, "=") {
		return false
	}
	var upper, lower, digit int
	for i := 0; i < len(core); i++ {
		switch c := core[i]; {
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= 'a' && c <= 'z':
			lower++
		case c >= '0' && c <= '9':
			digit++
		}
	}
	if upper == 0 || lower == 0 || digit == 0 {
		return false
	}
	// Path-like runs (a/b/c) are only secrets when their parts are not words.
	if strings.Contains(core, "/") && wordish(core) {
		return false
	}
	// Identifiers (App2ConfigLoader, aws4_request) are mostly words; random
	// text has few runs of three lower-case letters.
	if 3*wordChars(core) >= 2*len(core) {
		return false
	}
	// Random text of n symbols drawn from 64 has entropy close to
	// log2(min(n, 64)); repetitive strings fall short of it.
	return shannon(core) >= 0.7*math.Log2(math.Min(float64(len(core)), 64))
}

// wordChars counts the bytes in word-like runs: an optional capital
// followed by three or more lower-case letters.
func wordChars(s string) int {
	n := 0
	for i := 0; i < len(s); {
		j := i
		if s[j] >= 'A' && s[j] <= 'Z' {
			j++
		}
		k := j
		for k < len(s) && s[k] >= 'a' && s[k] <= 'z' {
			k++
		}
		if k-j >= 3 {
			n += k - i
			i = k
			continue
		}
		i++
	}
	return n
}

// wordish reports whether a slash-separated run reads as a path: two or
// more, and at least half, of its segments are lower-case words.
func wordish(s string) bool {
	segs := strings.Split(s, "/")
	words := 0
	for _, seg := range segs {
		if len(seg) >= 2 && strings.Trim(seg, "abcdefghijklmnopqrstuvwxyz-_") == "" {
			words++
		}
	}
	return words >= 2 && 2*words >= len(segs)
}
