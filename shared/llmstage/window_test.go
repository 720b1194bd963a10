package llmstage_test

import (
	"context"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/llmstage"
	"github.com/criticizer/criticizer/shared/result"
)

// A self-hosted model with a 2,048-token window (Ollama's default,
// llama.cpp's --n_ctx 2048): a changelist larger than the window is
// reviewed in chunks whose prompt and max_tokens fit it together, every
// file reviewed, and the job names the response format it was asked in.
func TestChunkingUnderASmallWindow(t *testing.T) {
	const window, bpt = 2048, 3.0
	h := newHarness(t, func(s *llmstage.LLM) {
		s.Budget = result.Budget{ContextTokens: window, BytesPerToken: bpt, OutputTokens: 4096}
	})
	cs := bigChangeset(60) // about 60 × 250 bytes of prompt: several windows' worth
	res, err := h.stage.Process(context.Background(), h.job(t, "j-window", cs))
	if err != nil {
		t.Fatal(err)
	}
	reqs := h.standin.Requests()
	if len(reqs) < 3 {
		t.Fatalf("%d model calls for a changelist of several windows, want it in chunks", len(reqs))
	}
	for i, r := range reqs {
		bytes := 0
		for _, m := range r.Messages {
			bytes += len(m.Content)
		}
		promptTokens := int(float64(bytes) / bpt)
		if r.MaxTokens <= 0 || promptTokens+r.MaxTokens > window {
			t.Errorf("call %d: ~%d prompt tokens + max_tokens %d do not fit the %d-token window", i, promptTokens, r.MaxTokens, window)
		}
		if r.MaxTokens < result.MinOutputTokens {
			t.Errorf("call %d: max_tokens %d, below the least a review needs", i, r.MaxTokens)
		}
	}
	reviewed := reviewedFiles(t, reqs)
	for _, f := range cs.Files {
		if f.Diff != "" && reviewed[f.DepotPath] != 1 {
			t.Errorf("%s reviewed %d times, want once", f.DepotPath, reviewed[f.DepotPath])
		}
	}
	if res.Review == nil || res.Review.SkippedFiles != 0 || res.Review.TruncatedFiles != 0 || res.Review.FilesReviewed != len(cs.Files) {
		t.Errorf("review stats %+v: want every file reviewed in full", res.Review)
	}
	if res.Review.ResponseFormat != "json_schema" {
		t.Errorf("response format %q in the job's stats, want json_schema (the stand-in takes it)", res.Review.ResponseFormat)
	}
	if !strings.Contains(res.Detail, "chunks") {
		t.Errorf("detail %q", res.Detail)
	}
}
