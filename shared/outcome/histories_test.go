package outcome_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/store/dynamotest"
	"github.com/criticizer/criticizer/shared/swarm"
)

// A history is what reviewers did on one review, as successive reads of
// its comments in Swarm's v11 comments API shape (reference "Review
// comments"), with the fate each finding must have on record after each
// read and why (testdata/histories/*.json; docs/swarm-comments.md
// "Reactions" states the rules).
type history struct {
	Why      string           `json:"why"`
	Self     string           `json:"self"`
	Review   int64            `json:"review"`
	Findings map[string]int64 `json:"findings"` // fingerprint -> the comment we posted it as
	Steps    []struct {
		Why      string            `json:"why"`
		Comments []json.RawMessage `json:"comments"` // v11 comment objects, as listed
		Filler   int               `json:"filler"`   // chatter comments by others before these, ids 1000 up
		Resolved []string          `json:"resolved"` // fingerprints a rerun resolved before this read
		Want     map[string]string `json:"want"`
	} `json:"steps"`
}

// Each history is replayed through the real client's listing (every page,
// v11 JSON) and Reader.Read, with the store's records checked after each
// read.
func TestHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no histories: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var h history
			if err := json.Unmarshal(b, &h); err != nil {
				t.Fatal(err)
			}
			replay(t, h)
		})
	}
}

func replay(t *testing.T, h history) {
	ctx := context.Background()
	api := &v11Comments{}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	cl := &swarm.Client{BaseURL: srv.URL, HTTP: &http.Client{Timeout: 5 * time.Second},
		Credentials: func(context.Context, bool) (swarm.Credentials, error) {
			return swarm.Credentials{User: h.Self, Ticket: "t"}, nil
		}}
	st := outcome.NewStore(dynamotest.New(), dynamotest.Table)
	var posted rows
	for fp, id := range h.Findings {
		if _, err := st.Posted(ctx, outcome.Record{Review: h.Review, Fingerprint: fp, Category: "bug", Kind: "k-" + fp, File: "//depot/engine/net/socket.cpp"}); err != nil {
			t.Fatal(err)
		}
		posted = append(posted, outbox.Row{Item: swarm.KindFinding + "/" + fp, NotificationID: strconv.FormatInt(id, 10), NotifiedAt: "2026-11-01T00:00:00Z"})
	}
	rd := &outcome.Reader{Store: st, Rows: posted, Comments: cl}
	for i, s := range h.Steps {
		api.set(h.Review, s.Comments, s.Filler)
		if _, err := rd.Read(ctx, h.Review, s.Resolved); err != nil {
			t.Fatalf("step %d (%s): %v", i+1, s.Why, err)
		}
		recs, err := st.Review(ctx, h.Review)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if want, ok := s.Want[r.Fingerprint]; ok && string(r.Fate) != want {
				t.Errorf("step %d (%s): %s is %s, want %s — %s", i+1, s.Why, r.Fingerprint, r.Fate, want, h.Why)
			}
		}
	}
}

// v11Comments serves GET /api/v11/comments/reviews/{id} as Swarm does
// (reference "Review comments"): oldest first, max (default 100) and
// after=<id>, lastSeen the last id of the page and null on an empty page,
// wrapped in {"error", "messages", "data"}.
type v11Comments struct {
	mu     sync.Mutex
	review int64
	list   []json.RawMessage
}

func (a *v11Comments) set(review int64, comments []json.RawMessage, filler int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.review, a.list = review, nil
	for i := range filler {
		id := 1000 + i
		a.list = append(a.list, json.RawMessage(fmt.Sprintf(`{"id":%d,"topic":"reviews/%d","body":"+1 looks fine","user":"carol","time":1795000000,"updated":1795000000,"taskState":"comment","flags":[],"likes":[],"attachments":[],"context":[]}`, id, review)))
	}
	a.list = append(a.list, comments...)
	slices.SortStableFunc(a.list, func(x, y json.RawMessage) int { return int(idOf(x) - idOf(y)) })
}

func idOf(c json.RawMessage) int64 {
	var v struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(c, &v)
	return v.ID
}

func (a *v11Comments) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.URL.Path != "/api/v11/comments/reviews/"+strconv.FormatInt(a.review, 10) {
		http.NotFound(w, r)
		return
	}
	limit, after := 100, int64(0)
	if m, err := strconv.Atoi(r.URL.Query().Get("max")); err == nil && m > 0 {
		limit = m
	}
	after, _ = strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	page := []json.RawMessage{}
	for _, c := range a.list {
		if idOf(c) > after && len(page) < limit {
			page = append(page, c)
		}
	}
	var last any // null on an empty page
	if len(page) > 0 {
		last = idOf(page[len(page)-1])
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"error": nil, "messages": []string{},
		"data": map[string]any{"comments": page, "lastSeen": last}})
}
