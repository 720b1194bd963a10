//go:build integration

package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// mailText is a message's text as a reader sees it: quoted-printable soft
// line breaks joined.
func mailText(raw []byte) string {
	s := strings.ReplaceAll(string(raw), "=\r\n", "")
	return strings.ReplaceAll(s, "=3D", "=")
}

// TestReviewTrustThroughThePipeline runs the deployed pipeline on two
// changes: a committed key is a critical finding of the pipeline's own, and
// the e-mail and the job record state coverage; a //depot/libs change is
// reviewed under the rules file as the depot held it before the change (the
// fixture's head revision is invalid: the e-mail says which rule was rejected
// and the defaults apply).
func TestReviewTrustThroughThePipeline(t *testing.T) {
	keyCL, keyJob := submit(t, 12345) // deploy.go commits an AWS key
	// 12361 without its own edit of the rules file: the copy must not
	// change the rules later copies are reviewed under.
	libsCL := newChangeWith(t, 12361, func(fx map[string]any) {
		var keep []any
		for _, f := range fx["files"].([]any) {
			if !strings.HasSuffix(f.(map[string]any)["path"].(string), "/.criticizer.yaml") {
				keep = append(keep, f)
			}
		}
		fx["files"] = keep
	})
	r := postWebhook(t, map[string]any{"changelist_id": libsCL, "review_version": 1, "idempotency_key": uniqueKey(t)})
	if r.Status != 202 {
		t.Fatalf("webhook: %d %s", r.Status, r.Body)
	}
	libsJob := r.Decoded["job_id"].(string)

	j := waitJob(t, keyJob, untilSettled(), "succeeded", succeeded)
	if j.Review == nil || !strings.HasPrefix(j.Review.Coverage, "reviewed ") || j.Review.FilesTotal != 3 {
		t.Errorf("job review stats %+v", j.Review)
	}
	for _, m := range waitMails(t, keyCL, 1, 1, 30*time.Second) {
		body := mailText(m.Raw)
		for _, want := range []string{"[CRITICAL]", "Committed secret (aws-access-token)", "Coverage: reviewed 2 of 3 files; skipped 1: 1 binary."} {
			if !strings.Contains(body, want) {
				t.Errorf("e-mail for CL %d lacks %q:\n%s", keyCL, want, body)
			}
		}
		if !strings.Contains(m.Subject, "[partial: 2 of 3 files reviewed]") {
			t.Errorf("subject %q", m.Subject)
		}
		assertNoSecrets(t, "e-mail", body)
	}

	waitJob(t, libsJob, untilSettled(), "succeeded", succeeded)
	for _, m := range waitMails(t, libsCL, 1, 1, 30*time.Second) {
		body := mailText(m.Raw)
		for _, want := range []string{
			fmt.Sprintf("Review rules rejected: //depot/libs/.criticizer.yaml@%d: /max_findings", libsCL-1),
			"Coverage: reviewed 2 of 2 files.", // the defaults ignore nothing
			"Unbounded strcpy",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("e-mail for CL %d lacks %q:\n%s", libsCL, want, body)
			}
		}
	}
}

// TestDailyTokenCounterIsAtomic: concurrent reviews counting into the day's
// token counter in the jobs table lose nothing (DynamoDB ADD).
func TestDailyTokenCounterIsAtomic(t *testing.T) {
	ctx := context.Background()
	counter := env.jobs.DailyTokens()
	// A day of its own, far from today's real counter.
	day := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(time.Now().UnixNano()%30000))
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := counter.Add(ctx, day, 7); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, err := counter.Spent(ctx, day); err != nil || got != 140 {
		t.Errorf("spent = %d, %v; want 140", got, err)
	}
	if got, err := counter.Spent(ctx, day.AddDate(0, 0, 1)); err != nil || got != 0 {
		t.Errorf("next day spent = %d, %v; want 0", got, err)
	}
}

// TestMinuteTokensHoldConcurrentReviewsToTheLimit: reviews reserving from
// the shared per-minute budget in the jobs table (the llm function's
// llm.Shared) together never get more than the limit in a minute; the
// refused ones are told to wait for the next minute.
func TestMinuteTokensHoldConcurrentReviewsToTheLimit(t *testing.T) {
	ctx := context.Background()
	budget := env.jobs.MinuteTokens(1000)
	model := fmt.Sprintf("test-model-%d", time.Now().UnixNano()) // a budget of its own
	now := time.Date(2200, 1, 1, 12, 0, 30, 0, time.UTC)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted, refused := 0, 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait, err := budget.Take(ctx, model, 150, now)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case wait == 0:
				granted++
			case wait != 30*time.Second:
				t.Errorf("told to wait %v, want the 30 s to the next minute", wait)
			default:
				refused++
			}
		}()
	}
	wg.Wait()
	if granted != 6 || refused != 14 {
		t.Errorf("%d reservations of 150 granted and %d refused at a limit of 1,000, want 6 and 14", granted, refused)
	}
	if wait, err := budget.Take(ctx, model, 150, now.Add(time.Minute)); err != nil || wait != 0 {
		t.Errorf("the next minute: wait %v, %v; want room", wait, err)
	}
}
