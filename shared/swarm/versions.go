package swarm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/criticizer/criticizer/shared/failure"
)

// ReviewVersion is one version of a review, from the reviews API's
// versions array (oldest first).
type ReviewVersion struct {
	Number int   // 1 for the first
	Change int64 // the change that holds the version's files
	// ArchiveChange is the shelved archive change, where the release names
	// it (recent ones do); 0 when it does not.
	ArchiveChange int64
	User          string
	Time          int64 // Unix seconds
	Pending       bool  // still shelved
	Difference    bool  // differs from the version before
}

// Shelf is the change whose shelved files are this version's (for
// p4 diff2 FILE@=N): archiveChange where given, else change.
func (v ReviewVersion) Shelf() int64 {
	if v.ArchiveChange > 0 {
		return v.ArchiveChange
	}
	return v.Change
}

// ReviewVersions returns a review's versions, oldest first
// (GET /api/v11/reviews/{id}, field versions).
func (c *Client) ReviewVersions(ctx context.Context, review int64) ([]ReviewVersion, error) {
	var doc struct {
		Data *struct {
			Reviews []struct {
				Versions []struct {
					Change        flexInt  `json:"change"`
					ArchiveChange flexInt  `json:"archiveChange"`
					User          string   `json:"user"`
					Time          flexInt  `json:"time"`
					Pending       flexBool `json:"pending"`
					Difference    flexBool `json:"difference"`
				} `json:"versions"`
			} `json:"reviews"`
		} `json:"data"`
	}
	what := fmt.Sprintf("swarm versions of review %d", review)
	if _, err := c.api(ctx, http.MethodGet, "/api/v11/reviews/"+strconv.FormatInt(review, 10), nil, nil, &doc, what, false); err != nil {
		return nil, err
	}
	if doc.Data == nil || len(doc.Data.Reviews) == 0 || len(doc.Data.Reviews[0].Versions) == 0 {
		return nil, failure.Errorf(failure.SchemaInvalid, "%s: the answer has no versions", what)
	}
	var out []ReviewVersion
	for i, v := range doc.Data.Reviews[0].Versions {
		rv := ReviewVersion{Number: i + 1, Change: int64(v.Change), ArchiveChange: int64(v.ArchiveChange), User: v.User,
			Time: int64(v.Time), Pending: bool(v.Pending), Difference: bool(v.Difference)}
		if rv.Shelf() <= 0 {
			return nil, failure.Errorf(failure.SchemaInvalid, "%s: version %d names no change", what, rv.Number)
		}
		out = append(out, rv)
	}
	return out, nil
}

// flexBool reads a flag Swarm may send as a boolean, 0/1 or null.
type flexBool bool

func (b *flexBool) UnmarshalJSON(data []byte) error {
	switch string(bytes.Trim(bytes.TrimSpace(data), `"`)) {
	case "true", "1":
		*b = true
	case "false", "0", "", "null":
		*b = false
	default:
		var v json.Number
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("not a flag")
		}
		*b = v != "0"
	}
	return nil
}
