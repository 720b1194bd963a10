package webhook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/swarm"
)

// MaxBody is the largest webhook body accepted (256 KiB).
const MaxBody = 256 << 10

// MaxReviewVersion bounds review_version. A rerun needs a strictly higher
// version, so a caller that could send the largest integer would lock the
// changelist against every later rerun; a million versions of one
// changelist is more than any review sees.
const MaxReviewVersion = 1_000_000

// Request is a validated webhook: "review changelist C at version V".
//
// Fields (JSON):
//
//	changelist_id    number or numeric string, required, > 0
//	review_version   number or numeric string, required, 1..MaxReviewVersion; a rerun needs a higher one
//	idempotency_key  string, required, 1–128 of [A-Za-z0-9._:@/-]; the caller's dedupe key
//	shelved          bool, optional: review the shelved files of a pending changelist
//	recipients       []string, optional, ≤ 50 e-mail addresses, added to the author; not for source swarm
//	source           string, optional: "p4-trigger", "swarm" or "api" (default "api")
//	requested_by     string, optional, ≤ 128 chars, no control characters or markup, for the audit history
//	swarm            object, required for source "swarm", only there: the test run
//	  review         number or numeric string ("{review}"), required
//	  status         "shelved" or "submitted" ("{status}"), required; sets shelved
//	  update, pass, fail  callback URLs ("{update}" …), optional, on SWARM_URL's origin
//
// Every value Swarm substitutes is a string ("{version}" becomes "3"), so
// the numeric fields take numeric strings too. p4 triggers and API callers
// send the same shape without "swarm"; see docs/api.md.
type Request struct {
	ChangelistID   int64         `json:"changelist_id"`
	ReviewVersion  int           `json:"review_version"`
	IdempotencyKey string        `json:"idempotency_key"`
	Shelved        bool          `json:"shelved"`
	Recipients     []string      `json:"recipients"`
	Source         string        `json:"source"`
	RequestedBy    string        `json:"requested_by,omitempty"`
	Swarm          *SwarmRequest `json:"swarm,omitempty"`
	// Diagnostics lists the coercions and de-duplications Parse applied
	// (not part of the request's meaning: excluded from Hash).
	Diagnostics []Diagnostic `json:"-"`
}

// SwarmRequest is the Helix Swarm test run a request comes from.
type SwarmRequest struct {
	Review int64  `json:"review"`
	Status string `json:"status"` // normalised: shelved or submitted
	Update string `json:"update,omitempty"`
	Pass   string `json:"pass,omitempty"`
	Fail   string `json:"fail,omitempty"`
}

// FieldError names the field a request was rejected for.
type FieldError struct {
	Code  string // malformed_json, missing_field, invalid_field, unknown_field
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

var (
	keyPattern = regexp.MustCompile(`^[A-Za-z0-9._:@/-]{1,128}$`)
	sources    = []string{"p4-trigger", "swarm", "api"}
)

// Parse decodes and validates a webhook body.
func Parse(body []byte) (Request, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Request{}, &FieldError{Code: "malformed_json", Msg: "body is not a JSON object: " + err.Error()}
	}
	if dec.More() {
		return Request{}, &FieldError{Code: "malformed_json", Msg: "trailing data after the JSON object"}
	}
	var r Request
	known := []string{"changelist_id", "review_version", "idempotency_key", "shelved", "recipients", "source", "requested_by", "swarm"}
	for k := range raw {
		if !slices.Contains(known, k) {
			return Request{}, &FieldError{Code: "unknown_field", Field: k, Msg: "unknown field"}
		}
	}
	var err error
	if r.ChangelistID, err = positiveInt(raw, "changelist_id", 1<<53); err != nil {
		return Request{}, err
	}
	v, err := positiveInt(raw, "review_version", MaxReviewVersion)
	if err != nil {
		if fe, ok := IsFieldError(err); ok && fe.Code == "invalid_field" {
			fe.Msg = "must be an integer from 1 to " + strconv.Itoa(MaxReviewVersion)
		}
		return Request{}, err
	}
	r.ReviewVersion = int(v)
	if err := str(raw, "idempotency_key", true, &r.IdempotencyKey); err != nil {
		return Request{}, err
	}
	if !keyPattern.MatchString(r.IdempotencyKey) {
		return Request{}, &FieldError{Code: "invalid_field", Field: "idempotency_key", Msg: "must be 1-128 characters of A-Z a-z 0-9 . _ : @ / -"}
	}
	if b, ok := raw["shelved"]; ok {
		if err := json.Unmarshal(b, &r.Shelved); err != nil {
			return Request{}, &FieldError{Code: "invalid_field", Field: "shelved", Msg: "must be a boolean"}
		}
	}
	if r.Recipients, err = parseRecipients(raw); err != nil {
		return Request{}, err
	}
	if err := str(raw, "source", false, &r.Source); err != nil {
		return Request{}, err
	}
	if r.Source == "" {
		r.Source = "api"
		if _, ok := raw["swarm"]; ok {
			r.Source = "swarm"
		}
	}
	if !slices.Contains(sources, r.Source) {
		return Request{}, &FieldError{Code: "invalid_field", Field: "source", Msg: "must be p4-trigger, swarm or api"}
	}
	if err := str(raw, "requested_by", false, &r.RequestedBy); err != nil {
		return Request{}, err
	}
	if len(r.RequestedBy) > 128 {
		return Request{}, &FieldError{Code: "invalid_field", Field: "requested_by", Msg: "at most 128 characters"}
	}
	if msg := freeText(r.RequestedBy); msg != "" {
		return Request{}, &FieldError{Code: "invalid_field", Field: "requested_by", Msg: msg}
	}
	if err := parseSwarm(raw, &r); err != nil {
		return Request{}, err
	}
	r.Diagnostics = diagnose(raw, r)
	return r, nil
}

// parseRecipients reads "recipients": at most 50 bare e-mail addresses,
// returned canonical, sorted and without duplicates (nil when absent).
func parseRecipients(raw map[string]json.RawMessage) ([]string, error) {
	var recipients []string
	if b, ok := raw["recipients"]; ok {
		if err := json.Unmarshal(b, &recipients); err != nil {
			return nil, &FieldError{Code: "invalid_field", Field: "recipients", Msg: "must be an array of e-mail addresses"}
		}
	}
	if len(recipients) > 50 {
		return nil, &FieldError{Code: "invalid_field", Field: "recipients", Msg: "at most 50 recipients"}
	}
	for i, a := range recipients {
		addr, err := mail.ParseAddress(a)
		if err != nil || addr.Name != "" || addr.Address != strings.TrimSpace(a) {
			return nil, &FieldError{Code: "invalid_field", Field: fmt.Sprintf("recipients[%d]", i), Msg: "not a bare e-mail address"}
		}
		recipients[i] = delivery.Canonical(addr.Address)
	}
	slices.Sort(recipients)
	return slices.Compact(recipients), nil
}

// parseSwarm reads the "swarm" object: present exactly when source is
// "swarm". Its {status} decides the describe mode; an explicit "shelved"
// that contradicts it is rejected rather than guessed between.
func parseSwarm(raw map[string]json.RawMessage, r *Request) error {
	b, ok := raw["swarm"]
	if !ok || string(b) == "null" {
		if r.Source == "swarm" {
			return &FieldError{Code: "missing_field", Field: "swarm", Msg: "is required for source swarm (the review, {status} and the callback URLs)"}
		}
		return nil
	}
	if r.Source != "swarm" {
		return &FieldError{Code: "invalid_field", Field: "swarm", Msg: "only for source swarm"}
	}
	var sw map[string]json.RawMessage
	if err := json.Unmarshal(b, &sw); err != nil {
		return &FieldError{Code: "invalid_field", Field: "swarm", Msg: "must be an object"}
	}
	for k := range sw {
		if !slices.Contains([]string{"review", "status", "update", "pass", "fail"}, k) {
			return &FieldError{Code: "unknown_field", Field: "swarm." + k, Msg: "unknown field"}
		}
	}
	out := &SwarmRequest{}
	// inSwarm names a field of the swarm object.
	inSwarm := func(err error) error {
		fe, _ := IsFieldError(err)
		fe.Field = "swarm." + fe.Field
		return fe
	}
	var err error
	if out.Review, err = positiveInt(sw, "review", 1<<53); err != nil {
		return inSwarm(err)
	}
	var status string
	if err := str(sw, "status", true, &status); err != nil {
		return inSwarm(err)
	}
	shelved, ok := swarm.Shelved(status)
	if !ok {
		return &FieldError{Code: "invalid_field", Field: "swarm.status", Msg: "must be shelved or submitted"}
	}
	if len(r.Recipients) > 0 {
		// A Swarm run's recipients are its review's author and participants,
		// read from Swarm by the fetch stage: never addresses a request names.
		return &FieldError{Code: "invalid_field", Field: "recipients", Msg: "not accepted for source swarm: the review's author and participants are e-mailed"}
	}
	if _, given := raw["shelved"]; given && r.Shelved != shelved {
		return &FieldError{Code: "invalid_field", Field: "shelved", Msg: "contradicts swarm.status"}
	}
	r.Shelved = shelved
	out.Status = swarm.StatusSubmitted
	if shelved {
		out.Status = swarm.StatusShelved
	}
	for _, f := range []struct {
		name string
		into *string
	}{{"update", &out.Update}, {"pass", &out.Pass}, {"fail", &out.Fail}} {
		if err := str(sw, f.name, false, f.into); err != nil {
			return inSwarm(err)
		}
		if u, err := url.Parse(*f.into); *f.into != "" && (err != nil || !u.IsAbs() || u.Host == "" || len(*f.into) > 2048) {
			// An unsubstituted "{pass}" lands here too.
			return &FieldError{Code: "invalid_field", Field: "swarm." + f.name, Msg: "must be an absolute URL"}
		}
	}
	r.Swarm = out
	return nil
}

func positiveInt(raw map[string]json.RawMessage, field string, max int64) (int64, error) {
	b, ok := raw[field]
	if !ok || string(b) == "null" {
		return 0, &FieldError{Code: "missing_field", Field: field, Msg: "is required"}
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&v)
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > max {
		return 0, &FieldError{Code: "invalid_field", Field: field, Msg: "must be a positive integer"}
	}
	return n, nil
}

func str(raw map[string]json.RawMessage, field string, required bool, into *string) error {
	b, ok := raw[field]
	if !ok || string(b) == "null" {
		if required {
			return &FieldError{Code: "missing_field", Field: field, Msg: "is required"}
		}
		return nil
	}
	if err := json.Unmarshal(b, into); err != nil {
		return &FieldError{Code: "invalid_field", Field: field, Msg: "must be a string"}
	}
	*into = strings.TrimSpace(*into)
	if required && *into == "" {
		return &FieldError{Code: "missing_field", Field: field, Msg: "is required"}
	}
	return nil
}

// freeText checks a free-text field that ends up in the job history, the
// status endpoint, operator tools and logs: valid UTF-8 without control or
// formatting characters (newlines forge log lines, bidi overrides disguise
// text) and without markup characters (< > would be HTML wherever the
// history is rendered). It returns the reason, "" when the text is fine.
func freeText(s string) string {
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	for _, r := range s {
		switch {
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			return fmt.Sprintf("must not contain control or formatting characters (found U+%04X)", r)
		case r == '<' || r == '>':
			return "must not contain markup (< or >)"
		}
	}
	return ""
}

// Hash is the request's fingerprint for idempotency: a SHA-256 of its
// canonical form, so formatting differences are the same request and any
// change of meaning is a different one.
func (r Request) Hash() string {
	b, _ := json.Marshal(r) // a struct of plain fields: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// IsFieldError reports whether err is a validation error.
func IsFieldError(err error) (*FieldError, bool) {
	return errors.AsType[*FieldError](err)
}
