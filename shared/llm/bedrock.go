package llm

import (
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

	"github.com/criticizer/criticizer/shared/failure"
)

// ConverseAPI is the part of the Bedrock runtime client BedrockClient uses.
type ConverseAPI interface {
	Converse(ctx context.Context, in *bedrockruntime.ConverseInput, optFns ...func(*bedrockruntime.Options)) (*bedrockruntime.ConverseOutput, error)
}

// BedrockClient speaks Amazon Bedrock Converse through the AWS SDK: SigV4
// with the function's IAM role, no API key. It is safe for concurrent use.
type BedrockClient struct {
	cfg Config
	api ConverseAPI
	log *slog.Logger
}

// NewBedrock returns a Bedrock Converse client using awsCfg's region and
// credentials. cfg.Endpoint, when set, replaces the regional endpoint (a VPC
// endpoint, or the local stand-in). The SDK's own retries are off: the stage's
// retry policy decides, with the class this client returns.
func NewBedrock(cfg Config, awsCfg aws.Config) (*BedrockClient, error) {
	if cfg.Timeout <= 0 {
		return nil, failure.Errorf(failure.InternalBug, "llm: config: Timeout must be positive")
	}
	if cfg.Model == "" {
		return nil, failure.Errorf(failure.InternalBug, "llm: config: Model (Bedrock model id) is empty")
	}
	if cfg.Endpoint != "" {
		if _, err := ValidateEndpoint(Bedrock, cfg.Endpoint); err != nil {
			return nil, err
		}
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.Default()
	}
	api := bedrockruntime.NewFromConfig(awsCfg, func(o *bedrockruntime.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(strings.TrimRight(cfg.Endpoint, "/"))
		}
		if cfg.HTTPClient != nil {
			o.HTTPClient = cfg.HTTPClient
		}
		o.Retryer = aws.NopRetryer{}
	})
	return &BedrockClient{cfg: cfg, api: api, log: lg}, nil
}

// NewBedrockWithAPI is NewBedrock over a given Converse implementation (tests).
func NewBedrockWithAPI(cfg Config, api ConverseAPI) *BedrockClient {
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	lg := cfg.Logger
	if lg == nil {
		lg = slog.Default()
	}
	return &BedrockClient{cfg: cfg, api: api, log: lg}
}

// String names the client without anything secret (it holds none).
func (c *BedrockClient) String() string {
	return fmt.Sprintf("llm.BedrockClient{model=%s}", c.cfg.Model)
}

// Complete sends p through Converse and returns the model's answer.
func (c *BedrockClient) Complete(ctx context.Context, p Prompt) (Completion, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	maxTokens := c.cfg.MaxTokens
	if p.MaxTokens > 0 {
		maxTokens = p.MaxTokens
	}
	in := &bedrockruntime.ConverseInput{
		ModelId: aws.String(c.cfg.Model),
		System:  []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: p.System}},
		Messages: []types.Message{{Role: types.ConversationRoleUser,
			Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: p.User}}}},
		InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(int32(min(maxTokens, 1<<30))), Temperature: aws.Float32(0)},
	}
	start := time.Now()
	out, err := c.api.Converse(ctx, in)
	var comp Completion
	status := http.StatusOK
	if err != nil {
		err = c.classify(ctx, err)
		if e, ok := Details(err); ok {
			status = e.Status
		}
	} else {
		comp, err = c.read(out)
	}
	logCall(ctx, c.log, Bedrock, c.cfg.Model, p, start, comp, status, err)
	if err != nil {
		return Completion{}, err
	}
	return comp, nil
}

func (c *BedrockClient) read(out *bedrockruntime.ConverseOutput) (Completion, error) {
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
	e := &Error{Provider: Bedrock, Status: http.StatusOK, RequestID: reqID, Code: clip(sr, 64)}
	switch out.StopReason {
	case types.StopReasonGuardrailIntervened, types.StopReasonContentFiltered:
		e.Reason, e.Detail = ReasonContentFilter, "stopped by a Bedrock guardrail or content filter ("+sr+")"
		return Completion{RequestID: reqID}, fail(failure.PolicyRejected, 0, e)
	case types.StopReasonMaxTokens:
		e.Reason, e.Detail = ReasonTruncated, "output cut at maxTokens"
		return Completion{RequestID: reqID}, fail(failure.SchemaInvalid, 0, e)
	case types.StopReasonModelContextWindowExceeded:
		e.Reason = ReasonContextLength
		return Completion{RequestID: reqID}, fail(failure.SchemaInvalid, 0, e)
	case types.StopReasonToolUse, types.StopReasonMalformedModelOutput, types.StopReasonMalformedToolUse:
		e.Reason, e.Detail = ReasonBadResponse, "unexpected stopReason "+sr
		return Completion{RequestID: reqID}, fail(failure.SchemaInvalid, 0, e)
	}
	if text.Len() == 0 {
		e.Reason, e.Detail = ReasonBadResponse, "no text content block"
		return Completion{RequestID: reqID}, fail(failure.SchemaInvalid, 0, e)
	}
	comp := Completion{Content: []byte(text.String()), RequestID: reqID, Model: c.cfg.Model, FinishReason: sr}
	if u := out.Usage; u != nil {
		comp.Usage = Usage{InputTokens: int(aws.ToInt32(u.InputTokens)), OutputTokens: int(aws.ToInt32(u.OutputTokens))}
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
func (c *BedrockClient) classify(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return fmt.Errorf("llm: request cancelled: %w", context.Cause(ctx))
	}
	e := &Error{Provider: Bedrock}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		e.RequestID = clip(re.ServiceRequestID(), 128)
		e.Status = re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return transportError(ctx, c.cfg.Timeout, err)
	}
	e.Code = clip(ae.ErrorCode(), 64)
	var (
		throttle *types.ThrottlingException
		quota    *types.ServiceQuotaExceededException
		notReady *types.ModelNotReadyException
		unavail  *types.ServiceUnavailableException
		internal *types.InternalServerException
		modelErr *types.ModelErrorException
		timeout  *types.ModelTimeoutException
		denied   *types.AccessDeniedException
		invalid  *types.ValidationException
	)
	switch {
	case errors.As(err, &throttle), errors.As(err, &quota):
		e.Reason = ReasonRateLimited
	case errors.As(err, &notReady), errors.As(err, &unavail), errors.As(err, &internal), errors.As(err, &modelErr):
		e.Reason = ReasonUpstream
	case errors.As(err, &timeout):
		e.Reason = ReasonUpstream
		return fail(failure.NetworkTimeout, 0, e)
	case errors.As(err, &denied):
		e.Reason, e.Detail = ReasonAuth, "the function's IAM role may not invoke this model (or model access is not granted)"
	case errors.As(err, &invalid) && mentionsContextLength(invalid.ErrorMessage()):
		e.Reason = ReasonContextLength
	case e.Status >= 500:
		e.Reason = ReasonUpstream
	default:
		e.Reason = ReasonBadRequest
	}
	return fail(classFor(e.Reason), 0, e)
}
