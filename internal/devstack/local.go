package devstack

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/criticizer/criticizer/internal/p4layer"
	llmstandin "github.com/criticizer/criticizer/internal/standin/llm"
	"github.com/criticizer/criticizer/internal/standin/p4depot"
	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/settings"
	"github.com/criticizer/criticizer/shared/webhook"
)

// LocalOptions configures StartLocal.
type LocalOptions struct {
	Port        int       // emulator port; 0 picks a free one
	SynthOutput io.Writer // the CDK app's output; default io.Discard
	// Shape is the environment whose cdk.json settings are deployed: "local"
	// (default) or "staging", the prod-shaped run with only the stand-ins'
	// addresses and the emulator deviations (stagingOverrides) laid over it.
	Shape            string
	FunctionEndpoint func(emulator string) string // see EmulatorOptions.FunctionEndpoint
}

// Local is the whole local environment: the emulator with the stack
// deployed, and the stand-ins for the systems outside AWS (Perforce, the LLM
// provider, the SMTP relay, Swarm) on 127.0.0.1, wired into its configuration.
type Local struct {
	*Deployment
	Depot      string             // the p4 stand-in's fixture depot (a private, writable copy)
	P4Bin      string             // the p4 stand-in binary
	LLM        *llmstandin.Server // the LLM provider stand-in
	SMTP       *smtpstandin.Server
	Swarm      *swarmstandin.Server // the Helix Swarm stand-in (reviews API, callback recorder)
	SwarmToken string               // the bearer token Swarm's test definition sends
	WebhookKey []byte               // signs webhooks
	Secrets    map[string]string    // every generated credential, by name: scan outputs for leaks with these
	workDir    string
}

// StartLocal builds the functions and the p4 stand-in, starts the emulator,
// deploys the stack with the stand-ins' addresses, then starts the stand-ins
// with the credentials the stack generated. Close stops all.
func StartLocal(ctx context.Context, opts LocalOptions) (l *Local, err error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	l = &Local{}
	if l.workDir, err = os.MkdirTemp("", "criticizer-local-"); err != nil {
		return nil, err
	}
	defer func() { // a failed start returns nil: close what was started
		if err != nil {
			err, l = errors.Join(err, l.Close()), nil
		}
	}()
	logger := slog.New(slog.DiscardHandler)
	p4Sum, err := l.stageP4(root)
	if err != nil {
		return nil, err
	}
	if _, err := BuildFunctions(ctx, BuildOptions{}); err != nil {
		return nil, err
	}
	// The stand-ins' ports are configuration, chosen before synth; the
	// servers start once the stack's generated credentials can be read.
	var ports [3]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return nil, fmt.Errorf("no free loopback port: %w", err)
		}
	}
	llmPort, smtpPort, ctlPort := ports[0], ports[1], ports[2]
	out := cmp.Or(opts.SynthOutput, io.Discard)
	overrides := map[string]any{
		"p4Bin": l.P4Bin, "p4Port": l.Depot,
		"llmEndpoint": fmt.Sprintf("http://127.0.0.1:%d", llmPort),
		"smtpHost":    "127.0.0.1", "smtpPort": smtpPort, "smtpTLS": "none",
		"smtpLookupUrl": fmt.Sprintf("http://127.0.0.1:%d/messages", ctlPort),
	}
	var emulatorEnv []string
	shape := cmp.Or(opts.Shape, "local")
	switch shape {
	case "local":
	case "staging":
		maps.Copy(overrides, stagingOverrides(filepath.Dir(filepath.Dir(l.P4Bin)), p4Sum))
		// The declared samples stand in for the placeholders an operator
		// fills in (synth refuses them outside local). Staging sends through
		// SES, which the emulator relays to SMTP_HOST: the SMTP stand-in.
		overrides = settings.SamplesUnder(overrides)
		emulatorEnv = append(emulatorEnv, fmt.Sprintf("SMTP_HOST=127.0.0.1:%d", smtpPort))
	default:
		return nil, fmt.Errorf("shape %q: want local or staging", opts.Shape)
	}
	l.Deployment, err = Up(ctx, UpOptions{
		Emulator: EmulatorOptions{Port: opts.Port, FunctionEndpoint: opts.FunctionEndpoint, Env: emulatorEnv},
		Synth:    SynthOptions{Env: shape, Output: out, Overrides: overrides},
	})
	if err != nil {
		return nil, err
	}
	sm := secrets.New(secretsmanager.NewFromConfig(l.AWS), time.Minute)
	hook, _, err := sm.Get(ctx, l.Outputs["WebhookSecretArn"], secrets.Current)
	if err != nil {
		return nil, err
	}
	var creds [4]string // SMTP username and password, LLM API key, p4 password
	for i, f := range [][2]string{{"SmtpSecretArn", "username"}, {"SmtpSecretArn", "password"}, {"LlmSecretArn", "api_key"}, {"P4SecretArn", "password"}} {
		if creds[i], err = sm.Field(ctx, l.Outputs[f[0]], f[1]); err != nil {
			return nil, err
		}
	}
	hookCred, err := secrets.ParseCallerCredential(hook)
	if err != nil {
		return nil, err
	}
	l.WebhookKey = []byte(hookCred.Key)
	// The fixture server's service user gets the generated password: fetch
	// logs in as against a real server.
	serverJSON, _ := json.Marshal(map[string]string{"password": creds[3]})
	if err := os.WriteFile(filepath.Join(l.Depot, "server.json"), serverJSON, 0o600); err != nil {
		return nil, fmt.Errorf("configure the p4 stand-in's password: %w", err)
	}
	l.Secrets = map[string]string{"webhook HMAC key": hook, "SMTP password": creds[1], "LLM API key": creds[2], "p4 password": creds[3]}

	smtpOpts := smtpstandin.Options{Port: smtpPort, Username: creds[0], Password: creds[1], Control: true, ControlPort: ctlPort, Logger: logger}
	ses, err := l.prepareSES(ctx)
	if err != nil {
		return nil, err
	}
	if ses { // notify sends through SES with its role; SES's relay does not log in
		smtpOpts.Username, smtpOpts.Password = "", ""
	}
	l.SMTP = smtpstandin.NewServer(smtpOpts)
	if _, err := l.SMTP.Start(); err != nil {
		return nil, fmt.Errorf("start the SMTP stand-in: %w", err)
	}
	l.LLM = llmstandin.NewServer(llmstandin.Options{APIKey: creds[2], Logger: logger})
	if _, err := l.LLM.Start(fmt.Sprintf("127.0.0.1:%d", llmPort)); err != nil {
		return nil, fmt.Errorf("start the LLM stand-in: %w", err)
	}
	if err := l.startSwarm(ctx, logger); err != nil {
		return nil, fmt.Errorf("start the Swarm stand-in: %w", err)
	}
	return l, nil
}

// stageP4 builds the p4 stand-in and stages it as `make p4-layer` stages the
// real client (that folder is the staging shape's p4 layer), pinned by its
// own checksum as an operator pins theirs; and copies the fixture depot.
func (l *Local) stageP4(root string) (sum string, err error) {
	l.P4Bin = filepath.Join(l.workDir, "p4-layer", "bin", "p4")
	built, err := p4depot.BuildStandin(l.workDir)
	if err != nil {
		return "", err
	}
	if sum, err = p4layer.FileSHA256(built); err == nil {
		_, err = p4layer.Stage(built, hostArch(), sum, filepath.Dir(filepath.Dir(l.P4Bin)))
	}
	if err != nil {
		return "", fmt.Errorf("stage the p4 stand-in as the p4 layer: %w", err)
	}
	l.Depot = filepath.Join(l.workDir, "depot")
	if err := os.CopyFS(l.Depot, os.DirFS(filepath.Join(root, "internal", "standin", "p4", "depot"))); err != nil {
		return "", fmt.Errorf("copy the fixture depot: %w", err)
	}
	return sum, nil
}

// prepareSES reports whether the deployed notify function sends through SES
// and, if so, verifies its sender's domain with SES, as an operator does
// once per account before the first send (SES refuses unverified senders).
func (l *Local) prepareSES(ctx context.Context) (bool, error) {
	cfg, err := lambda.NewFromConfig(l.AWS).GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(l.Outputs["NotifyFunctionName"])})
	if err != nil {
		return false, fmt.Errorf("read the notify function's settings: %w", err)
	}
	var vars map[string]string
	if cfg.Environment != nil {
		vars = cfg.Environment.Variables
	}
	if vars["EMAIL_PROVIDER"] != "ses" {
		return false, nil
	}
	_, domain, ok := strings.Cut(vars["SMTP_FROM"], "@")
	if !ok || domain == "" {
		return false, fmt.Errorf("notify's SMTP_FROM %q has no domain to verify with SES", vars["SMTP_FROM"])
	}
	if _, err := sesv2.NewFromConfig(l.AWS).CreateEmailIdentity(ctx, &sesv2.CreateEmailIdentityInput{EmailIdentity: aws.String(domain)}); err != nil {
		return false, fmt.Errorf("verify the SES sender domain %s: %w", domain, err)
	}
	Logf("SES sender domain %s verified on the emulator; SES relays to the SMTP stand-in", domain)
	return true, nil
}

// changeFiles are the depot paths of change cl in the p4 stand-in's depot
// (changes/<cl>.json), so the Swarm stand-in, as Swarm, anchors comments
// only on a change's files; nil (any file) for a change it lacks.
func (l *Local) changeFiles(cl int64) []string {
	var c struct {
		Files []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	b, err := os.ReadFile(filepath.Join(l.Depot, "changes", fmt.Sprintf("%d.json", cl)))
	if err != nil || json.Unmarshal(b, &c) != nil {
		return nil
	}
	paths := make([]string, 0, len(c.Files))
	for _, f := range c.Files {
		paths = append(paths, f.Path)
	}
	return paths
}

// startSwarm starts the Swarm stand-in, stores its bearer token, API login
// and events secret in Secrets Manager and points the deployed functions
// at them (the stack wires Swarm per environment, from its settings).
func (l *Local) startSwarm(ctx context.Context, logger *slog.Logger) error {
	token, ticket, eventsKey := randomHex(24), randomHex(16), randomHex(24)
	l.Swarm = swarmstandin.NewServer(swarmstandin.Options{User: "criticizer", Ticket: ticket, Logger: logger, ChangeFiles: l.changeFiles})
	// Swarm adds only users and groups it knows from a comment's callouts:
	// those the suite's reviews and hostile findings name.
	l.Swarm.AddUsers("alice", "bob", "carol", "mallory", "criticizer")
	l.Swarm.AddGroup(swarmstandin.Group{ID: "leads", Users: []string{"alice"}})
	base, err := l.Swarm.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	sm := secretsmanager.NewFromConfig(l.AWS)
	arn := map[string]string{}
	for name, value := range map[string]string{"swarm-token": token, "swarm-api": fmt.Sprintf(`{"user":"criticizer","ticket":%q}`, ticket), "swarm-events": eventsKey} {
		id := aws.String(l.StackName + "-" + name)
		out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: id, SecretString: aws.String(value)})
		if exists := (*smtypes.ResourceExistsException)(nil); errors.As(err, &exists) {
			// The SDK retried a create whose answer a loaded emulator lost.
			var put *secretsmanager.PutSecretValueOutput
			if put, err = sm.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: id, SecretString: aws.String(value)}); err == nil {
				out = &secretsmanager.CreateSecretOutput{ARN: put.ARN}
			}
		}
		if err != nil {
			return err
		}
		arn[name] = aws.ToString(out.ARN)
	}
	// P4 Code Review's outbound webhooks (swarmEvents, off in the
	// checked-in environments), signed with this secret.
	l.Swarm.SetEventTarget(swarmstandin.EventTarget{URL: strings.TrimRight(l.APIURL, "/") + "/webhooks/swarm-events", Secret: []byte(eventsKey)})
	api := map[string]string{"SWARM_URL": base, "SWARM_API_SECRET_ID": arn["swarm-api"]}
	with := func(extra ...string) map[string]string {
		m := maps.Clone(api)
		for i := 0; i < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	for fn, vars := range map[string]map[string]string{
		// The sweeper reconciles comment rows over its default window
		// (120 s), longer than notify's: the fault suite's held creates
		// stay notify's.
		"SweeperFunctionName": api,
		// The webhook holds a run to its review at the door (422).
		"WebhookFunctionName": with("SWARM_TOKEN_SECRET_ID", arn["swarm-token"], "SWARM_EVENTS_SECRET_ID", arn["swarm-events"]),
		"FetchFunctionName":   api,
		"DoctorFunctionName":  api, // the pre-flight checks Swarm as fetch meets it
		// Findings also as comments (docs/swarm-comments.md), within the
		// least window infra accepts (over 3 × the client's 10 s timeout;
		// the stand-in stores a held create within 20 s), and the
		// participants e-mailed too, so the suite reads every finding in
		// the e-mail (TestSwarmParticipantsHearOnce runs the default).
		"NotifyFunctionName": with("NOTIFY_CHANNELS", "email,swarm-comments", "SWARM_COMMENT_WINDOW_SECONDS", "31", "SWARM_EMAIL_PARTICIPANTS", "true"),
		// The review function links the Swarm review and the job page in the
		// decided e-mail.
		"LlmFunctionName": {"SWARM_URL": base},
	} {
		edit := func(env map[string]string) {
			maps.Copy(env, vars)
			if fn == "LlmFunctionName" && env["JOB_PAGE_SECRET_ID"] != "" {
				// The stack links the API's AWS address; here it is the emulator's.
				env["JOB_PAGE_BASE_URL"] = l.APIURL
			}
		}
		if _, err := l.setFunctionEnv(ctx, fn, edit, nil); err != nil {
			return err
		}
	}
	l.SwarmToken = token
	l.Secrets["Swarm bearer token"], l.Secrets["Swarm API ticket"], l.Secrets["Swarm events secret"] = token, ticket, eventsKey
	return nil
}

// Call sends a request to the stack's API stage, signed with the webhook
// key as a caller signs it, and returns the answer's status and body.
func (l *Local) Call(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, l.APIURL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	now := time.Now().Unix()
	req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(now, 10))
	req.Header.Set(webhook.HeaderSignature, webhook.Sign(l.WebhookKey, now, method, path, body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// CreatedJob is the job id of a POST /webhooks/changelist answer, "" if none.
func CreatedJob(answer []byte) string {
	var created struct {
		JobID string `json:"job_id"`
	}
	_ = json.Unmarshal(answer, &created)
	return created.JobID
}

// setFunctionEnv lets edit change the environment of the function the stack
// output names (and sets its timeout, when given); it returns the
// environment set.
func (l *Local) setFunctionEnv(ctx context.Context, output string, edit func(map[string]string), timeout *int32) (map[string]string, error) {
	lc := lambda.NewFromConfig(l.AWS)
	name := aws.String(l.Outputs[output])
	cur, err := lc.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: name})
	if err != nil {
		return nil, err
	}
	merged := map[string]string{}
	if cur.Environment != nil {
		maps.Copy(merged, cur.Environment.Variables)
	}
	edit(merged)
	_, err = lc.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{FunctionName: name,
		Environment: &lambdatypes.Environment{Variables: merged}, Timeout: timeout})
	return merged, err
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Close stops the stand-ins and the emulator and removes the work dir.
func (l *Local) Close() error {
	var errs []error
	if l.LLM != nil {
		errs = append(errs, l.LLM.Close())
	}
	if l.SMTP != nil {
		l.SMTP.Close()
	}
	if l.Swarm != nil {
		errs = append(errs, l.Swarm.Close())
	}
	return errors.Join(append(errs, l.Deployment.Close(), os.RemoveAll(l.workDir))...)
}

// stagingOverrides are what the staging shape needs beyond the stand-ins'
// addresses, each an emulator deviation (printed so a run shows them):
//   - architecture: the emulator runs bootstrap as a host process, so the
//     functions are built for and declared with the host's architecture;
//   - p4Bin: the emulator does not mount layers at /opt, so the fetch function
//     runs the layer's own staged binary by its host path (the layer is still
//     synthesized and attached from p4LayerPath);
//   - smtpTLS none: the SMTP stand-in has no certificate a client would trust.
func stagingOverrides(layerDir, layerSHA256 string) map[string]any {
	arch := hostArch()
	Logf("staging shape on the emulator: architecture %s (host), p4Bin = the layer's bin/p4 (layers are not mounted), email through SES relayed to the SMTP stand-in", arch)
	return map[string]any{"architecture": arch, "p4LayerPath": layerDir, "p4LayerSha256": layerSHA256}
}

// hostArch is the Lambda architecture name of this machine.
func hostArch() string {
	if runtime.GOARCH == "arm64" {
		return "arm64"
	}
	return "x86_64"
}
