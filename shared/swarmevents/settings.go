package swarmevents

import (
	"fmt"
	"net/textproto"
	"strings"

	"github.com/criticizer/criticizer/shared/config"
	"github.com/criticizer/criticizer/shared/settings"
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
	s := Settings{SecretID: r.Optional(settings.SwarmEventsSecretID)}
	if s.SecretID == "" {
		return s
	}
	s.Scheme = HMAC{
		SignatureHeader: headerName(r, settings.SwarmEventsSignatureHeader),
		DeliveryHeader:  headerName(r, settings.SwarmEventsDeliveryHeader),
		EventHeader:     headerName(r, settings.SwarmEventsEventHeader),
		TimestampHeader: headerName(r, settings.SwarmEventsTimestampHeader),
		Tolerance:       r.Seconds(settings.SwarmEventsToleranceSeconds),
		Skew:            r.Seconds(settings.ClockSkewSeconds),
	}
	return s
}

// headerName reads an HTTP header name: a token (RFC 9110 §5.1), or empty
// where its declared default is (no timestamp check).
func headerName(r *config.Reader, key settings.TextVar) string {
	v := r.Optional(key) // its declared default when unset
	if strings.ContainsFunc(v, func(c rune) bool { return c <= ' ' || c > '~' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) }) {
		r.Fail(fmt.Errorf("%s=%q: want an HTTP header name", key.Name, v))
		return ""
	}
	return textproto.CanonicalMIMEHeaderKey(v)
}
