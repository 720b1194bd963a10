package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/criticizer/criticizer/internal/devstack"
	"github.com/criticizer/criticizer/shared/webhook"
)

// progress prints one short status line to stderr.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "devstack: "+format+"\n", args...)
}

func since(t time.Time) time.Duration { return time.Since(t).Round(100 * time.Millisecond) }

// startLocal runs devstack.StartLocal, turning its log into short progress
// lines: building…, emulator up on …, stack deployed in ….
func startLocal(ctx context.Context, port int) (*devstack.Local, error) {
	start := time.Now()
	ready := start
	devstack.Logf = func(format string, args ...any) {
		switch {
		case strings.HasPrefix(format, "MiniStack ready on") && len(args) == 3:
			ready = time.Now()
			progress("emulator up on %s after %s (log %s)", args[0], since(start), args[2])
		case strings.HasPrefix(format, "creating stack "), strings.HasPrefix(format, "stack %s %s in "):
			// Summarized by the "stack deployed" line.
		default:
			progress(format, args...)
		}
	}
	progress("building the functions, the p4 stand-in and the CDK app…")
	var synthOut bytes.Buffer // the CDK app's chatter, shown only on failure
	l, err := devstack.StartLocal(ctx, devstack.LocalOptions{Port: port, SynthOutput: &synthOut})
	if err != nil {
		os.Stderr.Write(synthOut.Bytes())
		return nil, err
	}
	progress("stack %s deployed in %s (%s since start)", l.StackName, since(ready), since(start))
	return l, nil
}

// stopLocal stops the environment startLocal started, saying so.
func stopLocal(l *devstack.Local) {
	progress("stopping the local environment…")
	if err := l.Close(); err != nil {
		progress("stopping: %v", err)
	}
}

// printEnv prints where the environment is and how to point the AWS CLI or
// criticizer at it.
func printEnv(endpoint, apiURL, stack string) {
	fmt.Printf(`
endpoint: %s
API URL:  %s
# point the AWS CLI or criticizer at it:
AWS_ENDPOINT_URL=%s
AWS_ACCESS_KEY_ID=test
AWS_SECRET_ACCESS_KEY=test
AWS_REGION=%s
CRITICIZER_STACK=%s
`, endpoint, apiURL, endpoint, devstack.DefaultRegion, stack)
}

// signaturePlaceholder is the value sample events carry in their signature
// headers (events/README.md); invoke replaces it with a real signature.
const signaturePlaceholder = "SIGNED-AT-INVOKE"

// proxyRequest is an API Gateway proxy request read from a sample event.
type proxyRequest struct {
	events.APIGatewayProxyRequest
	raw map[string]any // the event as written, to re-encode with new headers only
}

// readProxyRequest reads an event file; ok is false when it is not an API
// Gateway proxy request.
func readProxyRequest(file string) (req proxyRequest, ok bool, err error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return req, false, err
	}
	if json.Unmarshal(b, &req.APIGatewayProxyRequest) != nil || req.HTTPMethod == "" || (req.Path == "" && req.Resource == "") {
		return req, false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&req.raw); err != nil {
		return req, false, fmt.Errorf("%s: %w", file, err)
	}
	return req, true, nil
}

// body is the request body the signature covers (decoded if base64).
func (r proxyRequest) body() ([]byte, error) {
	if r.IsBase64Encoded {
		return base64.StdEncoding.DecodeString(r.Body)
	}
	return []byte(r.Body), nil
}

// signedPath is the route the webhook function verifies the signature
// against: /jobs/<id> for a status request, else /webhooks/changelist.
func (r proxyRequest) signedPath() string {
	if id := r.PathParameters["id"]; id != "" {
		return "/jobs/" + id
	}
	if r.Resource == "/jobs/{id}" || strings.Contains(r.Path, "/jobs/") {
		p := strings.TrimSuffix(r.Path, "/")
		return "/jobs/" + p[strings.LastIndex(p, "/")+1:]
	}
	return "/webhooks/changelist"
}

// hasPlaceholder reports whether a signature header holds the placeholder.
func (r proxyRequest) hasPlaceholder() bool {
	for k, v := range r.Headers {
		if (strings.EqualFold(k, webhook.HeaderTimestamp) || strings.EqualFold(k, webhook.HeaderSignature)) && v == signaturePlaceholder {
			return true
		}
	}
	return false
}

// signed returns the event with its signature headers (single- and
// multi-value) replaced by a signature made now with key.
func (r proxyRequest) signed(key []byte) ([]byte, error) {
	body, err := r.body()
	if err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	now := time.Now().Unix()
	set := map[string]string{webhook.HeaderTimestamp: strconv.FormatInt(now, 10),
		webhook.HeaderSignature: webhook.Sign(key, now, r.HTTPMethod, r.signedPath(), body)}
	for field, multi := range map[string]bool{"headers": false, "multiValueHeaders": true} {
		h, _ := r.raw[field].(map[string]any)
		if h == nil && multi {
			continue
		}
		if h == nil {
			h = map[string]any{}
			r.raw[field] = h
		}
		for k := range h {
			if strings.EqualFold(k, webhook.HeaderTimestamp) || strings.EqualFold(k, webhook.HeaderSignature) {
				delete(h, k)
			}
		}
		for k, v := range set {
			if multi {
				h[k] = []string{v}
			} else {
				h[k] = v
			}
		}
	}
	return json.Marshal(r.raw)
}

// printJSON pretty-prints b when it is JSON, else writes it unchanged.
func printJSON(b []byte) {
	var out bytes.Buffer
	if json.Indent(&out, b, "", "  ") != nil {
		out.Reset()
		out.Write(b)
	}
	if out.Len() > 0 && out.Bytes()[out.Len()-1] != '\n' {
		out.WriteByte('\n')
	}
	os.Stdout.Write(out.Bytes())
}
