// Package recipients owns the recipient policy: which e-mail addresses may
// receive code (the allowed domains of an environment) and how many a
// request may name. The webhook applies it to the addresses a caller names
// (422, nothing stored), the fetch stage to the addresses resolved later (the
// Perforce user spec, Swarm's review author), and the notify stage once more
// before every send, always on the canonical form of the address
// (delivery.Canonical), so no second spelling slips past it. A refused
// address is never e-mailed: it is recorded in the job's history and as a
// security event (log and metric).
package recipients

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/mail"
	"regexp"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/settings"
)

// Bounds of the maximum: DefaultMax when unset, never above HardMax (the
// webhook's structural limit on the recipients array).
const (
	DefaultMax = 10
	HardMax    = 50
)

// MetricRejected is the metric a refused recipient emits (by Stage).
const MetricRejected = "RecipientsRejected"

// Policy is one environment's recipient policy. The zero value allows
// nothing; build one with Parse.
type Policy struct {
	exact    []string // "example.com": that domain only
	suffixes []string // "*.example.com": stored as ".example.com", any subdomain
	max      int
}

// domainPattern is a DNS name of letters, digits and hyphens (lower case,
// after canonicalization); a single label ("localhost") is allowed.
var domainPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$`)

// ParseDomain validates one allowed-domain entry and returns it lower case:
// "example.com" allows exactly that domain, "*.example.com" its subdomains
// only. Synth (infra) and the functions share this rule.
func ParseDomain(entry string) (string, error) {
	d := strings.ToLower(strings.TrimSpace(entry))
	host := strings.TrimPrefix(d, "*.")
	if d == "" || len(host) > 253 || !domainPattern.MatchString(host) {
		return "", fmt.Errorf("recipient domain %q: want a domain such as example.com or *.example.com", entry)
	}
	return d, nil
}

// Parse builds a policy from the allowed domains and the maximum number of
// recipients a request may name (0 means DefaultMax). No domains is an
// error: an empty policy would either refuse every e-mail or, worse, be
// read as "anyone".
func Parse(domains []string, max int) (*Policy, error) {
	if max == 0 {
		max = DefaultMax
	}
	if max < 1 || max > HardMax {
		return nil, fmt.Errorf("maximum recipients %d: want 1..%d", max, HardMax)
	}
	p := &Policy{max: max}
	for _, e := range domains {
		d, err := ParseDomain(e)
		if err != nil {
			return nil, err
		}
		if rest, ok := strings.CutPrefix(d, "*"); ok {
			p.suffixes = append(p.suffixes, rest)
		} else {
			p.exact = append(p.exact, d)
		}
	}
	if len(p.exact)+len(p.suffixes) == 0 {
		return nil, fmt.Errorf("%s: no allowed recipient domains (name the company's domains)", settings.RecipientDomains.Name)
	}
	return p, nil
}

// Reader is the part of the functions' configuration reader Load uses
// (config.Reader).
type Reader interface {
	String(settings.TextVar) string
	Int(settings.IntVar) int
	List(settings.TextVar) []string
}

// Load reads the policy from RECIPIENT_DOMAINS (required) and
// MAX_RECIPIENTS; a missing or malformed one fails cold start.
func Load(v Reader) (*Policy, error) {
	v.String(settings.RecipientDomains) // records "required" when unset
	max := v.Int(settings.MaxRecipients)
	domains := v.List(settings.RecipientDomains)
	if len(domains) == 0 {
		return nil, nil // the reader already holds the error
	}
	return Parse(domains, max)
}

// Max is the most recipients a request may name (the changelist's author,
// resolved later, is not counted).
func (p *Policy) Max() int { return p.max }

// Reason codes of a refusal (stable: they appear in responses, history and logs).
const (
	ReasonNotAnAddress  = "not_a_bare_address"
	ReasonDomainRefused = "domain_not_allowed"
)

// Refusal is one address the policy refuses and why.
type Refusal struct {
	Address string // canonical; "" when it was not an address at all
	Domain  string
	Reason  string
}

// Check reports why addr (canonicalized; a bare address) may not receive
// code, or nil when its domain is allowed.
func (p *Policy) Check(addr string) *Refusal {
	c := delivery.Canonical(addr)
	a, err := mail.ParseAddress(c)
	if err != nil || a.Name != "" || a.Address != c {
		return &Refusal{Reason: ReasonNotAnAddress}
	}
	at := strings.LastIndexByte(c, '@')
	domain := c[at+1:]
	if p == nil || !p.allowsDomain(domain) {
		return &Refusal{Address: c, Domain: domain, Reason: ReasonDomainRefused}
	}
	return nil
}

func (p *Policy) allowsDomain(d string) bool {
	if slices.Contains(p.exact, d) {
		return true
	}
	for _, s := range p.suffixes {
		if strings.HasSuffix(d, s) && len(d) > len(s) {
			return true
		}
	}
	return false
}

// Split canonicalizes addrs and divides them into the allowed ones (sorted,
// without duplicates) and the refused ones.
func (p *Policy) Split(addrs []string) (allowed []string, refused []Refusal) {
	for _, a := range addrs {
		if r := p.Check(a); r != nil {
			refused = append(refused, *r)
			continue
		}
		allowed = append(allowed, delivery.Canonical(a))
	}
	slices.Sort(allowed)
	return slices.Compact(allowed), refused
}

// String is the refusal as the job history and the webhook's answer show it.
func (r Refusal) String() string {
	if r.Address == "" {
		return "an entry that is not a bare e-mail address (" + r.Reason + ")"
	}
	return r.Address + " (" + r.Reason + ")"
}

// Describe joins refusals for a history entry or an error message.
func Describe(rs []Refusal) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// Report records refusals as security events: one structured log record
// (event "recipient_rejected") and one RecipientsRejected metric per
// address. The log names the domain and a digest of the address, not the
// address itself (the job's history, with its retention, keeps that).
func Report(ctx context.Context, log *slog.Logger, m *obs.Metrics, stage, source string, rs []Refusal) {
	for _, r := range rs {
		sum := sha256.Sum256([]byte(r.Address))
		if log != nil {
			log.WarnContext(ctx, "recipient refused by the recipient policy; not e-mailed",
				"event", "recipient_rejected", "security_event", true, "stage", stage, "source", source,
				"reason", r.Reason, "recipient_domain", r.Domain, "recipient_sha256", hex.EncodeToString(sum[:8]))
		}
		m.Put(MetricRejected, 1, obs.Count, map[string]string{"Stage": stage})
	}
}

// Gate is the policy as a stage applies it before it sends: each refusal
// reported (Report) under the stage's name.
type Gate struct {
	Policy  *Policy
	Log     *slog.Logger
	Metrics *obs.Metrics
	Stage   string
}

// Allow is Split with the refusals reported and described ("" for none).
func (g *Gate) Allow(ctx context.Context, source string, addrs []string) (allowed []string, refused string) {
	allowed, rs := g.Policy.Split(addrs)
	Report(ctx, g.Log, g.Metrics, g.Stage, source, rs)
	return allowed, Describe(rs)
}
