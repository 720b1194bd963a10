package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/llm"
)

// Model checks the model endpoint with the llm stage's client and
// structured-output form, so a refused form shows here, not on the first job.
type Model struct {
	Complete func(ctx context.Context, p llm.Prompt) (llm.Completion, error)
	Provider string
	Model    string
	// Form is the structured-output form sent (json_schema, json_object, or a
	// tool form).
	Form string
	// ContextTokens is the window chunks are planned for, ContextSource where it
	// comes from; 0: unknown.
	ContextTokens int
	ContextSource string
	// Found reports what a detecting client found on the probe's call.
	Found func(ctx context.Context) (llm.Capabilities, bool)
}

// The model checks' names.
const (
	CheckModel        = "model endpoint and structured output"
	CheckModelContext = "model context window"
)

// elsewhere qualifies a network failure: the doctor runs where fetch runs, which
// may not be the llm's or notify's network.
const elsewhere = "the doctor runs in fetch's network: where vpc.allFunctions is false the llm and notify functions run outside the VPC, and a network failure here may not be theirs"

// probe is a one-line review: a short answer, enough to see the form work.
var probe = llm.Prompt{
	System:    "You are a code reviewer. Answer with the JSON review result the schema describes, with no findings.",
	User:      "Pre-flight check: there is no change to review. Answer with an empty findings list.",
	MaxTokens: 256,
}

func (c *Model) checks(ctx context.Context) []Verdict {
	v := c.answer(ctx)
	if v.Status == OK && c.found(ctx) {
		v.Detail += "; the client uses " + c.Form
	}
	if c.ContextTokens <= 0 {
		return []Verdict{v, {Check: CheckModelContext, Status: Warn, Detail: "unknown for " + c.Model,
			Fix: "set llmContextTokens to the model's context window: chunks are planned for a small default until then"}}
	}
	return []Verdict{v, ok(CheckModelContext, "%d tokens for %s (%s)", c.ContextTokens, c.Model, c.ContextSource)}
}

func (c *Model) answer(ctx context.Context) Verdict {
	start := time.Now()
	comp, err := c.Complete(ctx, probe)
	took := time.Since(start).Round(time.Millisecond)
	switch failure.Classify(err) {
	case "":
	case failure.AuthDenied:
		return bad(Fail, CheckModel, err.Error(), "the model endpoint refuses the credential: put a valid {\"api_key\": …} in LLM_SECRET_ID (output LlmSecretArn), or for bedrock enable the model and check the function's role (docs/network-and-iam.md, The LLM provider)")
	case failure.SchemaInvalid, failure.NotFound, failure.InternalBug:
		return bad(Fail, CheckModel, err.Error(), fmt.Sprintf("the endpoint refuses the request the llm stage sends (model %s, structured output %s): check llmEndpoint (a base URL, no path) and llmModel; llmResponseFormat auto (the default) falls back from json_schema to json_object_schema and json_object; a pinned form the server refuses is this error", c.Model, c.Form))
	default:
		return bad(Fail, CheckModel, err.Error(), "check llmEndpoint and that the functions' network reaches it (egress or a VPC endpoint: docs/network-and-iam.md); "+elsewhere)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(comp.Content, &obj) != nil {
		return bad(Warn, CheckModel, fmt.Sprintf("%s answered in %s, but not with a JSON object: the structured-output form %s is not honoured", c.Model, took, c.Form), "choose a model or llmResponseFormat the endpoint honours: answers that are not the schema's JSON dead-letter as SCHEMA_INVALID")
	}
	return ok(CheckModel, "%s (%s) answered in %s with a JSON object (structured output %s; %d input, %d output tokens)",
		c.Model, c.Provider, took, c.Form, comp.Usage.InputTokens, comp.Usage.OutputTokens)
}

// found prefers what a detecting client found to the settings.
func (c *Model) found(ctx context.Context) bool {
	if c.Found == nil {
		return false
	}
	caps, ok := c.Found(ctx)
	if !ok {
		return false
	}
	if caps.ResponseFormat != "" {
		c.Form = "response_format " + caps.ResponseFormat
		if caps.Detected {
			c.Form += " (found on the probe's call)"
		}
	}
	if caps.ContextTokens > 0 {
		c.ContextTokens, c.ContextSource = caps.ContextTokens, "reported by the server: "+caps.ContextSource
	}
	return true
}
