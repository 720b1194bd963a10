// Package webhook owns Criticizer's front door: the HTTP contract of
// POST /webhooks/changelist and GET /jobs/{id} behind API Gateway, request
// authentication (HMAC with rotation overlap and a replay window for triggers
// and API callers; a bearer token, with the same overlap, for Helix Swarm,
// which can send only static headers), request validation, and idempotent
// job creation with saved responses.
//
// Idempotency (Powertools' semantics, its gap closed): the job, its
// idempotency record and the saved response are written in one
// transaction, so there is no "in progress" window. A duplicate key with the
// same payload (by hash, on every path) gets the saved response byte for
// byte, with a different one 422; a concurrent duplicate loses the
// transaction race and reads the saved response, or retries on a conflict.
package webhook

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/criticizer/criticizer/shared/backoff"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/obs"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/recipients"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/swarmevents"
)

// Keys returns the HMAC keys that verify now: the current secret version,
// then the previous one during a rotation; fresh bypasses any cache (after
// a mismatch, in case a rotation just happened).
type Keys func(ctx context.Context, fresh bool) ([][]byte, error)

// Enqueuer sends a job's first stage message.
type Enqueuer interface {
	Send(ctx context.Context, e envelope.Envelope) error
}

// Jobs is the part of the store the webhook uses.
type Jobs interface {
	Create(ctx context.Context, j *job.Job, idem *store.Idempotency) error
	job.Getter
}

// Deliveries lists a job's outbox rows for the status endpoint.
type Deliveries interface {
	List(ctx context.Context, changelist int64, version int) ([]outbox.Row, error)
}

// ReviewReader reads a Swarm review's versions (swarm.Client.GetReview).
type ReviewReader interface {
	GetReview(ctx context.Context, id int64) (swarm.Review, error)
}

// Handler serves the webhook API.
type Handler struct {
	Jobs       Jobs
	Deliveries Deliveries
	Queue      Enqueuer
	Keys       Keys
	// SwarmTokens returns the bearer tokens Helix Swarm may present (current,
	// then previous during a rotation); nil turns bearer authentication off.
	SwarmTokens Keys
	// SwarmURL is the Swarm server's base URL: a test run's callbacks are
	// made on it, whatever origin Swarm put on them (swarm.RunCallbacks).
	SwarmURL string
	// Recipients is the recipient policy (recipients.Load): a request naming
	// an address outside it, or more than its maximum, is refused with 422.
	// nil checks nothing (unit tests only).
	Recipients *recipients.Policy
	// Reviews reads a Swarm review (swarm.Client) to hold a run to it
	// (checkReview); nil (no SWARM_API_SECRET_ID, or a private Swarm) leaves
	// the check to the fetch stage, which makes it in any case.
	Reviews ReviewReader
	// JobPage returns a job's page link (jobpage.Links): a full URL, or a
	// path (/view/…) on the API address the caller used; nil (no page)
	// links a Swarm run to GET /jobs/{id}.
	JobPage      func(ctx context.Context, jobID string) (string, error)
	Log          *slog.Logger
	Metrics      *obs.Metrics  // WebhookResponses by Route and Status; nil emits none
	ReplayWindow time.Duration // accepted clock difference of signed timestamps
	SweepAfter   time.Duration // when the sweeper enqueues a job whose first message was lost
	Now          job.Clock     // the system clock when nil
	// SwarmEvents receives P4 Code Review's signed webhooks on POST
	// /webhooks/swarm-events (package swarmevents); nil (no
	// SWARM_EVENTS_SECRET_ID) answers that route 404.
	SwarmEvents *swarmevents.Receiver
}

func (h *Handler) now() time.Time { return h.Now.Now() }

// Handle is the Lambda handler for the API Gateway proxy integration.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	path, route, jobID := canonicalPath(req)
	resp, err := h.handle(ctx, req, path, route, jobID)
	// One metric per answer: rejection and 5xx rates are what an operator alarms on.
	h.Metrics.Put("WebhookResponses", 1, obs.Count, map[string]string{"Route": route, "Status": strconv.Itoa(resp.StatusCode)})
	return resp, err
}

func (h *Handler) handle(ctx context.Context, req events.APIGatewayProxyRequest, path, route, jobID string) (events.APIGatewayProxyResponse, error) {
	ctx = obs.WithAttrs(ctx, slog.String("request_id", req.RequestContext.RequestID))
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(req.Body)
		if err != nil {
			return errorResponse(http.StatusBadRequest, "malformed_body", "body is not valid base64"), nil
		}
		body = b
	}
	if len(body) > MaxBody {
		return errorResponse(http.StatusRequestEntityTooLarge, "payload_too_large", "body exceeds 256 KiB"), nil
	}
	switch {
	case route == "webhook" && req.HTTPMethod == http.MethodPost:
	case route == "job" && req.HTTPMethod == http.MethodGet:
	case route == "swarmevents" && req.HTTPMethod == http.MethodPost:
		return h.swarmEvent(ctx, req, body), nil
	case route == "":
		return errorResponse(http.StatusNotFound, "not_found", "no such endpoint"), nil
	default:
		return errorResponse(http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed on this endpoint"), nil
	}

	mode, resp, ok := h.authenticate(ctx, req, route, path, body)
	if !ok {
		return resp, nil
	}
	if route == "job" {
		if !job.ValidID(jobID) {
			// Answered without a read: DynamoDB would reject an over-long key.
			return errorResponse(http.StatusNotFound, "job_not_found", "no job with this id"), nil
		}
		return h.status(ctx, jobID), nil
	}
	return h.create(ctx, req, body, mode), nil
}

// swarmEvent hands a P4 Code Review delivery to its receiver (its own secret and scheme).
func (h *Handler) swarmEvent(ctx context.Context, req events.APIGatewayProxyRequest, body []byte) events.APIGatewayProxyResponse {
	if h.SwarmEvents == nil {
		return errorResponse(http.StatusNotFound, "not_enabled", "P4 Code Review webhooks are not enabled here (swarmEvents)")
	}
	a := h.SwarmEvents.Receive(ctx, func(name string) string { return header(req, name) }, body)
	if a.Code != "" {
		return errorResponse(a.Status, a.Code, a.Message)
	}
	return jsonResponse(a.Status, map[string]string{"result": a.Result})
}

// authMode is how a request was authenticated.
type authMode int

const (
	authHMAC   authMode = iota // signed: triggers and API callers
	authBearer                 // Swarm's static bearer token: source "swarm" only
)

// canonicalPath is the path the signature covers: the route with its
// parameters filled in, independent of the API stage prefix.
func canonicalPath(req events.APIGatewayProxyRequest) (path, route, jobID string) {
	p := strings.TrimSuffix(req.Path, "/")
	switch {
	case req.Resource == "/webhooks/changelist" || strings.HasSuffix(p, "/webhooks/changelist"):
		return "/webhooks/changelist", "webhook", ""
	case req.Resource == "/webhooks/swarm-events" || strings.HasSuffix(p, "/webhooks/swarm-events"):
		return "/webhooks/swarm-events", "swarmevents", ""
	case req.Resource == "/jobs/{id}" || strings.Contains(p, "/jobs/"):
		id := cmp.Or(req.PathParameters["id"], p[strings.LastIndex(p, "/")+1:])
		return "/jobs/" + id, "job", id
	}
	return "", "", ""
}

func header(req events.APIGatewayProxyRequest, name string) string {
	for k, v := range req.Headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	for k, v := range req.MultiValueHeaders {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

func (h *Handler) authenticate(ctx context.Context, req events.APIGatewayProxyRequest, route, path string, body []byte) (authMode, events.APIGatewayProxyResponse, bool) {
	if token, ok := bearer(header(req, "Authorization")); ok {
		resp, ok := h.authenticateBearer(ctx, req, route, token)
		return authBearer, resp, ok
	}
	verify := func(fresh bool) error {
		keys, err := h.Keys(ctx, fresh)
		if err != nil {
			return err
		}
		return Verify(keys, header(req, HeaderTimestamp), header(req, HeaderSignature), req.HTTPMethod, path, body, h.now(), h.ReplayWindow)
	}
	err := swarmevents.WithFreshKeys(verify)
	if msg, rejected := authRejections[err]; rejected {
		// Neither the signature nor the body is logged: only the reason.
		h.Log.WarnContext(ctx, "webhook authentication failed", "reason", err.Error(), "source_ip", req.RequestContext.Identity.SourceIP)
		return authHMAC, errorResponse(http.StatusUnauthorized, err.Error(), msg), false
	}
	if err != nil { // the keys could not be read: our failure, not the caller's
		h.Log.ErrorContext(ctx, "loading webhook keys failed", "err", err, "error_class", failure.Classify(err))
		return authHMAC, unavailable(), false
	}
	return authHMAC, events.APIGatewayProxyResponse{}, true
}

// bearer returns the token of an "Authorization: Bearer <token>" header (the
// scheme is case-insensitive, RFC 9110 §11.1).
func bearer(v string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// authenticateBearer checks Swarm's token against the current and previous
// secret versions, re-read once on a mismatch (a rotation). Tokens are
// compared as SHA-256 digests in constant time: neither content nor length
// leaks through timing.
func (h *Handler) authenticateBearer(ctx context.Context, req events.APIGatewayProxyRequest, route, token string) (events.APIGatewayProxyResponse, bool) {
	reject := func(code, msg string) (events.APIGatewayProxyResponse, bool) {
		h.Log.WarnContext(ctx, "webhook authentication failed", "reason", code, "source_ip", req.RequestContext.Identity.SourceIP)
		r := errorResponse(http.StatusUnauthorized, code, msg)
		r.Headers["WWW-Authenticate"] = `Bearer realm="criticizer"`
		return r, false
	}
	if h.SwarmTokens == nil {
		return reject("bearer_not_enabled", "bearer tokens are not enabled here; sign the request (X-Criticizer-Signature)")
	}
	if route != "webhook" {
		return reject("bearer_not_accepted", "the Swarm token is accepted only on POST /webhooks/changelist")
	}
	got := sha256.Sum256([]byte(token))
	err := swarmevents.WithFreshKeys(func(fresh bool) error {
		tokens, err := h.SwarmTokens(ctx, fresh)
		if err != nil {
			return err
		}
		ok := 0
		for _, t := range tokens {
			if t = bytes.TrimSpace(t); len(t) > 0 { // a secret pasted with its newline still matches
				want := sha256.Sum256(t)
				ok |= subtle.ConstantTimeCompare(got[:], want[:])
			}
		}
		if ok != 1 {
			return ErrBadSignature
		}
		return nil
	})
	switch {
	case err == nil:
		return events.APIGatewayProxyResponse{}, true
	case errors.Is(err, ErrBadSignature):
		return reject("invalid_token", "bearer token does not match")
	}
	h.Log.ErrorContext(ctx, "loading the Swarm token failed", "err", err, "error_class", failure.Classify(err))
	return unavailable(), false
}

// authRejections are the answers to a request that fails authentication.
var authRejections = map[error]string{
	ErrMissingSignature: "X-Criticizer-Timestamp and X-Criticizer-Signature headers are required",
	ErrBadTimestamp:     "X-Criticizer-Timestamp must be Unix seconds",
	ErrStaleTimestamp:   "timestamp outside the replay window",
	ErrBadSignature:     "signature does not match",
}

// jobView is the public representation of a job on creation.
type jobView struct {
	JobID          string `json:"job_id"`
	State          string `json:"state"`
	ChangelistID   int64  `json:"changelist_id"`
	ReviewVersion  int    `json:"review_version"`
	IdempotencyKey string `json:"idempotency_key"`
	CreatedAt      string `json:"created_at"`
	StatusURL      string `json:"status_url"`
}

// create is POST /webhooks/changelist once authenticated: the request is
// parsed and checked, the job and its idempotency record are stored
// together, and the job is enqueued for the fetch stage.
func (h *Handler) create(ctx context.Context, req events.APIGatewayProxyRequest, body []byte, mode authMode) events.APIGatewayProxyResponse {
	// application/json with parameters (charset) or none; not application/jsonp.
	if ct := header(req, "Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return errorResponse(http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json")
		}
	}
	r, err := Parse(body)
	if err != nil {
		fe, _ := IsFieldError(err)
		return errorResponse(http.StatusBadRequest, fe.Code, fe.Error())
	}
	if mode == authBearer && r.Source != "swarm" {
		return errorResponse(http.StatusForbidden, "source_not_allowed", "the Swarm token authenticates only source swarm; sign other requests")
	}
	callbacks, resp, ok := h.checkSwarm(ctx, r)
	if !ok {
		return resp
	}
	ctx = obs.WithAttrs(ctx, slog.String("idempotency_key", r.IdempotencyKey), slog.Int64("changelist_id", r.ChangelistID), slog.Int("review_version", r.ReviewVersion))
	if resp, ok := h.checkRecipients(ctx, r); !ok {
		return resp
	}
	now := h.now()
	j := h.newJob(ctx, req, r, callbacks, now)
	id := j.ID
	resp = jsonResponse(http.StatusAccepted, jobView{JobID: id, State: string(job.Queued), ChangelistID: r.ChangelistID,
		ReviewVersion: r.ReviewVersion, IdempotencyKey: r.IdempotencyKey, CreatedAt: j.CreatedAt, StatusURL: "/jobs/" + id})
	resp.Headers["Location"] = "/jobs/" + id
	idem := &store.Idempotency{Key: r.IdempotencyKey, RequestHash: r.Hash(), JobID: id, CreatedAt: j.CreatedAt,
		// No ExpiresAt: the store keeps uniqueness records for the
		// uniqueness retention, not the data's (rule ID-3).
		Response: store.SavedResponse{Status: resp.StatusCode, Headers: resp.Headers, Body: resp.Body}}
	if resp, ok := h.storeJob(ctx, r, j, idem); !ok {
		return resp
	}
	ctx = obs.WithAttrs(ctx, slog.String("job_id", id), slog.String("trace_id", j.TraceID))
	h.Log.InfoContext(ctx, "job created", "source", r.Source, "shelved", r.Shelved)

	env := envelope.ForJob(j, domain.StageFetch, now)
	if err := h.Queue.Send(ctx, env); err != nil {
		// The job is stored; the sweeper enqueues it once its sweep deadline passes.
		h.Log.ErrorContext(ctx, "enqueueing the job failed; the sweeper will enqueue it", "err", err, "sweep_at", j.SweepAt)
	}
	return resp
}

// checkSwarm checks a Swarm run's callbacks and that it names a change of
// its own review; it returns the callbacks (update, pass, fail) rebuilt on
// SWARM_URL, or the refusal (ok false). A request not from Swarm has none.
func (h *Handler) checkSwarm(ctx context.Context, r Request) (callbacks [3]string, resp events.APIGatewayProxyResponse, ok bool) {
	if r.Swarm == nil {
		return callbacks, resp, true
	}
	// Swarm puts its external_url's origin (or http://localhost) on the
	// callbacks: they are accepted by path shape and kept rebuilt on
	// SWARM_URL, the only host they are ever called on.
	cbs, field, err := swarm.RunCallbacks(h.SwarmURL, r.Swarm.Update, r.Swarm.Pass, r.Swarm.Fail)
	if err == nil && h.SwarmURL == "" && cbs != [3]string{} {
		field, err = "update", errors.New("no Swarm server is configured here (SWARM_URL) to call back")
	}
	if err != nil {
		return callbacks, errorResponse(http.StatusBadRequest, "invalid_field", "swarm."+field+": "+err.Error()), false
	}
	if resp, ok := h.checkReview(ctx, r.Swarm.Review, r.ChangelistID); !ok {
		return callbacks, resp, false
	}
	return cbs, resp, true
}

// newJob is the queued job the request asks for, its history holding every
// adjustment made to the request.
func (h *Handler) newJob(ctx context.Context, req events.APIGatewayProxyRequest, r Request, callbacks [3]string, now time.Time) *job.Job {
	id := uuid.NewString()
	j := job.New(id, r.IdempotencyKey, r.ChangelistID, r.ReviewVersion, now, h.SweepAfter)
	j.Shelved, j.Source, j.RequestedRecipients, j.TraceID = r.Shelved, r.Source, r.Recipients, uuid.NewString()
	if j.RequestedRecipients == nil {
		j.RequestedRecipients = []string{}
	}
	if r.RequestedBy != "" {
		j.History[0].Actor = r.RequestedBy
	}
	// Rule RC-3 for the intake: every coercion and de-duplication of the
	// request is a diagnostic in the job's history (and the log).
	for _, d := range r.Diagnostics {
		j.History = append(j.History, job.Event{At: j.CreatedAt, Type: job.EventWebhookDiagnostic, Detail: d.String()})
		h.Log.InfoContext(ctx, "webhook input adjusted", "diagnostic", d.Kind, "field", d.Field, "count", d.Count)
	}
	if r.Swarm != nil {
		j.Swarm = &job.SwarmRun{Review: r.Swarm.Review, JobURL: h.runLink(ctx, req, id),
			UpdateURL: callbacks[0], PassURL: callbacks[1], FailURL: callbacks[2]}
	}
	return j
}

// storeJob stores the job with its idempotency record, or answers why not
// (ok false): a duplicate the saved response (422 if its payload differs),
// an older version than the latest the stale-version answer, a failure 503.
func (h *Handler) storeJob(ctx context.Context, r Request, j *job.Job, idem *store.Idempotency) (events.APIGatewayProxyResponse, bool) {
	err := h.createWithRetry(ctx, j, idem)
	var dup *store.DuplicateKeyError
	var stale *store.StaleVersionError
	switch {
	case errors.As(err, &dup):
		if dup.Existing.RequestHash != idem.RequestHash {
			h.Log.WarnContext(ctx, "idempotency key reused with a different payload", "existing_job", dup.Existing.JobID)
			return errorResponse(http.StatusUnprocessableEntity, "idempotency_key_reused", "this idempotency_key was used with a different payload (job "+dup.Existing.JobID+")"), false
		}
		h.Log.InfoContext(ctx, "duplicate webhook answered with the saved response", "job_id", dup.Existing.JobID)
		return savedResponse(dup.Existing.Response), false
	case errors.As(err, &stale):
		return h.staleVersion(ctx, r, stale.Current), false
	case err != nil:
		h.Log.ErrorContext(ctx, "creating the job failed", "err", err, "error_class", failure.Classify(err))
		return unavailable(), false
	}
	return events.APIGatewayProxyResponse{}, true
}

// checkRecipients applies the recipient policy before anything is stored: a
// refusal is a 422 naming each address and why, and a security event.
func (h *Handler) checkRecipients(ctx context.Context, r Request) (events.APIGatewayProxyResponse, bool) {
	if h.Recipients == nil {
		return events.APIGatewayProxyResponse{}, true
	}
	if len(r.Recipients) > h.Recipients.Max() {
		h.Log.WarnContext(ctx, "webhook named more recipients than the policy allows", "event", "recipient_limit_exceeded",
			"security_event", true, "recipients", len(r.Recipients), "max", h.Recipients.Max())
		return errorResponse(http.StatusUnprocessableEntity, "too_many_recipients",
			"recipients: at most "+strconv.Itoa(h.Recipients.Max())+" may be named here (recipient policy maxRecipients); the changelist's author is added without being named"), false
	}
	_, refused := h.Recipients.Split(r.Recipients)
	if len(refused) == 0 {
		return events.APIGatewayProxyResponse{}, true
	}
	recipients.Report(ctx, h.Log, h.Metrics, "webhook", r.Source, refused)
	return errorResponse(http.StatusUnprocessableEntity, "recipient_not_allowed",
		"recipients outside this environment's recipient policy (allowed e-mail domains, recipientDomains): "+recipients.Describe(refused)+"; nothing was stored"), false
}

// createWithRetry retries a transaction cancelled by a conflict: DynamoDB
// cancels concurrent transactions on the same items instead of queueing
// them, so a duplicate racing the original tries again to read its outcome.
func (h *Handler) createWithRetry(ctx context.Context, j *job.Job, idem *store.Idempotency) error {
	var err error
	for attempt := 1; attempt <= 4; attempt++ {
		err = h.Jobs.Create(ctx, j, idem)
		if failure.Classify(err) != failure.Conflict {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff.Policy{Initial: 50 * time.Millisecond, Multiplier: 2, Max: 400 * time.Millisecond, Ceiling: time.Second}.Delay(attempt, 0)):
		}
	}
	return err
}

// runLink is the link a Swarm run shows: the job page when it is on
// (opened without signing), else GET /jobs/{id}. An unreadable page key
// costs the run its page link, not the job.
func (h *Handler) runLink(ctx context.Context, req events.APIGatewayProxyRequest, id string) string {
	if h.JobPage != nil {
		link, err := h.JobPage(ctx, id)
		switch {
		case err != nil:
			h.Log.WarnContext(ctx, "minting the job page link failed; the run links the signed status instead", "err", err, "error_class", failure.Classify(err))
		case strings.HasPrefix(link, "/"):
			return publicURL(req, link)
		default:
			return link
		}
	}
	return publicURL(req, "/jobs/"+id)
}

// publicURL is path on this API as the caller reached it (domain and stage
// prefix or base path from the request): no API URL to configure.
func publicURL(req events.APIGatewayProxyRequest, path string) string {
	host := cmp.Or(req.RequestContext.DomainName, header(req, "Host"))
	scheme := strings.ToLower(header(req, "X-Forwarded-Proto"))
	if scheme != "http" {
		scheme = "https"
	}
	full := cmp.Or(req.RequestContext.Path, req.Path)
	prefix, _, _ := strings.Cut(full, "/webhooks/changelist")
	if host == "" {
		return prefix + path
	}
	return scheme + "://" + host + prefix + path
}

// staleVersion answers a review_version not above the changelist's latest:
// the same one returns the existing job, a lower one is a conflict.
func (h *Handler) staleVersion(ctx context.Context, r Request, cur *store.Changelist) events.APIGatewayProxyResponse {
	if r.ReviewVersion == cur.LatestVersion {
		j, err := h.Jobs.Get(ctx, cur.LatestJobID)
		if errors.Is(err, job.ErrNotFound) {
			// The job's data expired (RETENTION_DAYS); its version gate
			// outlives it (UNIQUENESS_RETENTION_DAYS): still no rerun.
			return jsonResponse(http.StatusOK, map[string]any{
				"job_id": cur.LatestJobID, "state": "expired", "changelist_id": cur.Changelist, "review_version": cur.LatestVersion, "rerun": false,
				"reason": "review_version_already_accepted: this version was reviewed and its job has expired; send a higher review_version to rerun",
			})
		}
		if err != nil {
			return unavailable()
		}
		return jsonResponse(http.StatusOK, map[string]any{
			"job_id": j.ID, "state": j.State, "changelist_id": j.Changelist, "review_version": j.ReviewVersion,
			"status_url": "/jobs/" + j.ID, "rerun": false,
			"reason": "review_version_already_accepted: this version is already reviewed or in progress; send a higher review_version to rerun",
		})
	}
	return jsonResponse(http.StatusConflict, map[string]any{"error": map[string]any{
		"code":           "stale_review_version",
		"message":        "review_version " + strconv.Itoa(r.ReviewVersion) + " is lower than the latest accepted version " + strconv.Itoa(cur.LatestVersion),
		"latest_version": cur.LatestVersion, "latest_job_id": cur.LatestJobID,
	}})
}

type stageView struct {
	Status         string `json:"status"`
	Attempts       int    `json:"attempts"`
	LastErrorClass string `json:"last_error_class,omitempty"`
	FirstFailureAt string `json:"first_failure_at,omitempty"`
	LastFailureAt  string `json:"last_failure_at,omitempty"`
	Replays        int    `json:"replays,omitempty"`
}

type deliveryView struct {
	Recipient  string `json:"recipient"`
	Status     string `json:"status"`
	NotifiedAt string `json:"notified_at,omitempty"`
	Attempts   int    `json:"attempts"`
}

func (h *Handler) status(ctx context.Context, id string) events.APIGatewayProxyResponse {
	j, err := h.Jobs.Get(ctx, id)
	if errors.Is(err, job.ErrNotFound) {
		return errorResponse(http.StatusNotFound, "job_not_found", "no job with this id")
	}
	if err != nil {
		h.Log.ErrorContext(ctx, "reading the job failed", "err", err)
		return unavailable()
	}
	stages := map[string]stageView{}
	for _, s := range domain.Stages {
		r := j.StageRecord(s)
		stages[string(s)] = stageView{Status: string(r.Status), Attempts: r.Attempts, LastErrorClass: string(r.LastErrorClass),
			FirstFailureAt: r.FirstFailureAt, LastFailureAt: r.LastFailureAt, Replays: r.Replays}
	}
	deliveries := []deliveryView{}
	if h.Deliveries != nil {
		rows, err := h.Deliveries.List(ctx, j.Changelist, j.ReviewVersion)
		if err != nil {
			return unavailable()
		}
		for _, r := range rows {
			deliveries = append(deliveries, deliveryView{Recipient: r.Recipient, Status: string(r.Status), NotifiedAt: r.NotifiedAt, Attempts: r.Attempts})
		}
	}
	return jsonResponse(http.StatusOK, map[string]any{
		"job_id": j.ID, "state": j.State, "stage": j.Stage, "changelist_id": j.Changelist, "review_version": j.ReviewVersion,
		"created_at": j.CreatedAt, "updated_at": j.UpdatedAt, "stages": stages, "recipients": j.Recipients,
		"deliveries": deliveries, "finding_count": j.FindingCount, "history": j.History,
		"review": j.Review, // prompt version, token usage, chunks, skipped files (llm stage)
	})
}

func jsonResponse(status int, v any) events.APIGatewayProxyResponse {
	b, _ := json.Marshal(v)
	return events.APIGatewayProxyResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(b)}
}

func savedResponse(s store.SavedResponse) events.APIGatewayProxyResponse {
	return events.APIGatewayProxyResponse{StatusCode: s.Status, Headers: s.Headers, Body: s.Body}
}

// reviewLookupTimeout: Swarm waits for our answer (10 s by default), and the fetch stage checks again.
const reviewLookupTimeout = 4 * time.Second

// checkReview holds a Swarm run to its review: 422, nothing stored, when
// Swarm has no such review or the changelist is none of its versions. A
// lookup that fails otherwise refuses nothing: the fetch stage checks again
// and retries, so no run is lost to the door's lookup.
func (h *Handler) checkReview(ctx context.Context, review, change int64) (events.APIGatewayProxyResponse, bool) {
	if h.Reviews == nil {
		return events.APIGatewayProxyResponse{}, true
	}
	lctx, cancel := context.WithTimeout(ctx, reviewLookupTimeout)
	defer cancel()
	rv, err := h.Reviews.GetReview(lctx, review)
	switch {
	case failure.Classify(err) == failure.NotFound:
		return errorResponse(http.StatusUnprocessableEntity, "review_not_found", fmt.Sprintf("Swarm has no review %d", review)), false
	case err != nil:
		h.Log.WarnContext(ctx, "swarm review lookup failed; the fetch stage holds the run to its review", "review", review, "error_class", failure.Classify(err))
		return events.APIGatewayProxyResponse{}, true
	case !rv.HasChange(change):
		return errorResponse(http.StatusUnprocessableEntity, "change_not_in_review",
			fmt.Sprintf("change %d is none of Swarm review %d's versions: nothing stored or fetched", change, review)), false
	}
	return events.APIGatewayProxyResponse{}, true
}

func errorResponse(status int, code, msg string) events.APIGatewayProxyResponse {
	return jsonResponse(status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func unavailable() events.APIGatewayProxyResponse {
	r := errorResponse(http.StatusServiceUnavailable, "unavailable", "temporarily unavailable; retry with the same idempotency_key")
	r.Headers["Retry-After"] = "2"
	return r
}
