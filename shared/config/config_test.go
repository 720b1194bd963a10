package config

import (
	"strings"
	"testing"
	"time"
)

func TestLoadCommon(t *testing.T) {
	r := NewReaderFrom(map[string]string{
		"JOBS_TABLE": "jobs", "LEASE_SECONDS": "10", "FETCH_QUEUE_URL": "http://q/fetch", "LLM_DLQ_URL": "http://q/llm-dlq",
	})
	c := LoadCommon(r)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if c.JobsTable != "jobs" || c.Lease != 10*time.Second || c.MaxAttempts != 5 || c.QueueURLs["fetch"] != "http://q/fetch" || c.DLQURLs["llm"] != "http://q/llm-dlq" {
		t.Fatalf("unexpected config %+v", c)
	}
}

func TestReaderReportsEveryProblem(t *testing.T) {
	r := NewReaderFrom(map[string]string{"LEASE_SECONDS": "2", "MAX_ATTEMPTS": "x"})
	LoadCommon(r)
	err := r.Err()
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"JOBS_TABLE is required", "LEASE_SECONDS", "MAX_ATTEMPTS"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestList(t *testing.T) {
	r := NewReaderFrom(map[string]string{"L": " //a/... , ,//b/..."})
	got := r.List("L")
	if len(got) != 2 || got[0] != "//a/..." || got[1] != "//b/..." {
		t.Fatalf("List = %q", got)
	}
}
