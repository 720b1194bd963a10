// Package page is the job page itself (shared/jobpage mints and checks its
// links): GET /view/{id}/{token} answered with the job's state, coverage,
// findings as stored after redaction and deliveries, every value escaped
// (html.go), under a strict Content-Security-Policy, and 404 with a
// security event for anything it cannot prove. Only the jobpage function
// links it.
package page

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/jobpage"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outcome"
)

// Results reads the review result the llm stage stored in the redacted
// bucket (artifacts.Store over it).
type Results interface {
	GetJSON(ctx context.Context, key string, v any) error
}

// Deliveries lists a job's delivery rows (outbox.Outbox): its e-mails and
// the comments it posted on its Swarm review.
type Deliveries interface {
	JobRows(ctx context.Context, j *job.Job) (emails, comments []outbox.Row, err error)
}

// Outcomes reads what reviewers did with the findings of a Swarm review,
// or of a changelist told by e-mail only (outcome.Store).
type Outcomes interface {
	Review(ctx context.Context, review int64) ([]outcome.Record, error)
	EmailOnlyRecords(ctx context.Context, changelist int64) ([]outcome.Record, error)
}

// Handler serves GET /view/{id}/{token}.
type Handler struct {
	Key        *jobpage.Key
	Jobs       job.Getter
	Results    Results
	Deliveries Deliveries
	Outcomes   Outcomes // nil: no acceptance section
	// Dismissals is the environment's noise filter (outcome.PolicyFromEnv).
	Dismissals outcome.Policy
	Log        *slog.Logger
	Metrics    *obs.Metrics // JobPageResponses by Status; nil emits none
	Now        job.Clock
}

// Headers every answer carries: no caching anywhere (the link is a
// credential; a shared cache must not keep the page), no referrer (the URL
// would leak to any site the page linked to), no MIME sniffing, no framing.
func headers(contentType string) map[string]string {
	return map[string]string{
		"Content-Type":            contentType,
		"Content-Security-Policy": CSP,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
		"X-Frame-Options":         "DENY",
	}
}

// notFound is the one answer to anything the page cannot prove: a wrong
// token, an unknown or expired job, a malformed path. It says nothing about
// whether the job exists.
func notFound() events.APIGatewayProxyResponse {
	return events.APIGatewayProxyResponse{StatusCode: http.StatusNotFound, Headers: headers("text/plain; charset=utf-8"), Body: "not found\n"}
}

// Handle is the Lambda handler for the API Gateway proxy integration.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	resp := h.handle(ctx, req)
	h.Metrics.Put("JobPageResponses", 1, obs.Count, map[string]string{"Status": http.StatusText(resp.StatusCode)})
	return resp, nil
}

func (h *Handler) handle(ctx context.Context, req events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	ctx = obs.WithAttrs(ctx, slog.String("request_id", req.RequestContext.RequestID))
	id, token := pathParams(req)
	if req.HTTPMethod != http.MethodGet && req.HTTPMethod != http.MethodHead {
		r := notFound()
		r.StatusCode = http.StatusMethodNotAllowed
		r.Headers["Allow"] = "GET, HEAD"
		r.Body = "method not allowed\n"
		return r
	}
	if !job.ValidID(id) {
		return h.denied(ctx, req, "malformed_job_id", "")
	}
	ctx = obs.WithAttrs(ctx, slog.String("job_id", id))
	ok, err := h.verify(ctx, id, token)
	if err != nil {
		h.Log.ErrorContext(ctx, "reading the job page key failed", "err", err, "error_class", failure.Classify(err))
		return unavailable()
	}
	if !ok {
		return h.denied(ctx, req, "invalid_token", id)
	}
	j, err := h.Jobs.Get(ctx, id)
	if errors.Is(err, job.ErrNotFound) {
		return h.denied(ctx, req, "job_not_found", id)
	}
	if err != nil {
		h.Log.ErrorContext(ctx, "reading the job failed", "err", err, "error_class", failure.Classify(err))
		return unavailable()
	}
	// DynamoDB deletes expired items lazily (up to days late): the page ends
	// at the job's TTL, not at the deletion.
	if j.ExpiresAt > 0 && h.Now.Now().Unix() >= j.ExpiresAt {
		return h.denied(ctx, req, "job_expired", id)
	}
	page := Page{Job: j}
	if j.Artifacts.Result != "" {
		var r domain.ReviewResult
		switch err := h.Results.GetJSON(ctx, j.Artifacts.Result, &r); {
		case failure.Classify(err) == failure.NotFound:
			// Expired with the redacted artifacts: the job's own data still shows.
			h.Log.WarnContext(ctx, "job page: the review result is gone", "error_class", failure.NotFound)
		case err != nil:
			h.Log.ErrorContext(ctx, "reading the review result failed", "err", err, "error_class", failure.Classify(err))
			return unavailable()
		default:
			page.Result = &r
		}
	}
	if h.Deliveries != nil {
		emails, comments, err := h.Deliveries.JobRows(ctx, j)
		if err != nil {
			h.Log.ErrorContext(ctx, "listing the deliveries failed", "err", err, "error_class", failure.Classify(err))
			return unavailable()
		}
		page.Deliveries, page.Comments = emails, comments
	}
	if h.Outcomes != nil {
		recs, err := h.outcomes(ctx, j)
		if err != nil {
			h.Log.ErrorContext(ctx, "reading the review's outcomes failed", "err", err, "error_class", failure.Classify(err))
			return unavailable()
		}
		page.Outcomes, page.OutcomesRead, page.Dismissals = recs, true, h.Dismissals
	}
	var b bytes.Buffer
	if err := Render(&b, page); err != nil {
		h.Log.ErrorContext(ctx, "rendering the job page failed", "err", err)
		return unavailable()
	}
	h.Log.InfoContext(ctx, "job page served", "state", j.State)
	resp := events.APIGatewayProxyResponse{StatusCode: http.StatusOK, Headers: headers("text/html; charset=utf-8"), Body: b.String()}
	if req.HTTPMethod == http.MethodHead {
		resp.Body = ""
	}
	return resp
}

// outcomes are the records of what reviewers did with the findings of the
// job's Swarm review (every version's), or, with no review, of its
// changelist's e-mail-only findings: what the page's reader was sent.
func (h *Handler) outcomes(ctx context.Context, j *job.Job) ([]outcome.Record, error) {
	if j.Swarm != nil && j.Swarm.Review > 0 {
		return h.Outcomes.Review(ctx, j.Swarm.Review)
	}
	return h.Outcomes.EmailOnlyRecords(ctx, j.Changelist)
}

// verify checks token against the current key, re-reading the key once
// (rate-limited) on a mismatch: the secret may have been rotated since this
// environment cached it, and a link minted with the new key must work.
func (h *Handler) verify(ctx context.Context, id, token string) (bool, error) {
	key, _, err := h.Key.Current(ctx, false)
	if err != nil {
		return false, err
	}
	if jobpage.Valid(key, id, token) {
		return true, nil
	}
	key, refreshed, err := h.Key.Current(ctx, true)
	if err != nil || !refreshed {
		return false, err
	}
	return jobpage.Valid(key, id, token), nil
}

// denied answers 404 and records a security event: who asked (source IP,
// user agent) and why, never the token.
func (h *Handler) denied(ctx context.Context, req events.APIGatewayProxyRequest, reason, id string) events.APIGatewayProxyResponse {
	attrs := []any{"security_event", "jobpage_denied", "reason", reason, "source_ip", req.RequestContext.Identity.SourceIP,
		"user_agent", domain.Clip(req.RequestContext.Identity.UserAgent, 200)}
	if id != "" {
		attrs = append(attrs, "job_id", id)
	}
	h.Log.WarnContext(ctx, "job page request denied", attrs...)
	return notFound()
}

func unavailable() events.APIGatewayProxyResponse {
	r := events.APIGatewayProxyResponse{StatusCode: http.StatusServiceUnavailable, Headers: headers("text/plain; charset=utf-8"), Body: "temporarily unavailable; try again\n"}
	r.Headers["Retry-After"] = "2"
	return r
}

// pathParams returns the job id and token of /view/{id}/{token}, from the
// route's parameters or, without them, from the path's last two segments.
func pathParams(req events.APIGatewayProxyRequest) (id, token string) {
	id, token = req.PathParameters["id"], req.PathParameters["token"]
	if id != "" || token != "" {
		return id, token
	}
	rest := strings.Trim(req.Path, "/")
	i := strings.LastIndex(rest, "/")
	if i < 0 {
		return "", ""
	}
	token, rest = rest[i+1:], rest[:i]
	return rest[strings.LastIndex(rest, "/")+1:], token
}
