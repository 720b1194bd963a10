package domain

import "encoding/json"

// ReviewMeta is what the llm stage records in ReviewResult.Meta about how the
// changelist was reviewed and what it cost, here so writer (shared/result) and
// readers agree.
type ReviewMeta struct {
	PromptVersion string `json:"prompt_version,omitempty"`
	// Model is the model the review asked (LLM model id); the acceptance
	// report groups outcomes by it.
	Model string `json:"model,omitempty"`
	// ResponseFormat is the structured-output form used (shared/llm
	// Capabilities).
	ResponseFormat string `json:"response_format,omitempty"`
	Chunks         int    `json:"chunks"`
	ModelCalls     int    `json:"model_calls"`
	ReusedChunks   int    `json:"reused_chunks"`
	// FilesTotal files are each reviewed in full, in part (TruncatedFiles) or
	// not at all (SkippedFiles).
	FilesTotal      int             `json:"files_total"`
	FilesReviewed   int             `json:"files_reviewed"`
	SkippedFiles    []SkippedFile   `json:"skipped_files,omitempty"`
	TruncatedFiles  []TruncatedFile `json:"truncated_files,omitempty"`
	DroppedFindings int             `json:"dropped_findings"`
	InputTokens     int             `json:"input_tokens"`
	OutputTokens    int             `json:"output_tokens"`
	// SecretFindings counts the committed secrets the pipeline reported
	// itself, without the model.
	SecretFindings int `json:"secret_findings,omitempty"`
	// OutOfView counts model findings dropped for naming a line the model
	// was not shown (reason line_not_shown).
	OutOfView int `json:"out_of_view,omitempty"`
	// FilteredByRules counts findings below the rules' severity threshold or
	// in a disabled category; HiddenByCap those past the rules' maximum.
	FilteredByRules int `json:"filtered_by_rules,omitempty"`
	HiddenByCap     int `json:"hidden_by_cap,omitempty"`
	// Withheld holds the fingerprints of those filtered and hidden findings:
	// found, not shown. A rerun does not call them resolved.
	Withheld []string `json:"withheld,omitempty"`
	// WithheldAsDismissed counts findings notify withheld as repeatedly
	// dismissed (package outcome); their fingerprints are in Withheld.
	WithheldAsDismissed int `json:"withheld_as_dismissed,omitempty"`
	// WithheldKinds name each such kind, said with how to lift it.
	WithheldKinds []WithheldKind `json:"withheld_kinds,omitempty"`
	// RulesDigest identifies the rules in play: findings carry over only under
	// the same rules.
	RulesDigest string `json:"rules_digest,omitempty"`
	// WithoutModel says why the model was not called (the daily budget spent);
	// the review holds only what is certain.
	WithoutModel string `json:"without_model,omitempty"`
	// Rules names the review rules files applied, and RulesRejected what
	// in them was rejected and why (the defaults applied instead).
	Rules         []string `json:"rules,omitempty"`
	RulesRejected []string `json:"rules_rejected,omitempty"`
	// Of InputTokens, read from the provider's prompt cache and written to it.
	CachedInputTokens     int `json:"cached_input_tokens,omitempty"`
	CacheWriteInputTokens int `json:"cache_write_input_tokens,omitempty"`
	// EstimatedCostUSD is the review's tokens at the model's configured list
	// prices (LLM_PRICES_PER_MTOK); 0 when none are configured.
	EstimatedCostUSD float64 `json:"estimated_cost_usd,omitempty"`
	// CarriedOver counts files unchanged since CarriedFrom whose findings were
	// carried over; they count as reviewed in full.
	CarriedOver int `json:"carried_over,omitempty"`
	CarriedFrom int `json:"carried_from,omitempty"`
	// Interdiffs counts files shown to the model only as their change since
	// CarriedFrom.
	Interdiffs int `json:"interdiffs,omitempty"`
	// Gates holds by finding ID the gate_severity its rules set; the
	// environment's applies to the others.
	Gates map[string]string `json:"gates,omitempty"`
	// SuppressAfter holds by finding ID the rules' dismissal_suppression (0:
	// never withheld); DISMISS_THRESHOLD applies to the others.
	SuppressAfter map[string]int `json:"suppress_after,omitempty"`
}

// SkippedFile is a changed file that was not reviewed, and why (the
// reasons are shared/result's Skip* constants).
type SkippedFile struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
	Bytes  int    `json:"bytes,omitempty"`
}

// TruncatedFile is a file reviewed only in part.
type TruncatedFile struct {
	File          string `json:"file"`
	ReviewedBytes int    `json:"reviewed_bytes"`
	OriginalBytes int    `json:"original_bytes"`
}

// Map renders m for ReviewResult.Meta.
func (m ReviewMeta) Map() map[string]any {
	b, _ := json.Marshal(m) // plain fields always marshal
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// ReadReviewMeta reads the fields ReviewMeta knows from a result's Meta;
// keys it does not know (a model's own meta) are ignored.
func ReadReviewMeta(meta map[string]any) ReviewMeta {
	var m ReviewMeta
	if b, err := json.Marshal(meta); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}
