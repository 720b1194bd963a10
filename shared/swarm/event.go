package swarm

import "encoding/json"

// DecodeComment reads one comment as Swarm's API writes it (the forms
// List tolerates: numeric strings, likes as a list or an object, context
// as [] or an object): an outbound webhook's payload carries comments in
// that shape (*unverified*, reference "Outbound webhooks").
func DecodeComment(b []byte) (Comment, error) {
	var w wireComment
	if err := json.Unmarshal(b, &w); err != nil {
		return Comment{}, err
	}
	return w.comment(), nil
}
