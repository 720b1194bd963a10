//go:build integration

package integration

import (
	"net"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/faultproxy"
	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
)

// TestCrashedReviewWorkerReturnsWithinTheLease (rule LS-7): the llm queue's
// visibility timeout is the llm function's timeout (reviewTimeoutSeconds,
// 30 s locally: rate limits are waited out inside an attempt), yet a review
// worker killed right after its claim, in the middle of its first model
// call, has its message back within the lease (10 s): the stage set the
// message's visibility to the lease when it claimed it.
func TestCrashedReviewWorkerReturnsWithinTheLease(t *testing.T) {
	fault(t, llmstandin.Fault{DelayMS: 25000}) // the first model call hangs until the worker is killed
	_, id := submit(t, 12345)

	u, err := url.Parse(env.llm.URL())
	if err != nil {
		t.Fatal(err)
	}
	_, portStr, _ := net.SplitHostPort(u.Host)
	port, _ := strconv.Atoi(portStr)
	deadline := time.Now().Add(90 * time.Second)
	var killedAt time.Time
	for killedAt.IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("no review worker ever called the model")
		}
		if pids, err := faultproxy.KillBootstrapsConnectedTo(port); err == nil && len(pids) > 0 {
			killedAt = time.Now()
			t.Logf("killed review worker(s) %v during their model call", pids)
			break
		}
		time.Sleep(50 * time.Millisecond) // polling for the call, not a fixed wait
	}

	j := waitJob(t, id, untilSettled(), "succeeded", succeeded)
	var claims []time.Time
	for _, e := range j.History {
		if e.Type == "stage_claimed" && e.Stage == string(domain.StageLLM) {
			at, _ := time.Parse(job.TimeFormat, e.At)
			claims = append(claims, at)
		}
	}
	if len(claims) != 2 {
		t.Fatalf("llm claims at %v, want the killed one and one redelivery", claims)
	}
	t.Logf("claimed %s, killed %s later, reclaimed %s after the first claim", claims[0].Format(time.RFC3339Nano),
		killedAt.Sub(claims[0]).Round(time.Millisecond), claims[1].Sub(claims[0]).Round(time.Millisecond))
	// Within the lease (plus the skew budget and the event source's polling),
	// well before the queue's 30 s visibility timeout would return it.
	if gap := claims[1].Sub(claims[0]); gap > env.lease+8*time.Second {
		t.Fatalf("the message came back %s after the claim: not within the %s lease", gap, env.lease)
	}
}
