package evidence

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
)

// HTTP asks an HTTP endpoint for accepted messages:
// GET <URL>?message_id=<id> answering a JSON array (empty when unknown). The
// local SMTP stand-in serves it; a relay's message-tracking API can too.
type HTTP struct {
	URL    string
	Client *http.Client
}

// Delivered reports whether the endpoint knows the Message-ID.
func (l HTTP) Delivered(ctx context.Context, messageID string) (bool, error) {
	c := l.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.URL+"?message_id="+url.QueryEscape(messageID), nil)
	if err != nil {
		return false, failure.Wrap(failure.InternalBug, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return false, fmt.Errorf("evidence lookup: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, failure.Upstream(resp.StatusCode, 0, fmt.Errorf("evidence lookup: HTTP %d", resp.StatusCode))
	}
	var found []json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&found); err != nil {
		return false, failure.Errorf(failure.Upstream5xx, "evidence lookup: %w", err)
	}
	return len(found) > 0, nil
}
