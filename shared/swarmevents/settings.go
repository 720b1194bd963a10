package swarmevents

import (
	"fmt"
	"net/textproto"
	"strings"

	"github.com/criticizer/criticizer/shared/config"
)

// Settings turn the receiver on and say how P4 Code Review signs.
type Settings struct {
	// SecretID names the shared secret P4 Code Review signs with
	// (SWARM_EVENTS_SECRET_ID, set by the stack when swarmEvents is on);
	// empty: the receiver is off and its route answers 404.
	SecretID string
	Scheme   HMAC
}

// SettingsFromEnv reads the receiver's settings; the header names are read
// only when it is on. Problems are collected in r.
func SettingsFromEnv(r *config.Reader) Settings {
	s := Settings{SecretID: r.Optional("SWARM_EVENTS_SECRET_ID", "")}
	if s.SecretID == "" {
		return s
	}
	s.Scheme = HMAC{
		SignatureHeader: headerName(r, "SWARM_EVENTS_SIGNATURE_HEADER", DefaultSignatureHeader),
		DeliveryHeader:  headerName(r, "SWARM_EVENTS_DELIVERY_HEADER", DefaultDeliveryHeader),
		EventHeader:     headerName(r, "SWARM_EVENTS_EVENT_HEADER", DefaultEventHeader),
		TimestampHeader: headerName(r, "SWARM_EVENTS_TIMESTAMP_HEADER", ""),
		Tolerance:       r.Seconds("SWARM_EVENTS_TOLERANCE_SECONDS", 300, 30, 3600),
	}
	return s
}

// headerName reads an HTTP header name: a token (RFC 9110 §5.1), or empty
// where def is.
func headerName(r *config.Reader, key, def string) string {
	v := strings.TrimSpace(r.Optional(key, def))
	if v == "" && def == "" {
		return ""
	}
	if v == "" || strings.ContainsFunc(v, func(c rune) bool { return c <= ' ' || c > '~' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) }) {
		r.Fail(fmt.Errorf("%s=%q: want an HTTP header name", key, v))
		return def
	}
	return textproto.CanonicalMIMEHeaderKey(v)
}
