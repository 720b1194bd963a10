package p4

import "context"

// UserEmail returns the e-mail address of a Perforce user from its user spec
// (p4 user -o), "" for a user the server does not know. The fetch stage uses
// it for the author of a Helix Swarm review, who is not the owner of the
// archive change Swarm hands over.
func (f *Fetcher) UserEmail(ctx context.Context, user string) (string, error) {
	return f.email(ctx, user)
}
