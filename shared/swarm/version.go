package swarm

import (
	"context"
	"net/http"
	"strings"

	"github.com/criticizer/criticizer/shared/failure"
)

// Version asks Swarm which release it runs, with the API login: GET
// /api/version, the version route of Swarm's API guide ("Show Version
// Information": {"year", "version", "apiVersions"}). *Unverified*: no
// recorded answer is in docs/reference, so an answer without "version" is
// read as a release unknown, not as an error; a 404 (a server or a proxy
// without the route) is the caller's to judge (failure.UpstreamCode). The
// pre-flight (shared/doctor) uses it.
func (c *Client) Version(ctx context.Context) (string, error) {
	var doc struct {
		Version string `json:"version"`
	}
	if _, err := c.api(ctx, http.MethodGet, "/api/version", nil, nil, &doc, "swarm version", false); err != nil {
		return "", err
	}
	if v := strings.TrimSpace(doc.Version); v != "" {
		return v, nil
	}
	return "", failure.Errorf(failure.SchemaInvalid, "swarm version: no version in the answer")
}
