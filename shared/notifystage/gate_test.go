package notifystage

import (
	"testing"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/domain"
)

func TestOutcomeGate(t *testing.T) {
	findings := []domain.Finding{
		{Severity: "medium", Category: "style", File: "//depot/a/x.go", Line: 3},
		{Severity: "high", Category: "security", File: "//depot/a/y.go", Line: 7},
		{Severity: "critical", Category: "[click](https://evil.example) @alice", File: "//depot/a/z.go", Line: 9},
	}
	tests := []struct {
		name, gate   string
		wantBlocking int
		wantWorst    string
	}{
		{"off", "", 0, ""},
		{"high", "high", 2, "critical clickhttpsevilexampleali finding in z.go line 9"},
		{"critical", "critical", 1, "critical clickhttpsevilexampleali finding in z.go line 9"},
		{"info: everything", "info", 3, "critical clickhttpsevilexampleali finding in z.go line 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := outcome(3, findings, tt.gate, "posted on the review")
			if o.Blocking != tt.wantBlocking || o.Worst != tt.wantWorst || o.Blocks() != (tt.wantBlocking > 0) {
				t.Fatalf("outcome %+v, want %d blocking, worst %q", o, tt.wantBlocking, tt.wantWorst)
			}
		})
	}
}

func TestGateFromEnv(t *testing.T) {
	for v, want := range map[string]string{"": "", "off": "", "HIGH": "high", "critical": "critical", "severe": "!"} {
		r := config.NewReaderFrom(map[string]string{"SWARM_GATE_SEVERITY": v})
		got := GateFromEnv(r)
		if (want == "!") != (r.Err() != nil) || (want != "!" && got != want) {
			t.Errorf("SWARM_GATE_SEVERITY=%q: %q, %v; want %q", v, got, r.Err(), want)
		}
	}
}
