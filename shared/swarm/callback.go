package swarm

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Callback is a test run's callback URL as Swarm builds it, reduced to what
// identifies it: which callback, the run and its uuid (the credential).
// Swarm puts on it the origin of its external_url setting or, without one,
// of the request that started the run (commonly http://localhost, from its
// cron script), not the API URL an operator configured: the origin is
// therefore ignored, and the callback is always made on SWARM_URL (On), so
// no request can make the service call a host of its choosing.
// Source: docs/reference/swarm.md, "Test-run callbacks" (Swarm
// 2022.1 module/TestIntegration/config/module.config.php, QualifiedUrl).
type Callback struct {
	Kind    string // update, pass or fail
	Version string // the API version in the path, e.g. "v10"
	Run     int64
	UUID    string
}

// callbackPath is the path tail of {update}, {pass} and {fail}:
// /api/v10/testruns/{id}/{uuid}, …/pass/{uuid}, …/fail/{uuid}. What comes
// before /api (a sub-path Swarm is served under) is not kept.
//
// The uuid is Review::getToken(): the review's token, an upper-case UUID
// made when the review is saved (strtoupper(new Uuid)), then ".v" and the
// review's head version, e.g. FAE4501C-1E7B-4C65-9A5F-FF710601BC3F.v3
// (Swarm 2022.1 module/Reviews/src/Model/Review.php getToken,
// module/TestIntegration/src/Service/TestExecutor.php startTest and
// generateCallbackUrls; docs/reference/swarm.md). The token's characters
// are read leniently (letters, digits, "-"); a token without the version
// suffix has no source but is tolerated, since the uuid is Swarm's
// credential, not ours, and is only ever sent back to SWARM_URL.
var callbackPath = regexp.MustCompile(`/api/(v[0-9]{1,2})/testruns/([0-9]{1,18})/(?:(pass|fail)/)?([A-Za-z0-9-]{8,64}(?:\.v[1-9][0-9]{0,8})?)$`)

// ParseCallback reads a callback URL Swarm substituted for {update},
// {pass} or {fail}. Anything that is not an absolute http(s) URL of that
// path shape (no query, no login) is refused with the reason.
func ParseCallback(raw string) (Callback, error) {
	const shape = "not a Swarm test-run callback (…/api/v10/testruns/{id}/{uuid}, …/pass/{uuid} or …/fail/{uuid})"
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || len(raw) > 2048 {
		return Callback{}, fmt.Errorf("must be an absolute http(s) URL: %s", shape)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return Callback{}, fmt.Errorf("carries a login, query or fragment: %s", shape)
	}
	m := callbackPath.FindStringSubmatch(u.EscapedPath())
	if m == nil {
		return Callback{}, fmt.Errorf("%s", shape)
	}
	run, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil || run <= 0 {
		return Callback{}, fmt.Errorf("%s", shape)
	}
	kind := m[3]
	if kind == "" {
		kind = "update"
	}
	return Callback{Kind: kind, Version: m[1], Run: run, UUID: m[4]}, nil
}

// On is the callback's URL on base (SWARM_URL, with any sub-path Swarm is
// served under).
func (c Callback) On(base string) string {
	p := "/api/" + c.Version + "/testruns/" + strconv.FormatInt(c.Run, 10) + "/"
	if c.Kind != "update" {
		p += c.Kind + "/"
	}
	return strings.TrimRight(base, "/") + p + url.PathEscape(c.UUID)
}

// RunCallbacks checks a run's callbacks (any may be "") against the kind
// each was given for, and that they name one run, and returns them rebuilt
// on base. field names the one refused.
func RunCallbacks(base, update, pass, fail string) (out [3]string, field string, err error) {
	var first *Callback
	for i, f := range []struct{ kind, raw string }{{"update", update}, {"pass", pass}, {"fail", fail}} {
		if f.raw == "" {
			continue
		}
		c, err := ParseCallback(f.raw)
		if err != nil {
			return out, f.kind, err
		}
		if c.Kind != f.kind {
			return out, f.kind, fmt.Errorf("is Swarm's {%s} callback, not {%s}", c.Kind, f.kind)
		}
		if first == nil {
			first = &c
		} else if c.Run != first.Run || c.UUID != first.UUID || c.Version != first.Version {
			return out, f.kind, fmt.Errorf("names another test run than {%s}", first.Kind)
		}
		out[i] = c.On(base)
	}
	return out, "", nil
}
