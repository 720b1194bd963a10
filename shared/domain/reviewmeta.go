package domain

import "encoding/json"

// ReviewMeta is what the review stage records in ReviewResult.Meta about how
// the changelist was reviewed: what was not reviewed and why, what the
// models cost. The e-mail and the job record read it; it lives here so the
// writer (shared/review) and the readers agree on one shape.
type ReviewMeta struct {
	PromptVersion   string          `json:"prompt_version,omitempty"`
	Chunks          int             `json:"chunks"`
	ModelCalls      int             `json:"model_calls"`
	ReusedChunks    int             `json:"reused_chunks"`
	FilesReviewed   int             `json:"files_reviewed"`
	SkippedFiles    []SkippedFile   `json:"skipped_files,omitempty"`
	TruncatedFiles  []TruncatedFile `json:"truncated_files,omitempty"`
	DroppedFindings int             `json:"dropped_findings"`
	InputTokens     int             `json:"input_tokens"`
	OutputTokens    int             `json:"output_tokens"`
	// Of InputTokens, read from the provider's prompt cache and written to it.
	CachedInputTokens     int `json:"cached_input_tokens,omitempty"`
	CacheWriteInputTokens int `json:"cache_write_input_tokens,omitempty"`
}

// SkippedFile is a changed file that was not reviewed, and why
// (no_textual_diff, over_file_limit, over_byte_limit, too_large).
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
