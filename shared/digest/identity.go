package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"github.com/criticizer/criticizer/shared/weekly"
	"strings"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/outbox"
)

// Identity is a digest's one identity, (owner, ISO week): its outbox row
// (Item), Message-ID and token derive from it, never the address itself.
type Identity struct {
	Week  weekly.Week
	Owner string // keyed hash of the canonical address
	Token string // hex; the Message-ID and the X-Criticizer-Key header carry it
}

// Hasher keys an address (delivery.Secret.Recipient).
type Hasher func(addr string) string

// IdentityOf is (owner, week)'s identity under h.
func IdentityOf(owner string, week weekly.Week, h Hasher) Identity {
	o := h(delivery.Canonical(owner))
	sum := sha256.Sum256([]byte("criticizer.digest.v1\x00" + week.String() + "\x00" + o))
	return Identity{Week: week, Owner: o, Token: hex.EncodeToString(sum[:])}
}

// MessageID is "<digest.2026-W48.<token prefix>@<from's domain>>".
func (id Identity) MessageID(from string) string {
	domain := "criticizer.invalid"
	if at := strings.LastIndexByte(from, '@'); at >= 0 && at < len(from)-2 {
		domain = strings.TrimSuffix(from[at+1:], ">")
	}
	return "<digest." + id.Week.String() + "." + id.Token[:32] + "@" + domain + ">"
}

// Item is the digest's outbox row: one per owner and week (rule DG-1).
func (id Identity) Item() outbox.Item { return outbox.DigestItem(id.Week.String(), id.Owner) }
