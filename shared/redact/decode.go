package redact

import (
	"encoding/base64"
	"encoding/hex"
	"math"
	"net/url"
	"strings"
)

// Encoded secrets (a Kubernetes Secret's base64, a hex blob, a percent-
// encoded query) are found by decoding what looks encoded (unlike gitleaks,
// not every run of 16 word characters) and scanning it with every rule; a
// hit redacts the whole encoded run.

// minEncoded is the shortest run worth decoding (12 decoded bytes).
const minEncoded = 16

var b64Class = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_" {
		t[c] = true
	}
	return
}()

// decoded scans the encoded runs of one line; spans are line offsets.
func (r *Redactor) decoded(line string, depth int) ([]span, error) {
	if len(line) < minEncoded {
		return nil, nil
	}
	var spans []span
	try := func(start, end int, plain string) error {
		if plain == "" {
			return nil
		}
		found, err := r.scan(plain, depth+1)
		if err != nil || len(found) == 0 {
			return err
		}
		spans = append(spans, span{start: start, end: end, rule: found[0].rule})
		return nil
	}
	for i, j := nextRun(line, 0, &b64Class); i < len(line); i, j = nextRun(line, i, &b64Class) {
		end := j
		for end < len(line) && end-j < 2 && line[end] == '=' {
			end++
		}
		if j-i >= minEncoded && looksEncoded(line[i:end]) {
			if err := try(i, end, decodeRun(line[i:end])); err != nil {
				return nil, err
			}
		}
		i = end
	}
	if strings.IndexByte(line, '%') >= 0 {
		for _, f := range percentRuns(line) {
			plain, err := url.QueryUnescape(line[f[0]:f[1]])
			if err != nil || plain == line[f[0]:f[1]] || !printable(plain) {
				continue
			}
			if err := try(f[0], f[1], plain); err != nil {
				return nil, err
			}
		}
	}
	return spans, nil
}

// looksEncoded: hex of at least 32 digits, or base64 mixing cases with a
// digit, a '+', '/' or padding. Words and identifiers have none of those.
func looksEncoded(run string) bool {
	var upper, lower, digit, sym, hexOnly = false, false, false, false, true
	for i := 0; i < len(run); i++ {
		c := run[i]
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
			if c > 'F' {
				hexOnly = false
			}
		case c >= 'a' && c <= 'z':
			lower = true
			if c > 'f' {
				hexOnly = false
			}
		case c >= '0' && c <= '9':
			digit = true
		default:
			sym = true
			hexOnly = false
		}
	}
	if hexOnly {
		return len(run) >= 32 && len(run)%2 == 0
	}
	return upper && lower && (digit || sym)
}

// decodeRun decodes a hex or base64 run; "" unless it yields printable text.
func decodeRun(run string) string {
	b, err := []byte(nil), hex.ErrLength
	if len(run) >= 32 && len(run)%2 == 0 {
		b, err = hex.DecodeString(run)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if err != nil {
			b, err = enc.DecodeString(run)
		}
	}
	if err != nil || !printable(string(b)) {
		return ""
	}
	return string(b)
}

// printable: at least 8 bytes, all printable ASCII or whitespace.
func printable(s string) bool {
	// Every byte outside ASCII decodes to a rune above 0x7e.
	return len(s) >= 8 && !strings.ContainsFunc(s, func(r rune) bool {
		return (r < 0x20 || r > 0x7e) && r != '\n' && r != '\r' && r != '\t'
	})
}

// percentRuns returns the whitespace- and quote-delimited runs of a line
// that hold at least two %XX escapes.
func percentRuns(line string) [][2]int {
	var out [][2]int
	for i := 0; i < len(line); {
		j := strings.IndexAny(line[i:], " \t\"'`<>")
		end := len(line)
		if j >= 0 {
			end = i + j
		}
		if n := countEscapes(line[i:end]); n >= 2 {
			out = append(out, [2]int{i, end})
		}
		i = end + 1
	}
	return out
}

func countEscapes(s string) int {
	n := 0
	for i := 0; i+2 < len(s); i++ {
		if s[i] == '%' && isHex(s[i+1]) && isHex(s[i+2]) {
			n++
		}
	}
	return n
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

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
	for i, j := nextRun(line, 0, &bareClass); i < len(line); i, j = nextRun(line, j, &bareClass) {
		if j-i >= minBare && bareSecret(line[i:j]) {
			spans = append(spans, span{start: i, end: j})
		}
	}
	return spans
}

// nextRun is the first run of class bytes at or after from: [i, j), or
// i = len(line) when none is left.
func nextRun(line string, from int, class *[256]bool) (i, j int) {
	for i = from; i < len(line) && !class[line[i]]; i++ {
	}
	for j = i; j < len(line) && class[line[j]]; j++ {
	}
	return i, j
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
