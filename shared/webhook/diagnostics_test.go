package webhook

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
)

// Rule RC-3 at the intake: every coercion and de-duplication Parse applies
// is a diagnostic naming the field (never the value); a request given in
// canonical form has none.
func TestParseReportsCoercionsAndDeduplications(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       []string
	}{
		{"canonical: nothing to report", `{"changelist_id":7,"review_version":1,"idempotency_key":"k","recipients":["a@x.org"]}`, nil},
		{"numeric strings", `{"changelist_id":"7","review_version":" 2 ","idempotency_key":"k"}`,
			[]string{"coercion_applied changelist_id: numeric string read as an integer", "coercion_applied review_version: numeric string read as an integer"}},
		{"whitespace", `{"changelist_id":7,"review_version":1,"idempotency_key":" k ","source":"api "}`,
			[]string{"coercion_applied idempotency_key: surrounding whitespace trimmed", "coercion_applied source: surrounding whitespace trimmed"}},
		{"requested_by trimmed", `{"changelist_id":7,"review_version":1,"idempotency_key":"k","requested_by":" ann "}`,
			[]string{"coercion_applied requested_by: surrounding whitespace trimmed"}},
		{"swarm callback URLs trimmed", `{"changelist_id":7,"review_version":1,"idempotency_key":"k","source":"swarm","swarm":{"review":9,"status":"shelved","update":" https://swarm.example/u ","pass":"https://swarm.example/p\n"}}`,
			[]string{"coercion_applied swarm.update: surrounding whitespace trimmed", "coercion_applied swarm.pass: surrounding whitespace trimmed"}},
		{"recipients canonicalised and de-duplicated", `{"changelist_id":7,"review_version":1,"idempotency_key":"k","recipients":["Ann@X.org","ann@x.org","bob@x.org","bob@x.org"]}`,
			[]string{"coercion_applied recipients: addresses trimmed and lower-cased (1)", "duplicates_removed recipients: the same mailbox listed more than once (2)"}},
	} {
		r, err := Parse([]byte(tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, d := range r.Diagnostics {
			got = append(got, d.String())
			if strings.Contains(d.String(), "@") {
				t.Errorf("%s: diagnostic %q names an address", tt.name, d)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: diagnostics %q, want %q", tt.name, got, tt.want)
		}
	}
	a, _ := Parse([]byte(`{"changelist_id":"7","review_version":1,"idempotency_key":"k","recipients":["A@x.org","a@x.org"]}`))
	b, _ := Parse([]byte(`{"changelist_id":7,"review_version":1,"idempotency_key":"k","recipients":["a@x.org"]}`))
	if a.Hash() != b.Hash() {
		t.Error("diagnostics changed the request's hash: the same request must stay one idempotent request")
	}
}

// capturingJobs keeps the job Create was given.
type capturingJobs struct{ created *job.Job }

func (c *capturingJobs) Create(_ context.Context, j *job.Job, _ *store.Idempotency) error {
	c.created = j
	return nil
}
func (c *capturingJobs) Get(context.Context, string) (*job.Job, error) { return nil, job.ErrNotFound }

func TestDiagnosticsGoIntoTheJobHistory(t *testing.T) {
	key := []byte("unit-test-key-0123456789")
	jobs := &capturingJobs{}
	h := &Handler{Jobs: jobs, Queue: nopQueue{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ReplayWindow: time.Minute,
		Keys: func(context.Context, bool) ([][]byte, error) { return [][]byte{key}, nil }}
	resp, err := h.Handle(context.Background(), signed(key, `{"changelist_id":"7","review_version":1,"idempotency_key":"k","recipients":["b@x.org","B@x.org"]}`))
	if err != nil || resp.StatusCode != 202 || jobs.created == nil {
		t.Fatalf("%v %d %s", err, resp.StatusCode, resp.Body)
	}
	var got []string
	for _, e := range jobs.created.History {
		if e.Type == job.EventWebhookDiagnostic {
			got = append(got, e.Detail)
		}
	}
	want := []string{"coercion_applied changelist_id: numeric string read as an integer", "coercion_applied recipients: addresses trimmed and lower-cased (1)",
		"duplicates_removed recipients: the same mailbox listed more than once (1)"}
	if !slices.Equal(got, want) {
		t.Errorf("job history diagnostics %q, want %q", got, want)
	}
}
