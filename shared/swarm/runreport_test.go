package swarm_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outbox/outboxtest"
	"github.com/criticizer/criticizer/shared/swarm"
)

// The test-run channel reports a finished review once: its record is the
// job, so a retry after the callbacks were made calls Swarm no more, and a
// refusal for good is told apart from an outage by its class.
func TestRunReportChannelReportsTheOutcomeOnce(t *testing.T) {
	s := startStandin(t)
	run := s.StartRun(12340, 1)
	j := swarmRunJob(t, s, "job-tr", run)
	ch := swarm.RunReport{Reporter: &swarm.Reporter{Swarm: &swarm.Client{}, Jobs: &memRecorder{run: j.Swarm}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	ctx := context.Background()
	blocked := swarm.Finished{Job: j, Outcome: swarm.Outcome{Findings: 2, Gate: "high", Blocking: 1, Worst: "high security finding in a.go line 3", Where: "posted on the review"}}

	if _, found, err := ch.Lookup(ctx, blocked, 0); err != nil || found {
		t.Fatalf("lookup before any callback: found %v, %v; want not found", found, err)
	}
	s.FailNext("fail", 503)
	_, err := ch.Send(ctx, blocked)
	if v := ch.Classify(err); err == nil || !v.Class.Retryable() || v.MaybeSent {
		t.Fatalf("send during an outage: %v, verdict %+v; want a retryable failure that did not happen", err, v)
	}
	for range 2 { // the stage retries; a redelivery calls nothing
		if got, err := ch.Send(ctx, blocked); err != nil || got != "fail" {
			t.Fatalf("send: %q, %v; want the fail callback made", got, err)
		}
	}
	if got, found, err := ch.Lookup(ctx, blocked, 0); err != nil || !found || got != "fail" {
		t.Fatalf("lookup after the callbacks: %q found %v, %v; want the fail callback on the job record", got, found, err)
	}
	var kinds []string
	for _, c := range s.Calls(run.ID) {
		kinds = append(kinds, c.Kind+":"+c.Status)
	}
	// The final {update} once per attempt at the outcome; {fail} once: the gate blocks.
	if !slices.Equal(kinds, []string{"update:fail", "update:fail", "fail:fail"}) {
		t.Fatalf("calls %v", kinds)
	}
	if v := ch.Classify(failure.Errorf(failure.NotFound, "run deleted")); v.Class.Retryable() {
		t.Fatalf("a deleted run is retried: %+v", v)
	}
}

// The test-run channel passes the one outbox conformance suite against the
// Swarm stand-in: a run's outcome is reported once (one final callback),
// whatever crashes between the callback and its row's mark.
func TestRunReportChannelConformance(t *testing.T) {
	outboxtest.RunChannelSuite(t, func(t *testing.T) outboxtest.Harness[swarm.Finished] {
		s := startStandin(t)
		run := s.StartRun(12340, 1)
		j := swarmRunJob(t, s, "job-tr", run)
		ch := swarm.RunReport{Reporter: &swarm.Reporter{Swarm: &swarm.Client{}, Jobs: &memRecorder{run: j.Swarm}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}}
		done := swarm.Finished{Job: j, Outcome: swarm.Outcome{Findings: 1, Where: "posted on the review"}}
		return outboxtest.Harness[swarm.Finished]{
			Channel: ch,
			Delivery: func(i int) (outbox.Ref, swarm.Finished) {
				return outbox.Item{Channel: "swarm-run", Thread: run.ID, ID: "final"}, done
			},
			Delivered: func(t *testing.T, i int) int {
				n := 0
				for _, c := range s.Calls(run.ID) {
					if c.Kind == "pass" || c.Kind == "fail" {
						n++
					}
				}
				return n
			},
			// The stand-in's refusal carries no text of the test's: the
			// check that no reply text reaches a row holds trivially here.
			Refuse: func(t *testing.T, permanent bool, _ string) {
				if permanent {
					s.FailNext("pass", 404)
					return
				}
				s.FailNext("pass", 503)
			},
		}
	})
}
