package redact

import (
	"strings"
	"testing"
)

// FuzzRedact checks the properties the pre-submit guard relies on, for any
// input: no panic, the same output every time, line structure kept, and
// output that a second pass leaves alone (no residual match).
func FuzzRedact(f *testing.F) {
	seeds := []string{
		"",
		"\n",
		"password = \"hunter2\"\n",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8\n-----END RSA PRIVATE KEY-----\n",
		"+-----BEGIN PRIVATE KEY-----\n+MIIE\n",
		"smtp://u:p@ss@host:25 Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.x",
		"AKIAQX7N3PLV2KD5RTWE AKIAQX7N3PLV2KD5RTWE",
		"[REDACTED:password-assignment] password=[REDACTED:x]",
		"alice@corp.example.com 10.0.0.1 fd00::1 ::ffff:10.1.2.3",
		"C: AUTH PLAIN AGJvdABodW50ZXIy\r\n",
		"\xff\xfe password='\x00'",
		strings.Repeat("a=", 200),
		"<password>x</password> IDENTIFIED BY 'y'",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	r := newRedactor(f, fullPolicy)
	f.Fuzz(func(t *testing.T, in string) {
		out, ms, err := r.Redact(in)
		out2, ms2, err2 := r.Redact(in)
		if (err == nil) != (err2 == nil) || out != out2 || len(ms) != len(ms2) {
			t.Fatalf("not deterministic for %q", in)
		}
		if err != nil {
			t.Fatalf("Redact(%q): %v", in, err)
		}
		if strings.Count(out, "\n") != strings.Count(in, "\n") {
			t.Fatalf("line count changed for %q -> %q", in, out)
		}
		again, ms3, err := r.Redact(out)
		if err != nil || again != out || len(ms3) != 0 {
			t.Fatalf("output of %q is not a fixed point: %q -> %q (%v, %v)", in, out, again, ms3, err)
		}
		for _, m := range ms {
			if m.Line < 1 || m.Line > strings.Count(in, "\n")+1 {
				t.Fatalf("match %v outside the input's lines", m)
			}
		}
	})
}
