package recipients

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/settings"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		domains []string
		max     int
		wantErr string
	}{
		{"one domain", []string{"example.com"}, 0, ""},
		{"wildcard and case", []string{"Example.COM", "*.corp.example.com"}, 5, ""},
		{"single label (local)", []string{"localhost"}, 0, ""},
		{"none", nil, 0, "no allowed recipient domains"},
		{"blank", []string{" "}, 0, "want a domain"},
		{"an address, not a domain", []string{"a@example.com"}, 0, "want a domain"},
		{"any", []string{"*"}, 0, "want a domain"},
		{"wildcard in the middle", []string{"corp.*.com"}, 0, "want a domain"},
		{"trailing dot", []string{"example.com."}, 0, "want a domain"},
		{"max too high", []string{"example.com"}, 51, "want 1..50"},
		{"max negative", []string{"example.com"}, -1, "want 1..50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.domains, tt.max)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if want := max(tt.max, 0); want == 0 && p.Max() != DefaultMax || want != 0 && p.Max() != want {
					t.Errorf("Max = %d", p.Max())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Parse error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	p, err := Parse([]string{"example.com", "*.corp.example.com"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr, reason string
	}{
		{"alice@example.com", ""},
		{"  Alice@EXAMPLE.com ", ""}, // canonicalized first
		{"bob@mail.corp.example.com", ""},
		{"bob@corp.example.com", ReasonDomainRefused}, // the wildcard does not cover the apex
		{"a@a.corp.example.com", ""},
		{"eve@xcorp.example.com", ReasonDomainRefused}, // a label boundary, not a string suffix
		{"eve@attacker.example", ReasonDomainRefused},
		{"eve@example.com.attacker.example", ReasonDomainRefused},
		{"eve@notexample.com", ReasonDomainRefused},
		{"eve@sub.example.com", ReasonDomainRefused}, // an exact entry has no subdomains
		{"eve@example.com.", ReasonNotAnAddress},
		{"alice", ReasonNotAnAddress},
		{"Eve <eve@example.com>", ReasonNotAnAddress},
		{"a@example.com, eve@attacker.example", ReasonNotAnAddress},
		{"alice@alice-ws", ReasonDomainRefused}, // p4's default Email (user@client)
		{"", ReasonNotAnAddress},
	}
	for _, tt := range tests {
		r := p.Check(tt.addr)
		got := ""
		if r != nil {
			got = r.Reason
		}
		if got != tt.reason {
			t.Errorf("Check(%q) = %q, want %q", tt.addr, got, tt.reason)
		}
	}
	var none *Policy
	if none.Check("alice@example.com") == nil {
		t.Error("a nil policy allowed an address")
	}
}

func TestSplitAndReport(t *testing.T) {
	p, _ := Parse([]string{"example.com"}, 0)
	allowed, refused := p.Split([]string{"B@example.com", "a@example.com", "b@example.com", "eve@attacker.example", "junk"})
	if !slices.Equal(allowed, []string{"a@example.com", "b@example.com"}) {
		t.Errorf("allowed = %q", allowed)
	}
	if len(refused) != 2 || refused[0].Address != "eve@attacker.example" || refused[1].Address != "" {
		t.Fatalf("refused = %+v", refused)
	}
	if d := Describe(refused); !strings.Contains(d, "eve@attacker.example (domain_not_allowed)") || !strings.Contains(d, "not a bare e-mail address") {
		t.Errorf("Describe = %q", d)
	}
	var logs, metrics bytes.Buffer
	Report(context.Background(), slog.New(slog.NewJSONHandler(&logs, nil)), obs.NewMetrics(&metrics, "test"), "fetch", "p4-trigger", refused)
	if n := strings.Count(logs.String(), `"event":"recipient_rejected"`); n != 2 {
		t.Errorf("%d security events, want 2: %s", n, logs.String())
	}
	if strings.Contains(logs.String(), "eve@attacker.example") || !strings.Contains(logs.String(), `"recipient_domain":"attacker.example"`) {
		t.Errorf("the log names the address or misses its domain: %s", logs.String())
	}
	if n := strings.Count(metrics.String(), `"RecipientsRejected":1`); n != 2 {
		t.Errorf("%d metrics, want 2: %s", n, metrics.String())
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantErr bool
		max     int
	}{
		{"set", map[string]string{settings.RecipientDomains.Name: "example.com, *.corp.example.com", settings.MaxRecipients.Name: "5"}, false, 5},
		{"default max", map[string]string{settings.RecipientDomains.Name: "example.com"}, false, DefaultMax},
		{"missing domains", map[string]string{}, true, 0},
		{"bad domain", map[string]string{settings.RecipientDomains.Name: "example.com,@x"}, true, 0},
		{"bad max", map[string]string{settings.RecipientDomains.Name: "example.com", settings.MaxRecipients.Name: "500"}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := config.NewReaderFrom(tt.env)
			p, err := Load(r)
			if err == nil {
				err = r.Err()
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("Load: %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && p.Max() != tt.max {
				t.Errorf("Max = %d, want %d", p.Max(), tt.max)
			}
		})
	}
}
