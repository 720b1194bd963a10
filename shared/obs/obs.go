// Package obs owns what the functions tell operators: structured JSON logs
// (log/slog) carrying correlation ids and masking every secret, and CloudWatch
// Embedded Metric Format lines for metrics.
package obs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Masker replaces known secret values (registered as loaded) in log records.
type Masker struct {
	mu     sync.RWMutex
	values []string
}

// Add registers secret values to mask. Values shorter than 6 characters are
// ignored: masking them would shred ordinary text.
func (m *Masker) Add(values ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range values {
		// Secrets are re-registered on every cache refresh: keep each once.
		if len(v) >= 6 && !slices.Contains(m.values, v) {
			m.values = append(m.values, v)
		}
	}
}

// sensitiveKey matches attribute names whose values are never logged.
var sensitiveKey = regexp.MustCompile(`(?i)(pass(word|wd)?|secret|token|api[_-]?key|authorization|signature|credential|cookie)`)

// Mask is the redaction marker; it never carries any part of the secret.
const Mask = "[MASKED]"

// String masks every registered secret in s.
func (m *Masker) String(s string) string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, v := range m.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Mask)
		}
	}
	return s
}

// addressKey matches attributes holding an e-mail address (PII): logged as a
// stable pseudonym.
var addressKey = regexp.MustCompile(`(?i)^(recipient|rcpt|to|email|address)$`)

// Pseudonym returns a stable, non-reversible stand-in for an address.
func Pseudonym(addr string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(addr))))
	return "rcpt-" + hex.EncodeToString(sum[:6])
}

// Sanitizer vets a log attribute's text after the masker (sanitize.Logs),
// passed to NewLogger rather than installed globally, so no binary forgets it.
type Sanitizer interface {
	Text(string) string
	Error(error) string
}

// vetter is a logger's attribute rewriter: the masker, then the sanitizer.
type vetter struct {
	m *Masker
	s Sanitizer
}

func (v vetter) replaceAttr(groups []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindGroup {
		return a
	}
	if sensitiveKey.MatchString(a.Key) {
		return slog.String(a.Key, Mask)
	}
	if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey) {
		return a
	}
	vet := func(s string) string {
		s = v.m.String(s)
		if v.s != nil {
			s = v.s.Text(s)
		}
		return s
	}
	switch a.Value.Kind() {
	case slog.KindString:
		s := a.Value.String()
		if addressKey.MatchString(a.Key) && strings.Contains(s, "@") {
			return slog.String(a.Key, Pseudonym(s))
		}
		return slog.String(a.Key, vet(s))
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			if v.s != nil {
				return slog.String(a.Key, v.s.Error(err))
			}
			return slog.String(a.Key, v.m.String(err.Error()))
		}
		if st, ok := a.Value.Any().(fmt.Stringer); ok {
			return slog.String(a.Key, vet(st.String()))
		}
		// Slices, maps, structs: vetted as the JSON they are logged as.
		b, err := json.Marshal(a.Value.Any())
		if err != nil {
			return slog.String(a.Key, Mask)
		}
		s := vet(string(b))
		if json.Valid([]byte(s)) {
			return slog.Any(a.Key, json.RawMessage(s))
		}
		return slog.String(a.Key, s)
	}
	return a
}

// DefaultMasker is shared by every logger of the process.
var DefaultMasker = &Masker{}

type ctxKey struct{}

// WithAttrs returns a context whose logs carry the given correlation attrs
// (job_id, trace_id, request_id, message_id, stage).
func WithAttrs(ctx context.Context, attrs ...slog.Attr) context.Context {
	prev, _ := ctx.Value(ctxKey{}).([]slog.Attr)
	merged := append(append([]slog.Attr{}, prev...), attrs...)
	return context.WithValue(ctx, ctxKey{}, merged)
}

type ctxHandler struct{ slog.Handler }

func (h ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	if attrs, ok := ctx.Value(ctxKey{}).([]slog.Attr); ok {
		r.AddAttrs(attrs...)
	}
	return h.Handler.Handle(ctx, r)
}

func (h ctxHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return ctxHandler{h.Handler.WithAttrs(attrs)}
}

func (h ctxHandler) WithGroup(name string) slog.Handler { return ctxHandler{h.Handler.WithGroup(name)} }

// NewLogger returns a JSON logger at level, tagged with the function name,
// masking secrets and passing every string and error attribute through s
// (coldstart.Load refuses a nil s).
func NewLogger(w io.Writer, level, function string, s Sanitizer) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = slog.LevelInfo
	}
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lv, ReplaceAttr: vetter{DefaultMasker, s}.replaceAttr})
	return slog.New(ctxHandler{h}).With("function", function)
}

// Metrics writes CloudWatch Embedded Metric Format records. Lambda ships
// stdout to CloudWatch Logs, which turns these lines into metrics.
type Metrics struct {
	mu        sync.Mutex
	w         io.Writer
	namespace string
	env       string
}

// NewMetrics returns a Metrics writing to w under the Criticizer namespace.
func NewMetrics(w io.Writer, env string) *Metrics {
	if w == nil {
		w = os.Stdout
	}
	return &Metrics{w: w, namespace: "Criticizer", env: env}
}

// Unit names used by the EMF records.
const (
	Count        = "Count"
	Milliseconds = "Milliseconds"
	Percent      = "Percent"
)

// Put emits one metric value with the given dimensions (plus Environment).
func (m *Metrics) Put(name string, value float64, unit string, dims map[string]string) {
	if m == nil {
		return
	}
	keys := []string{"Environment"}
	rec := map[string]any{"Environment": m.env, name: value}
	for k, v := range dims {
		keys = append(keys, k)
		rec[k] = v
	}
	rec["_aws"] = map[string]any{
		"Timestamp": time.Now().UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  m.namespace,
			"Dimensions": [][]string{keys},
			"Metrics":    []any{map[string]string{"Name": name, "Unit": unit}},
		}},
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _ = m.w.Write(append(b, '\n'))
}
