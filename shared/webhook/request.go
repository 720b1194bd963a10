package webhook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// MaxBody is the largest webhook body accepted (256 KiB).
const MaxBody = 256 << 10

// Request is a validated webhook: "review changelist C at version V".
//
// Fields (JSON):
//
//	changelist_id    number or numeric string, required, > 0
//	review_version   number or numeric string, required, > 0; a rerun needs a higher one
//	idempotency_key  string, required, 1–128 of [A-Za-z0-9._:@/-]; the caller's dedupe key
//	shelved          bool, optional: review the shelved files of a pending changelist
//	recipients       []string, optional, ≤ 50 e-mail addresses, added to the author
//	source           string, optional: "p4-trigger", "swarm" or "api" (default "api")
//	requested_by     string, optional, ≤ 128 chars, for the audit history
//
// Helix Swarm (test definitions) and p4 triggers send this same shape; see
// README "Webhook contract" for the templates.
type Request struct {
	ChangelistID   int64    `json:"changelist_id"`
	ReviewVersion  int      `json:"review_version"`
	IdempotencyKey string   `json:"idempotency_key"`
	Shelved        bool     `json:"shelved"`
	Recipients     []string `json:"recipients"`
	Source         string   `json:"source"`
	RequestedBy    string   `json:"requested_by,omitempty"`
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
	known := []string{"changelist_id", "review_version", "idempotency_key", "shelved", "recipients", "source", "requested_by"}
	for k := range raw {
		if !slices.Contains(known, k) {
			return Request{}, &FieldError{Code: "unknown_field", Field: k, Msg: "unknown field"}
		}
	}
	var err error
	if r.ChangelistID, err = positiveInt(raw, "changelist_id", 1<<53); err != nil {
		return Request{}, err
	}
	v, err := positiveInt(raw, "review_version", 1<<31-1)
	if err != nil {
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
	if b, ok := raw["recipients"]; ok {
		if err := json.Unmarshal(b, &r.Recipients); err != nil {
			return Request{}, &FieldError{Code: "invalid_field", Field: "recipients", Msg: "must be an array of e-mail addresses"}
		}
	}
	if len(r.Recipients) > 50 {
		return Request{}, &FieldError{Code: "invalid_field", Field: "recipients", Msg: "at most 50 recipients"}
	}
	for i, a := range r.Recipients {
		addr, err := mail.ParseAddress(a)
		if err != nil || addr.Name != "" || addr.Address != strings.TrimSpace(a) {
			return Request{}, &FieldError{Code: "invalid_field", Field: fmt.Sprintf("recipients[%d]", i), Msg: "not a bare e-mail address"}
		}
		r.Recipients[i] = strings.ToLower(addr.Address)
	}
	slices.Sort(r.Recipients)
	r.Recipients = slices.Compact(r.Recipients)
	if err := str(raw, "source", false, &r.Source); err != nil {
		return Request{}, err
	}
	if r.Source == "" {
		r.Source = "api"
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
	return r, nil
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
	var fe *FieldError
	ok := errors.As(err, &fe)
	return fe, ok
}
