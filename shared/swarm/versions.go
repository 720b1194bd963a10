package swarm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ReviewVersion is one version of a review, from the reviews API's
// versions array (oldest first), as GetReview reads it.
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
