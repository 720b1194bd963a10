package obs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestLoggerMasksSecrets(t *testing.T) {
	DefaultMasker.Add("hunter2-very-secret")
	var buf bytes.Buffer
	log := NewLogger(&buf, "debug", "test", nil)
	ctx := WithAttrs(context.Background(), slog.String("job_id", "j-1"))
	log.InfoContext(ctx, "calling upstream",
		"api_key", "sk-abcdef123456",
		"Authorization", "Bearer abc",
		"url", "smtp://user:hunter2-very-secret@host",
		"err", errors.New("auth failed for hunter2-very-secret"),
		"count", 3)
	out := buf.String()
	for _, leak := range []string{"hunter2-very-secret", "sk-abcdef123456", "Bearer abc"} {
		if strings.Contains(out, leak) {
			t.Errorf("log leaked %q: %s", leak, out)
		}
	}
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("log line is not JSON: %v", err)
	}
	if rec["job_id"] != "j-1" || rec["function"] != "test" || rec["count"] != float64(3) {
		t.Errorf("correlation attrs missing: %v", rec)
	}
}

func TestMaskerIgnoresShortValues(t *testing.T) {
	m := &Masker{}
	m.Add("ab", "")
	if got := m.String("abc ab"); got != "abc ab" {
		t.Fatalf("short values must not be masked, got %q", got)
	}
}

func TestMaskerKeepsEachSecretOnce(t *testing.T) {
	m := &Masker{}
	for range 1000 { // a warm function refreshing its secrets all day
		m.Add("refreshed-secret-value")
	}
	if len(m.values) != 1 {
		t.Fatalf("%d copies of one secret registered", len(m.values))
	}
}

func TestMetricsEMF(t *testing.T) {
	var buf bytes.Buffer
	m := NewMetrics(&buf, "test")
	m.Put("Escalations", 1, Count, map[string]string{"Stage": "llm"})
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	aws := rec["_aws"].(map[string]any)
	cw := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
	if cw["Namespace"] != "Criticizer" || rec["Escalations"] != float64(1) || rec["Stage"] != "llm" {
		t.Fatalf("bad EMF record: %s", buf.String())
	}
}

// Recipient addresses are PII: logged as a stable pseudonym at every level,
// so one recipient's lines can be followed without naming them.
func TestLoggerPseudonymisesAddresses(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(&buf, "debug", "notify", nil)
	log.Info("review e-mailed", "recipient", "Alice@Example.com")
	log.Debug("smtp: sent", "to", "alice@example.com ")
	out := buf.String()
	if strings.Contains(strings.ToLower(out), "alice@example.com") {
		t.Fatalf("address logged: %s", out)
	}
	if p := Pseudonym("alice@example.com"); strings.Count(out, p) != 2 {
		t.Errorf("want the same pseudonym %s on both lines: %s", p, out)
	}
}
