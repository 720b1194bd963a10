// Package bedrock is the Amazon Bedrock Converse family of llm.Provider (AWS
// SDK, the function's IAM role), its own package so only binaries that
// import it link the Bedrock SDK.
package bedrock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmw "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/smithy-go"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/llm"
)

func init() {
	llm.Register(llm.Bedrock, func(cfg llm.Config, cred llm.Credentials) (llm.Provider, error) { return New(cfg, cred.AWS) })
}

// ConverseAPI is the part of the Bedrock runtime client Client uses.
type ConverseAPI interface {
	Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
}

// Client speaks Amazon Bedrock Converse. It is safe for concurrent use.
type Client struct {
	cfg llm.Config
	api ConverseAPI
	log *slog.Logger
}

// New returns a Converse client with awsCfg's region and credentials;
// cfg.Endpoint replaces the regional endpoint. The SDK's retries are off:
// the stage's retry policy decides.
func New(cfg llm.Config, awsCfg aws.Config) (*Client, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Endpoint != "" {
		if _, err := llm.ValidateEndpoint(llm.Bedrock, cfg.Endpoint); err != nil {
			return nil, err
		}
	}
	api := bedrockruntime.NewFromConfig(awsCfg, func(o *bedrockruntime.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(strings.TrimRight(cfg.Endpoint, "/"))
		}
		o.Retryer = aws.NopRetryer{}
	})
	return &Client{cfg: cfg, api: api, log: cfg.Logger}, nil
}

// String names the client without anything secret (it holds none).
func (c *Client) String() string {
	return fmt.Sprintf("bedrock.Client{model=%s}", c.cfg.Model)
}

// Complete sends p through Converse and returns the model's answer.
func (c *Client) Complete(ctx context.Context, p llm.Prompt) (llm.Completion, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	maxTokens := cmp.Or(max(p.MaxTokens, 0), c.cfg.MaxTokens)
	in := &bedrockruntime.ConverseInput{
		ModelId: aws.String(c.cfg.Model),
		System:  c.system(p.System),
		Messages: []types.Message{{Role: types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: p.User}}}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(int32(min(maxTokens, 1<<30))), Temperature: aws.Float32(0)},
	}
	start := time.Now()
	out, err := c.api.Converse(ctx, in)
	var comp llm.Completion
	status := http.StatusOK
	if err != nil {
		err = c.classify(ctx, err)
		if e, ok := llm.Details(err); ok {
			status = e.Status
		}
	} else {
		comp, err = c.read(out)
	}
	llm.LogCall(ctx, c.log, llm.Bedrock, c.cfg.Model, p, start, comp, status, err)
	if err != nil {
		return llm.Completion{}, err
	}
	return comp, nil
}

// system is the system prompt (the static part), with a cache point when
// the model id (or inference profile) names a family that supports cache
// points; other models reject them.
func (c *Client) system(text string) []types.SystemContentBlock {
	blocks := []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: text}}
	if m := strings.ToLower(c.cfg.Model); strings.Contains(m, "anthropic.claude") || strings.Contains(m, "amazon.nova") {
		blocks = append(blocks, &types.SystemContentBlockMemberCachePoint{Value: types.CachePointBlock{Type: types.CachePointTypeDefault}})
	}
	return blocks
}

func (c *Client) read(out *bedrockruntime.ConverseOutput) (llm.Completion, error) {
	reqID, _ := awsmw.GetRequestIDMetadata(out.ResultMetadata)
	var text strings.Builder
	if m, ok := out.Output.(*types.ConverseOutputMemberMessage); ok {
		for _, b := range m.Value.Content {
			if t, ok := b.(*types.ContentBlockMemberText); ok {
				text.WriteString(t.Value)
			}
		}
	}
	sr := string(out.StopReason)
	e := &llm.Error{Provider: llm.Bedrock, Status: http.StatusOK, RequestID: reqID, Code: domain.Clip(sr, 64)}
	switch out.StopReason {
	case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
		e.Reason, e.Detail = llm.ReasonContentFilter, "stopped by a Bedrock guardrail or content filter ("+sr+")"
	case types.StopReasonMaxTokens:
		e.Reason, e.Detail = llm.ReasonTruncated, "output cut at maxTokens"
	case types.StopReasonModelContextWindowExceeded:
		e.Reason = llm.ReasonContextLength
	case types.StopReasonToolUse, types.StopReasonMalformedModelOutput, types.StopReasonMalformedToolUse:
		e.Reason, e.Detail = llm.ReasonBadResponse, "unexpected stopReason "+sr
	default:
		if text.Len() == 0 {
			e.Reason, e.Detail = llm.ReasonBadResponse, "no text content block"
		}
	}
	if e.Reason != "" {
		return llm.Completion{RequestID: reqID}, llm.Classed(llm.ClassFor(e.Reason), 0, e)
	}
	comp := llm.Completion{Content: []byte(text.String()), RequestID: reqID, Model: c.cfg.Model, FinishReason: sr}
	if u := out.Usage; u != nil {
		// inputTokens counts only what is neither read from nor written to the cache.
		read, write := int(aws.ToInt32(u.CacheReadInputTokens)), int(aws.ToInt32(u.CacheWriteInputTokens))
		comp.Usage = llm.Usage{InputTokens: int(aws.ToInt32(u.InputTokens)) + read + write, OutputTokens: int(aws.ToInt32(u.OutputTokens)),
			CachedInputTokens: read, CacheWriteInputTokens: write}
	}
	return comp, nil
}

// classify maps a Converse error by its modelled type:
//
//	ThrottlingException, ServiceQuotaExceededException       RATE_LIMITED
//	ModelNotReadyException, ServiceUnavailableException,
//	  InternalServerException, ModelErrorException           UPSTREAM_5XX (transient)
//	ModelTimeoutException                                    NETWORK_TIMEOUT
//	AccessDeniedException                                    AUTH_DENIED (operator: IAM or model access)
//	ValidationException naming the input length              context length: re-chunk smaller
//	other ValidationException, ResourceNotFoundException     SCHEMA_INVALID
//
// The exception message is read only to recognise the context-length case.
func (c *Client) classify(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("llm: request cancelled: %w", context.Cause(ctx))
	}
	e := &llm.Error{Provider: llm.Bedrock}
	if re, ok := errors.AsType[*awshttp.ResponseError](err); ok {
		e.RequestID = domain.Clip(re.ServiceRequestID(), 128)
		e.Status = re.HTTPStatusCode()
	}
	ae, ok := errors.AsType[smithy.APIError](err)
	if !ok {
		return llm.TransportError(ctx, c.cfg.Timeout, err)
	}
	e.Code = domain.Clip(ae.ErrorCode(), 64)
	var invalid *types.ValidationException
	switch {
	case is[*types.ThrottlingException](err), is[*types.ServiceQuotaExceededException](err):
		e.Reason = llm.ReasonRateLimited
	case is[*types.ModelNotReadyException](err), is[*types.ServiceUnavailableException](err),
		is[*types.InternalServerException](err), is[*types.ModelErrorException](err):
		e.Reason = llm.ReasonUpstream
	case is[*types.ModelTimeoutException](err):
		e.Reason = llm.ReasonUpstream
		return llm.Classed(failure.NetworkTimeout, 0, e)
	case is[*types.AccessDeniedException](err):
		e.Reason, e.Detail = llm.ReasonAuth, "the function's IAM role may not invoke this model (or model access is not granted)"
	case errors.As(err, &invalid) && llm.MentionsContextLength(invalid.ErrorMessage()):
		e.Reason = llm.ReasonContextLength
	case e.Status >= 500:
		e.Reason = llm.ReasonUpstream
	default:
		e.Reason = llm.ReasonBadRequest
	}
	return llm.Classed(llm.ClassFor(e.Reason), 0, e)
}

// is reports whether err's chain holds a T.
func is[T error](err error) bool {
	_, ok := errors.AsType[T](err)
	return ok
}
