package swarm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

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

// ReviewVersions returns a review's versions, oldest first (GetReview).
func (c *Client) ReviewVersions(ctx context.Context, review int64) ([]ReviewVersion, error) {
	r, err := c.GetReview(ctx, review)
	if err != nil {
		return nil, err
	}
	if len(r.Versions) == 0 {
		return nil, failure.Errorf(failure.SchemaInvalid, "swarm versions of review %d: the answer has no versions", review)
	}
	return r.Versions, nil
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
