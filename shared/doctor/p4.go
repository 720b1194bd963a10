package doctor

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/p4"
)

// P4Fetcher is what the Perforce checks need of *p4.Fetcher: the
// protections proof it makes before every fetch, and a whole fetch.
type P4Fetcher interface {
	ProveProtections(ctx context.Context) ([]string, error)
	Fetch(ctx context.Context, changelist int64, shelved bool) (domain.Changeset, error)
}

// P4 checks Perforce through the fetch function's runner and fetcher.
type P4 struct {
	Runner  p4.CommandRunner
	Fetcher P4Fetcher
	Port    string
	// Ticket: the credential is a ticket nothing renews (a password logs in
	// again).
	Ticket bool
}

// The Perforce checks' names.
const (
	CheckP4Connection  = "p4 connection and trust"
	CheckP4Login       = "p4 login and ticket lifetime"
	CheckP4Protections = "p4 protections on the allow-list"
	CheckP4Sample      = "p4 sample changelist fetched whole"
)

// ticketWarning: a ticket credential that expires sooner needs rotating.
const ticketWarning = 7 * 24 * time.Hour

// checks runs the Perforce checks in order; after a failed connection nothing
// can say more.
func (c *P4) checks(ctx context.Context, change int64) []Verdict {
	conn := c.connection(ctx)
	if conn.Status == Fail {
		why := "needs the p4 connection (" + CheckP4Connection + ")"
		return []Verdict{conn, skip(CheckP4Login, why), skip(CheckP4Protections, why), skip(CheckP4Sample, why)}
	}
	out := []Verdict{conn, c.login(ctx), c.protections(ctx)}
	if out[2].Status == Fail {
		return append(out, skip(CheckP4Sample, "needs the protections proof ("+CheckP4Protections+"): every fetch would be refused"))
	}
	return append(out, c.sample(ctx, change))
}

// connection runs "p4 info" (after the runner's trust and login, as before any
// fetch): a refused login is a server that answered.
func (c *P4) connection(ctx context.Context) Verdict {
	recs, err := c.Runner.Run(ctx, "info")
	switch failure.Classify(err) {
	case "":
		version := ""
		for _, r := range recs {
			if v := r["serverVersion"]; v != "" {
				version = v
			}
		}
		return ok(CheckP4Connection, "%s answers (server %s)", c.Port, cmp.Or(version, "version unknown"))
	case failure.AuthDenied:
		return ok(CheckP4Connection, "%s answers; it refused the login (see %q)", c.Port, CheckP4Login)
	case failure.SecurityFailure:
		return bad(Fail, CheckP4Connection, err.Error(), "the server presents another key than p4TrustFingerprint pins: compare with `p4 -p "+c.Port+" trust -l` run on a trusted host (or ask the Perforce admin), set p4TrustFingerprint and deploy; until then treat it as a possible interception")
	}
	return bad(Fail, CheckP4Connection, err.Error(), "check p4Port ("+c.Port+"), that the server runs, and that the functions' network reaches it: vpc subnets, route tables and security groups (docs/network-and-iam.md)")
}

// login runs "p4 login -s": the session and its ticket's lifetime.
func (c *P4) login(ctx context.Context) Verdict {
	recs, err := c.Runner.Run(ctx, "login", "-s")
	if err != nil {
		return bad(Fail, CheckP4Login, err.Error(), "the service user's credential in P4_SECRET_ID (output P4SecretArn) is refused: put {\"password\": …} or a current {\"ticket\": …} there (docs/perforce-and-swarm.md, The service user)")
	}
	secs := -1
	for _, r := range recs {
		if n, err := strconv.Atoi(r["TicketExpiration"]); err == nil {
			secs = n
		}
	}
	if secs < 0 {
		// Unverified: login -s under a ticket credential (P4PASSWD) may
		// report no expiry; the session itself was accepted.
		return bad(Warn, CheckP4Login, "logged in; the server reported no ticket expiry", "check the ticket's lifetime with `p4 login -s` as the service user")
	}
	left := time.Duration(secs) * time.Second
	if !c.Ticket {
		return ok(CheckP4Login, "logged in with the password; ticket valid for %s (renewed by logging in again when it expires)", left)
	}
	if left < ticketWarning {
		return bad(Warn, CheckP4Login, fmt.Sprintf("the ticket credential expires in %s; nothing renews it", left), "put a new ticket (`p4 login -a -p` as the service user, on a group with a long Timeout) in P4_SECRET_ID, or a password, before it expires")
	}
	return ok(CheckP4Login, "logged in with the ticket credential; valid for %s", left)
}

// protections runs the fetch function's proof (p4.Fetcher.CheckProtections).
func (c *P4) protections(ctx context.Context) Verdict {
	lines, err := c.Fetcher.ProveProtections(ctx)
	if err != nil {
		return bad(Fail, CheckP4Protections, err.Error(), "give the service user read (no more) on every depotAllowList path from any host, with no exclusionary line beneath them, in `p4 protect` (docs/perforce-and-swarm.md, The service user); every fetch is refused until then")
	}
	return ok(CheckP4Protections, "every allow-listed path is readable whole; lines read: %s", strings.Join(lines, "; "))
}

// sample fetches change whole, as the fetch stage would.
func (c *P4) sample(ctx context.Context, change int64) Verdict {
	if change <= 0 {
		return skip(CheckP4Sample, "no sample changelist given: run `criticizer doctor --change N` with a recent submitted change under the allow-list")
	}
	cs, err := c.Fetcher.Fetch(ctx, change, false)
	switch failure.Classify(err) {
	case "":
		diffed := 0
		for _, f := range cs.Files {
			if f.Diff != "" {
				diffed++
			}
		}
		return ok(CheckP4Sample, "change %d: %d files, %d with a diff", change, len(cs.Files), diffed)
	case failure.PolicyRejected:
		return bad(Warn, CheckP4Sample, err.Error(), "the allow-list refused the change as it would refuse a job: give a change whose files are all under depotAllowList")
	}
	return bad(Fail, CheckP4Sample, err.Error(), "a job for this change would fail the same way: see the error class in docs/operating.md (FetchDlqAlarm)")
}
