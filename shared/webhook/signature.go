package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/criticizer/criticizer/shared/swarmevents"
)

// Signature headers. A caller signs every request (POST and GET) with
// HMAC-SHA256 over "v1:<timestamp>:<METHOD>:<path>:<raw body>", hex-encoded in
// X-Criticizer-Signature as "v1=<hex>". Binding method and path stops a
// signature for one endpoint being replayed against another; the timestamp
// bounds replays in time.
const (
	HeaderTimestamp = "X-Criticizer-Timestamp"
	HeaderSignature = "X-Criticizer-Signature"
	sigPrefix       = "v1="
)

// Sign returns the signature header value for a request.
func Sign(key []byte, ts int64, method, path string, body []byte) string {
	return sigPrefix + hex.EncodeToString(mac(key, ts, method, path, body))
}

func mac(key []byte, ts int64, method, path string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("v1:" + strconv.FormatInt(ts, 10) + ":" + strings.ToUpper(method) + ":" + path + ":"))
	h.Write(body)
	return h.Sum(nil)
}

// Reasons a signature check fails; each maps to a 401 with this code, the
// same codes a Swarm event delivery is refused with (one home: swarmevents).
var (
	ErrMissingSignature = swarmevents.ErrMissingSignature
	ErrBadTimestamp     = swarmevents.ErrBadTimestamp
	ErrStaleTimestamp   = swarmevents.ErrStaleTimestamp
	ErrBadSignature     = swarmevents.ErrBadSignature
)

// Verify checks a request's signature against every key given (the current
// and previous secret versions, so rotation needs no downtime) and its
// timestamp against the replay window.
func Verify(keys [][]byte, tsHeader, sigHeader, method, path string, body []byte, now time.Time, window time.Duration) error {
	if tsHeader == "" || sigHeader == "" {
		return ErrMissingSignature
	}
	ts, err := strconv.ParseInt(strings.TrimSpace(tsHeader), 10, 64)
	if err != nil || ts <= 0 {
		return ErrBadTimestamp
	}
	if d := now.Sub(time.Unix(ts, 0)); d > window || d < -window {
		return ErrStaleTimestamp
	}
	got, ok := strings.CutPrefix(strings.TrimSpace(sigHeader), sigPrefix)
	if !ok {
		return ErrBadSignature
	}
	raw, err := hex.DecodeString(got)
	if err != nil || len(raw) != sha256.Size {
		return ErrBadSignature
	}
	for _, k := range keys {
		if len(k) > 0 && hmac.Equal(raw, mac(k, ts, method, path, body)) {
			return nil
		}
	}
	return ErrBadSignature
}
