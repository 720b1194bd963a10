package delivery

import (
	"regexp"
	"strings"
	"testing"
)

func TestKeyString(t *testing.T) {
	tests := []struct {
		name string
		key  Key
		want string
	}{
		{"plain", Key{12345, "alice@example.com", 1}, "12345/v1/alice@example.com"},
		{"case and space folded", Key{12345, "  Alice@Example.COM ", 1}, "12345/v1/alice@example.com"},
		{"version", Key{7, "b@x.org", 42}, "7/v42/b@x.org"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.key.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIdempotencyToken(t *testing.T) {
	base := Key{12345, "alice@example.com", 1}
	// Pinned: a change here means every in-flight retry would be treated as
	// a new delivery intent. Bump KeyScheme deliberately if it must change.
	const golden = "4ea48d6f8f14dd6e90f3aa121d31210967a29fd0c546fed398ef3ad8d480e901"
	tok := base.IdempotencyToken()
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(tok) {
		t.Fatalf("token %q is not 64 hex digits", tok)
	}
	if got := tok; got != golden {
		t.Errorf("token = %s, want pinned %s", got, golden)
	}
	if same := (Key{12345, " ALICE@example.com", 1}).IdempotencyToken(); same != tok {
		t.Errorf("case/space variant of the recipient gave a different token")
	}
	for name, k := range map[string]Key{
		"changelist": {12346, "alice@example.com", 1},
		"recipient":  {12345, "bob@example.com", 1},
		"version":    {12345, "alice@example.com", 2},
	} {
		if k.IdempotencyToken() == tok {
			t.Errorf("changing the %s did not change the token", name)
		}
	}
}

func TestMessageID(t *testing.T) {
	k := Key{12345, "alice@example.com", 3}
	tests := []struct {
		domain, wantSuffix string
	}{
		{"example.com", "@example.com>"},
		{" Mail.Example.COM ", "@mail.example.com>"},
		{"", "@criticizer.invalid>"},
		{"bad domain>", "@criticizer.invalid>"},
	}
	re := regexp.MustCompile(`^<cl12345\.v3\.[0-9a-f]{32}@[a-z0-9.-]+>$`)
	for _, tt := range tests {
		id := k.MessageID(tt.domain)
		if !re.MatchString(id) || !strings.HasSuffix(id, tt.wantSuffix) {
			t.Errorf("MessageID(%q) = %q, want form %s ending %s", tt.domain, id, re, tt.wantSuffix)
		}
		if id != k.MessageID(tt.domain) {
			t.Errorf("MessageID(%q) not deterministic", tt.domain)
		}
	}
	if !strings.Contains(k.MessageID("x.org"), k.IdempotencyToken()[:32]) {
		t.Error("Message-ID does not carry the token")
	}
}

func TestKeyValidate(t *testing.T) {
	tests := []struct {
		name    string
		key     Key
		wantErr bool
	}{
		{"ok", Key{1, "a@b.c", 1}, false},
		{"zero changelist", Key{0, "a@b.c", 1}, true},
		{"negative changelist", Key{-5, "a@b.c", 1}, true},
		{"version zero", Key{1, "a@b.c", 0}, true},
		{"empty recipient", Key{1, "", 1}, true},
		{"not an address", Key{1, "alice", 1}, true},
		{"display name", Key{1, "Alice <a@b.c>", 1}, true},
		{"two recipients", Key{1, "a@b.c, d@e.f", 1}, true},
		{"header injection", Key{1, "a@b.c\r\nBcc: x@y.z", 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.key.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}
