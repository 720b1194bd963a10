// Package reviewstage is the llm stage's stage.Processor: redacted changeset
// → prompt → LLM → validated ReviewResult artifact. Leases, retries and dead
// letters are the stage runtime's business, not its own.
package reviewstage

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/criticizer/criticizer/shared/artifacts"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/llm"
	"github.com/criticizer/criticizer/shared/redact"
	"github.com/criticizer/criticizer/shared/review"
	"github.com/criticizer/criticizer/shared/store"
)

// TextRedactor scans text for secrets; the review stage uses it as the
// pre-submit guard.
type TextRedactor interface {
	Redact(text string) (string, []redact.Match, error)
}

// Completer is the LLM provider.
type Completer interface {
	Complete(ctx context.Context, p llm.Prompt) (llm.Completion, error)
}

// Review is the llm stage.
type Review struct {
	Redacted *artifacts.Store // reads the redacted changeset, writes the model response and the result
	Guard    TextRedactor
	LLM      Completer
	Parse    review.Options
	Limits   review.PromptLimits
	Log      *slog.Logger
}

// Process reviews the redacted changeset and stores the validated result.
func (r *Review) Process(ctx context.Context, job *store.Job) (store.Result, error) {
	if job.Artifacts.Redacted == "" {
		return store.Result{}, failure.Errorf(failure.InternalBug, "job reached the llm stage without a redacted changeset")
	}
	var cs domain.Changeset
	if err := r.Redacted.GetJSON(ctx, job.Artifacts.Redacted, &cs); err != nil {
		return store.Result{}, err
	}
	prompt, info := r.Limits.Build(cs)
	if info.Truncated() {
		r.Log.WarnContext(ctx, "prompt truncated to fit the budget", "truncated_files", len(info.TruncatedFiles), "omitted_files", len(info.OmittedFiles), "diff_bytes", info.DiffBytes, "original_diff_bytes", info.OriginalDiffBytes)
	}
	// Pre-submit guard: the prompt is built from redacted text only, so a
	// second scan must find nothing. A failure or a match means redaction was
	// bypassed or broken, and the request is blocked.
	_, matches, err := r.Guard.Redact(prompt.System + "\n" + prompt.User)
	if err != nil {
		return store.Result{}, failure.Errorf(failure.PolicyRejected, "pre-submit redaction guard failed; LLM call blocked: %w", err)
	}
	if len(matches) > 0 {
		rules := make([]string, 0, len(matches))
		for _, m := range matches {
			rules = append(rules, m.Rule)
		}
		return store.Result{}, failure.Errorf(failure.PolicyRejected, "prompt still matches %d secret rule(s) %v after redaction; LLM call blocked", len(matches), rules)
	}

	c, err := r.LLM.Complete(ctx, llm.Prompt(prompt))
	if err != nil {
		return store.Result{}, err
	}
	// The model's raw answer is kept (it derives from redacted input only)
	// for debugging dropped findings.
	if err := r.Redacted.PutJSON(ctx, artifacts.Key(job.ID, "llm-response.json"), map[string]any{
		"request_id": c.RequestID, "model": c.Model, "finish_reason": c.FinishReason, "content": string(c.Content),
		"prompt_version": review.PromptVersion, "schema_version": review.SchemaVersion,
	}); err != nil {
		return store.Result{}, err
	}
	result, diags, err := review.Parse(c.Content, cs.ChangedFiles(), r.Parse)
	diags.Log(ctx, r.Log)
	if err != nil {
		return store.Result{}, err
	}
	key := artifacts.Key(job.ID, "review.json")
	if err := r.Redacted.PutJSON(ctx, key, result); err != nil {
		return store.Result{}, err
	}
	n := len(result.Findings)
	return store.Result{Artifacts: store.Artifacts{Result: key}, FindingCount: &n,
		Detail: fmt.Sprintf("findings %d, diagnostics %d", n, len(diags))}, nil
}

// CompleterFunc adapts a function to Completer.
type CompleterFunc func(ctx context.Context, p llm.Prompt) (llm.Completion, error)

// Complete calls f.
func (f CompleterFunc) Complete(ctx context.Context, p llm.Prompt) (llm.Completion, error) {
	return f(ctx, p)
}
