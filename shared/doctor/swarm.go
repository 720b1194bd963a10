package doctor

import (
	"context"
	"fmt"
	"net/http"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/swarm"
)

// SwarmAPI is what the Swarm checks need of *swarm.Client.
type SwarmAPI interface {
	Version(ctx context.Context) (string, error)
	GetReview(ctx context.Context, id int64) (swarm.Review, error)
}

// Swarm checks P4 Code Review with the fetch and notify functions' URL and
// login.
type Swarm struct {
	API SwarmAPI
	URL string
}

// The Swarm checks' names.
const (
	CheckSwarmReach    = "swarm reachable, login and release"
	CheckSwarmReview   = "swarm service user reads a review"
	CheckSwarmCallback = "swarm external_url and callbacks"
)

func (c *Swarm) checks(ctx context.Context, review int64) []Verdict {
	reach := c.reach(ctx)
	// Swarm's API shows neither external_url nor a test run on demand: the first
	// run's callbacks are the proof (docs/reference/swarm.md, callbacks'
	// origin).
	callback := skip(CheckSwarmCallback, "not provable from here: Swarm's callbacks use its environment.external_url (else http://localhost from the queue worker); the webhook accepts either, and the first test run's job shows the callback it got (`criticizer job ID`)")
	if reach.Status == Fail {
		return []Verdict{reach, skip(CheckSwarmReview, "needs "+CheckSwarmReach), callback}
	}
	return []Verdict{reach, c.review(ctx, review), callback}
}

func (c *Swarm) reach(ctx context.Context) Verdict {
	v, err := c.API.Version(ctx)
	code := failure.UpstreamCode(err)
	switch {
	case err == nil:
		return ok(CheckSwarmReach, "%s answers with the API login; release %s", c.URL, v)
	case code == http.StatusNotFound || failure.Classify(err) == failure.SchemaInvalid:
		return bad(Warn, CheckSwarmReach, fmt.Sprintf("%s answers, but not with its release (%v)", c.URL, err), "check that swarmUrl is Swarm's base URL (no /api suffix, no proxy path it does not serve)")
	case failure.Classify(err) == failure.AuthDenied:
		return bad(Fail, CheckSwarmReach, err.Error(), "the API login in SWARM_API_SECRET_ID (output SwarmApiSecretArn) is refused: put {\"user\": …, \"ticket\": …} of the service user there, a ticket valid from all hosts (`p4 login -a -p`) (docs/perforce-and-swarm.md)")
	}
	return bad(Fail, CheckSwarmReach, err.Error(), "check swarmUrl and that the functions' network reaches it: a Swarm inside the studio needs swarmPrivate and vpc (docs/network-and-iam.md)")
}

func (c *Swarm) review(ctx context.Context, id int64) Verdict {
	if id <= 0 {
		return skip(CheckSwarmReview, "no review given: run `criticizer doctor --review N` with a review the service user may see")
	}
	r, err := c.API.GetReview(ctx, id)
	if err != nil {
		return bad(Fail, CheckSwarmReview, err.Error(), "the service user must see the review's project and branches in Swarm and Perforce (its protections); a Swarm run of this review would fail the same way")
	}
	return ok(CheckSwarmReview, "review %d: author %s, %d version(s)", id, r.Author, len(r.Versions))
}
