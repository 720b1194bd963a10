package outbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/job"
)

// Deliveries have channels (docs/swarm-comments.md): an e-mail and a Swarm
// comment keep the same promise, "told once", by the same rows, protocol, write
// tokens and history. A channel supplies send, lookup and classification; the
// outbox only tells its rows apart: an e-mail row by its delivery.Key, another
// channel's by an Item.

// ChannelSwarmComments is the channel of comments on a Helix Swarm review
// (docs/swarm-comments.md).
const ChannelSwarmComments = "swarm-comments"

// ChannelDigest is the weekly digest's channel (shared/digest), one per owner
// and ISO week: ID "<ISO week>/<owner's keyed hash>" (DigestItem).
const ChannelDigest = "digest"

// DigestItem is owner's (keyed hash, never the address) digest for week
// ("2026-W48").
func DigestItem(week, owner string) Item {
	return Item{Channel: ChannelDigest, ID: week + "/" + owner}
}

// Item identifies a non-e-mail delivery: its thread (a Swarm review) and what is
// said there ("finding/<fingerprint>", "summary/v1"). The version is not part of
// it: a finding said once on a review is not said again.
type Item struct {
	Channel string
	Thread  int64
	ID      string
}

// String is the canonical form "<channel>/reviews/<thread>/<id>".
func (it Item) String() string {
	if it.Channel == ChannelDigest {
		return it.Channel + "/" + it.ID
	}
	return it.Channel + "/reviews/" + strconv.FormatInt(it.Thread, 10) + "/" + it.ID
}

// Ref is what a row is keyed by: Email(key) or an Item; the reconciler and
// operator resolve any row by it.
type Ref interface {
	fmt.Stringer
	keys() (pk, sk string)
	// created adds the attributes a row gets when Begin creates it.
	created(set string, values map[string]types.AttributeValue) string
}

// emailID is an e-mail row's identity: keyed by the recipient's keyed hash
// ("RCPTH#<hmac>", with the keyed token) under WithSecret, else by address
// ("RCPT#<addr>", unit tests).
type emailID struct {
	k     delivery.Key
	hash  string // keyed hash of the recipient; "" for the address key
	token string // keyed delivery token, stored on a created row
}

func (e emailID) String() string {
	if e.hash != "" {
		return fmt.Sprintf("%d/v%d/~%s", e.k.Changelist, e.k.ReviewVersion, e.hash[:16])
	}
	return e.k.Canonical().String()
}

func (e emailID) keys() (string, string) {
	if e.hash != "" {
		return pk(e.k), hashedSK + e.hash
	}
	return pk(e.k), sk(e.k)
}

func (e emailID) created(set string, values map[string]types.AttributeValue) string {
	c := e.k.Canonical()
	values[":cl"] = &types.AttributeValueMemberN{Value: fmt.Sprint(c.Changelist)}
	values[":v"] = &types.AttributeValueMemberN{Value: fmt.Sprint(c.ReviewVersion)}
	values[":rcpt"] = sv(c.Recipient)
	set += ", changelist_id = :cl, review_version = :v, recipient = :rcpt"
	if e.token != "" {
		values[":dtok"] = sv(e.token)
		set += ", delivery_token = if_not_exists(delivery_token, :dtok)"
	}
	// A row sent again after its scrub holds the address again: the next scan
	// scrubs it.
	return set + " REMOVE scrubbed_at"
}

// stored is a row's identity as read (its pk and sk), so a row whose address is
// gone is still resolved.
type stored struct{ pk, sk, name string }

func (s stored) String() string                                               { return s.name }
func (s stored) keys() (string, string)                                       { return s.pk, s.sk }
func (s stored) created(set string, _ map[string]types.AttributeValue) string { return set }

// A Swarm item's row is keyed per review, not changelist: one query yields all
// said on a review, which reruns need. A digest's row is "DIGEST#sent#<week>" /
// "OWNER#<hash>": the scrub, which reads only OUTBOX rows, has nothing to find
// in it.
func (it Item) keys() (string, string) {
	if it.Channel == ChannelDigest {
		week, owner, _ := strings.Cut(it.ID, "/")
		return "DIGEST#sent#" + week, "OWNER#" + owner
	}
	return fmt.Sprintf("OUTBOX#SWARM#%d", it.Thread), "ITEM#" + it.ID
}

func (it Item) created(set string, values map[string]types.AttributeValue) string {
	values[":ch"], values[":it"] = sv(it.Channel), sv(it.ID)
	values[":th"] = &types.AttributeValueMemberN{Value: fmt.Sprint(it.Thread)}
	return set + ", delivery_channel = :ch, channel_thread = :th, channel_item = :it"
}

// Email is the Ref of k's e-mail row; the outbox keys it by its secret (own), so
// every caller names it the same way.
func Email(k delivery.Key) Ref { return emailID{k: k} }

// own is k as this outbox keys it (by keyed hash under a delivery key).
func (o *Outbox) own(k Ref) Ref {
	switch e := k.(type) {
	case emailID:
		if o.secret != nil && e.hash == "" {
			return emailID{k: e.k, hash: o.secret.Recipient(e.k.Recipient), token: o.secret.Token(e.k)}
		}
	case bounded:
		return bounded{o.own(e.Ref), e.after}
	}
	return k
}

// Ref returns the row's identity by the keys it was read with.
func (r *Row) Ref() Ref {
	if it, ok := r.ChannelItem(); ok {
		return it
	}
	if r.SK != "" && strings.HasPrefix(r.SK, hashedSK) {
		return stored{pk: r.PK, sk: r.SK, name: fmt.Sprintf("%d/v%d/~%s", r.Changelist, r.ReviewVersion, truncate(strings.TrimPrefix(r.SK, hashedSK), 16))}
	}
	return emailID{k: r.Key()}
}

// Addressee names an e-mail row to an operator: its recipient, or after the
// scrub "~" and the start of its keyed hash.
func (r *Row) Addressee() string {
	if r.Recipient != "" || !strings.HasPrefix(r.SK, hashedSK) {
		return r.Recipient
	}
	return "~" + truncate(strings.TrimPrefix(r.SK, hashedSK), 16)
}

func truncate(s string, n int) string { return s[:min(len(s), n)] }

// Bounded is ref whose Begin also records after as LookupAfter unless the row
// has one: the first send's bound holds for every later one, so the lowest is
// kept. after ≤ 0: ref itself.
func Bounded(ref Ref, after int64) Ref {
	if after <= 0 {
		return ref
	}
	return bounded{ref, after}
}

type bounded struct {
	Ref
	after int64
}

func (b bounded) created(set string, values map[string]types.AttributeValue) string {
	values[":after"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(b.after, 10)}
	return b.Ref.created(set, values) + ", lookup_after = if_not_exists(lookup_after, :after)"
}

// LookupAfter is the bound a Bounded ref records (0: none).
func LookupAfter(ref Ref) int64 {
	if b, ok := ref.(bounded); ok {
		return b.after
	}
	return 0
}

// ItemOf is the channel item ref names; ok is false for an e-mail row.
func ItemOf(ref Ref) (Item, bool) {
	if b, ok := ref.(bounded); ok {
		ref = b.Ref
	}
	it, ok := ref.(Item)
	return it, ok
}

// KeyOf is the canonical delivery key ref names; ok is false for any other Ref.
func KeyOf(ref Ref) (delivery.Key, bool) {
	e, ok := ref.(emailID)
	return e.k.Canonical(), ok
}

// ListThread returns every row of a channel's thread, whatever the version
// (reruns match findings against it).
func (o *Outbox) ListThread(ctx context.Context, channel string, thread int64) ([]Row, error) {
	p, _ := Item{Channel: channel, Thread: thread}.keys()
	return o.query(ctx, p)
}

// ChannelItem returns a channel row's Item; ok is false for an e-mail row.
func (r *Row) ChannelItem() (Item, bool) {
	if r.Channel == "" {
		return Item{}, false
	}
	return Item{Channel: r.Channel, Thread: r.Thread, ID: r.Item}, true
}

// ItemKind names what a channel row says to an operator: "finding", "summary",
// "resolved note", "task addressed", "digest"; "" for e-mail.
func (r *Row) ItemKind() string {
	if r.Channel == "" || r.Channel == ChannelDigest {
		return r.Channel
	}
	kind, _, _ := strings.Cut(r.Item, "/")
	switch kind {
	case "resolved":
		return "resolved note"
	case "addressed":
		return "task addressed"
	}
	return kind
}

// JobRows returns a job's e-mail rows and, for a Swarm review, the comment rows
// it began (a review's rows are shared by its versions' jobs).
func (o *Outbox) JobRows(ctx context.Context, j *job.Job) (emails, comments []Row, err error) {
	emails, err = o.List(ctx, j.Changelist, j.ReviewVersion)
	if err != nil || j.Swarm == nil || j.Swarm.Review <= 0 {
		return emails, nil, err
	}
	all, err := o.ListThread(ctx, ChannelSwarmComments, j.Swarm.Review)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range all {
		if r.JobID == j.ID {
			comments = append(comments, r)
		}
	}
	return emails, comments, nil
}
