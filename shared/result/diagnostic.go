package result

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
)

// Diagnostic kinds: the first three rule RC-3 requires.
const (
	KindCoercion       = "coercion_applied"
	KindFindingDropped = "finding_dropped"
	KindRejected       = "response_rejected"
	// KindFieldDropped: an unknown key removed under a newer compatible minor.
	KindFieldDropped = "field_dropped"
	// KindWarning is a top-level warning that does not fail the review.
	KindWarning = "warning"
	// KindFindingMerged: two findings with one fingerprint kept as one (Merge).
	KindFindingMerged = "finding_merged"
)

// Reason codes: the set rule RC-3 names plus the extensions noted.
const (
	ReasonInvalidJSON          = "invalid_json"
	ReasonSchemaMismatch       = "schema_mismatch"
	ReasonMissingRequiredField = "missing_required_field"
	ReasonInvalidEnumValue     = "invalid_enum_value"
	ReasonInvalidLineRange     = "invalid_line_range"
	ReasonFileNotInChanged     = "file_not_in_changed_files"
	ReasonIncompatibleVersion  = "incompatible_version"
	ReasonAllFindingsDropped   = "all_findings_dropped"
	ReasonResponseTooLarge     = "response_too_large" // extension: raw bytes over MaxResponseBytes
	ReasonUnknownField         = "unknown_field"      // extension: see KindFieldDropped

	// Coercion reasons say which safe normalization was applied.
	ReasonTrimmed        = "trimmed_whitespace"
	ReasonPathSeparator  = "normalized_path_separator"
	ReasonIntegralString = "integral_string_to_integer"
	ReasonIntegralNumber = "integral_number_canonicalized" // e.g. 12.0 -> 12
	ReasonPathMatched    = "path_reconciled"               // finding path matched to (rewritten as) its changed_files entry; the logged value keeps the spec's "file-path reconciliation" (RC-5)

	// Merge's reasons; the fingerprint is a finding's one identity (RC-11).
	ReasonDuplicateFinding  = "duplicate_finding"
	ReasonFindingIDReplaced = "finding_id_replaced"
)

// Diagnostic is one machine-readable parser event, safe to log: Old and New
// hold a length and short hash instead of the model's free text.
type Diagnostic struct {
	Kind      string `json:"kind"`
	Reason    string `json:"reason"`
	FindingID string `json:"finding_id,omitempty"`
	Index     int    `json:"index"` // the finding's position in findings, -1 for the top level.
	Field     string `json:"field,omitempty"`
	Old       string `json:"old,omitempty"`
	New       string `json:"new,omitempty"`
	File      string `json:"file,omitempty"`
	Line      int    `json:"line,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

// Level is the log level the diagnostic is worth.
func (d Diagnostic) Level() slog.Level {
	switch d.Kind {
	case KindRejected:
		return slog.LevelError
	case KindFindingDropped, KindWarning:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// LogValue renders d as a group of its non-empty fields.
func (d Diagnostic) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("kind", d.Kind), slog.String("reason", d.Reason)}
	add := func(k, v string) {
		if v != "" {
			attrs = append(attrs, slog.String(k, v))
		}
	}
	add("finding_id", d.FindingID)
	if d.Index >= 0 {
		attrs = append(attrs, slog.Int("index", d.Index))
	}
	add("field", d.Field)
	add("old", d.Old)
	add("new", d.New)
	add("file", d.File)
	if d.Line > 0 {
		attrs = append(attrs, slog.Int("line", d.Line))
	}
	add("detail", d.Detail)
	return slog.GroupValue(attrs...)
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%s/%s index=%d id=%q field=%q file=%q line=%d %s",
		d.Kind, d.Reason, d.Index, d.FindingID, d.Field, d.File, d.Line, d.Detail)
}

// Diagnostics is the ordered list Parse produced.
type Diagnostics []Diagnostic

// Log writes one record per diagnostic to l (slog.Default when nil).
func (ds Diagnostics) Log(ctx context.Context, l *slog.Logger) {
	l = cmp.Or(l, slog.Default())
	for _, d := range ds {
		l.LogAttrs(ctx, d.Level(), "review diagnostic", slog.Any("diagnostic", d))
	}
}

// Counts tallies diagnostics by "kind/reason", the shape metrics want.
func (ds Diagnostics) Counts() map[string]int {
	out := make(map[string]int)
	for _, d := range ds {
		out[d.Kind+"/"+d.Reason]++
	}
	return out
}

// Summary renders the counts as "kind/reason n" in sorted order, for a
// job's history; "" when there are none.
func (ds Diagnostics) Summary() string {
	counts := ds.Counts()
	keys := slices.Sorted(maps.Keys(counts))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, counts[k])
	}
	return strings.Join(parts, ", ")
}

// RejectError is why a response was rejected, wrapped by Parse in a
// failure.SchemaInvalid error.
type RejectError struct {
	Reason string
	Field  string
	Detail string
}

func (e *RejectError) Error() string {
	s := "review response rejected: " + e.Reason
	if e.Field != "" {
		s += " (field " + e.Field + ")"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}
