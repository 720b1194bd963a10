package devstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	smtpstandin "github.com/criticizer/criticizer/internal/standin/smtp"
	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/settings"
)

// LocalOptions configures StartLocal.
type LocalOptions struct {
	RepoRoot string // default: found from the working directory
	Port     int    // emulator port; 0 picks a free one
	WorkDir  string // where the p4 stand-in and its depot copy go; default a temp dir (removed on Close)
	// SynthOutput receives the CDK app's output; default io.Discard.
	SynthOutput io.Writer
	Logger      *slog.Logger // stand-ins' diagnostics; default discards
	// Shape is the environment whose cdk.json settings are deployed: "local"
	// (default) or "staging" — the prod-shaped run: staging's lease, timeouts,
	// base-URL LLM endpoint, p4 layer, created alarm topic and redaction policy,
	// with only the addresses of the stand-ins and the emulator deviations
	// (see stagingOverrides) laid over it.
	Shape string
	// FunctionEndpoint: see EmulatorOptions.FunctionEndpoint.
	FunctionEndpoint func(emulator string) string
}

// Local is the whole local environment: the emulator with the stack
// deployed, and the stand-ins for the systems outside AWS (Perforce, the LLM
// provider, the SMTP relay) on 127.0.0.1, wired into the stack's
// configuration.
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
	ownWorkDir bool
}

// StartLocal builds the functions and the p4 stand-in, starts the emulator,
// deploys the stack with the stand-ins' addresses, then starts the LLM and
// SMTP stand-ins with the credentials the stack generated. Close stops all.
func StartLocal(ctx context.Context, opts LocalOptions) (l *Local, err error) {
	root := opts.RepoRoot
	if root == "" {
		if root, err = RepoRoot(); err != nil {
			return nil, err
		}
	}
	l = &Local{workDir: opts.WorkDir}
	if l.workDir == "" {
		if l.workDir, err = os.MkdirTemp("", "criticizer-local-"); err != nil {
			return nil, err
		}
		l.ownWorkDir = true
	}
	started := l // a failed start returns nil: close what was started
	defer func() {
		if err != nil {
			if cerr := started.Close(); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}
	}()
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}

	// The p4 stand-in is staged as `make p4-layer` stages the real client, and
	// that folder is the staging shape's p4 layer.
	l.P4Bin = filepath.Join(l.workDir, "p4-layer", "bin", "p4")
	built := filepath.Join(l.workDir, "p4-standin")
	build := exec.CommandContext(ctx, "go", "build", "-o", built, "./internal/standin/p4")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("build the p4 stand-in: %w", err)
	}
	// Pinned by its own checksum, as an operator pins the client they chose.
	p4Sum, err := p4layer.FileSHA256(built)
	if err == nil {
		_, err = p4layer.Stage(built, hostArch(), p4Sum, filepath.Dir(filepath.Dir(l.P4Bin)))
	}
	if err != nil {
		return nil, fmt.Errorf("stage the p4 stand-in as the p4 layer: %w", err)
	}
	l.Depot = filepath.Join(l.workDir, "depot")
	_ = os.RemoveAll(l.Depot)
	if err := os.CopyFS(l.Depot, os.DirFS(filepath.Join(root, "internal", "standin", "p4", "depot"))); err != nil {
		return nil, fmt.Errorf("copy the fixture depot: %w", err)
	}
	if _, err := BuildFunctions(ctx, BuildOptions{RepoRoot: root}); err != nil {
		return nil, err
	}

	// The stand-ins' ports are part of the functions' configuration, so they
	// are chosen before synth; the servers start once the credentials the
	// stack generated can be read.
	var ports [3]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return nil, fmt.Errorf("no free loopback port: %w", err)
		}
	}
	llmPort, smtpPort, ctlPort := ports[0], ports[1], ports[2]
	out := opts.SynthOutput
	if out == nil {
		out = io.Discard
	}
	overrides := map[string]any{
		"p4Bin": l.P4Bin, "p4Port": l.Depot,
		"llmEndpoint": fmt.Sprintf("http://127.0.0.1:%d", llmPort),
		"smtpHost":    "127.0.0.1", "smtpPort": smtpPort, "smtpTLS": "none",
		"smtpLookupUrl": fmt.Sprintf("http://127.0.0.1:%d/messages", ctlPort),
	}
	var emulatorEnv []string
	shape := opts.Shape
	switch shape {
	case "", "local":
		shape = "local"
	case "staging":
		for k, v := range stagingOverrides(filepath.Dir(filepath.Dir(l.P4Bin)), p4Sum) {
			overrides[k] = v
		}
		// The checked-in staging holds placeholders synth refuses outside
		// local (an all-zero fingerprint, example.com addresses): the
		// declared samples stand in for what an operator fills in, where
		// the stand-ins do not already give a value.
		overrides = settings.SamplesUnder(overrides)
		// Staging sends through SES; the emulator's SES relays what it
		// accepts to SMTP_HOST, where the SMTP stand-in plays the
		// recipients' mail server.
		emulatorEnv = append(emulatorEnv, fmt.Sprintf("SMTP_HOST=127.0.0.1:%d", smtpPort))
	default:
		return nil, fmt.Errorf("shape %q: want local or staging", opts.Shape)
	}
	l.Deployment, err = Up(ctx, UpOptions{
		Emulator: EmulatorOptions{RepoRoot: root, Port: opts.Port, FunctionEndpoint: opts.FunctionEndpoint, Env: emulatorEnv},
		Synth:    SynthOptions{RepoRoot: root, Env: shape, Output: out, Overrides: overrides},
	})
	if err != nil {
		return nil, err
	}

	sm := secrets.New(secretsmanager.NewFromConfig(l.AWS), time.Minute)
	hook, _, err := sm.Get(ctx, l.Outputs["WebhookSecretArn"], secrets.Current)
	if err != nil {
		return nil, err
	}
	var creds [3]string
	for i, f := range [][2]string{{"SmtpSecretArn", "username"}, {"SmtpSecretArn", "password"}, {"LlmSecretArn", "api_key"}} {
		if creds[i], err = sm.Field(ctx, l.Outputs[f[0]], f[1]); err != nil {
			return nil, err
		}
	}
	// The bare value, or {"key": …} once rotated with criticizer secret rotate.
	hookCred, err := secrets.ParseCallerCredential(hook)
	if err != nil {
		return nil, err
	}
	l.WebhookKey = []byte(hookCred.Key)
	// The fixture server's service user gets the password the stack
	// generated, so the fetch stage logs in ("p4 login", password on stdin)
	// as it must against a real server.
	p4Password, err := sm.Field(ctx, l.Outputs["P4SecretArn"], "password")
	if err != nil {
		return nil, err
	}
	serverJSON, err := json.Marshal(map[string]string{"password": p4Password})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(l.Depot, "server.json"), serverJSON, 0o600); err != nil {
		return nil, fmt.Errorf("configure the p4 stand-in's password: %w", err)
	}
	l.Secrets = map[string]string{"webhook HMAC key": hook, "SMTP password": creds[1], "LLM API key": creds[2], "p4 password": p4Password}

	smtpOpts := smtpstandin.Options{Port: smtpPort, Username: creds[0], Password: creds[1], Control: true, ControlPort: ctlPort, Logger: logger}
	ses, err := l.prepareSES(ctx)
	if err != nil {
		return nil, err
	}
	if ses {
		// The notify function sends through SES with its role; the stand-in
		// receives SES's relay, which does not log in.
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

// changeFiles are the depot paths change cl holds in the p4 stand-in's
// depot (changes/<cl>.json, depot/README.md), so the Swarm stand-in
// anchors comments only on files really in a review's change, as Swarm
// does; nil when the depot has no such change (then any file goes).
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

// startSwarm starts the Swarm stand-in, stores its bearer token and API
// login in Secrets Manager and points the webhook, fetch and notify
// functions at them (notify posts the findings as review comments). The stack's own Swarm wiring (infra) is configured per environment;
// here the harness adds it to the deployed functions.
func (l *Local) startSwarm(ctx context.Context, logger *slog.Logger) error {
	token, ticket := randomHex(24), randomHex(16)
	l.Swarm = swarmstandin.NewServer(swarmstandin.Options{User: "criticizer", Ticket: ticket, Logger: logger, ChangeFiles: l.changeFiles})
	// The accounts the suite's reviews and hostile findings name: Swarm
	// adds only users and groups it knows from a comment's callouts.
	l.Swarm.AddUsers("alice", "bob", "carol", "mallory", "criticizer")
	l.Swarm.AddGroup(swarmstandin.Group{ID: "leads", Users: []string{"alice"}})
	base, err := l.Swarm.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	sm := secretsmanager.NewFromConfig(l.AWS)
	put := func(name, value string) (string, error) {
		id := aws.String(l.StackName + "-" + name)
		out, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: id, SecretString: aws.String(value)})
		var exists *smtypes.ResourceExistsException
		if errors.As(err, &exists) {
			// The SDK retried a create whose first answer was lost (a
			// loaded emulator): the secret is ours; give it this value.
			put, perr := sm.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: id, SecretString: aws.String(value)})
			if perr != nil {
				return "", perr
			}
			return aws.ToString(put.ARN), nil
		}
		if err != nil {
			return "", err
		}
		return aws.ToString(out.ARN), nil
	}
	tokenArn, err := put("swarm-token", token)
	if err != nil {
		return err
	}
	apiArn, err := put("swarm-api", fmt.Sprintf(`{"user":"criticizer","ticket":%q}`, ticket))
	if err != nil {
		return err
	}
	// P4 Code Review's outbound webhooks (off in the checked-in
	// environments, swarmEvents): the stand-in signs with this secret and
	// posts to the deployed route; the header names are the receiver's
	// defaults, which the stand-in sends.
	eventsKey := randomHex(24)
	eventsArn, err := put("swarm-events", eventsKey)
	if err != nil {
		return err
	}
	l.Swarm.SetEventTarget(swarmstandin.EventTarget{URL: strings.TrimRight(l.APIURL, "/") + "/webhooks/swarm-events", Secret: []byte(eventsKey)})
	for fn, vars := range map[string]map[string]string{
		// The sweeper reconciles comment rows as the notify stage's login, over
		// the default window (120 s): longer than notify's is always safe, and
		// it leaves the fault suite's held creates to the notify stage.
		"SweeperFunctionName": {"SWARM_URL": base, "SWARM_API_SECRET_ID": apiArn},
		// The webhook holds a run to its review at the door (422), as the
		// stack wires it for a Swarm it can reach.
		"WebhookFunctionName": {"SWARM_TOKEN_SECRET_ID": tokenArn, "SWARM_URL": base, "SWARM_API_SECRET_ID": apiArn, "SWARM_EVENTS_SECRET_ID": eventsArn},
		"FetchFunctionName":   {"SWARM_URL": base, "SWARM_API_SECRET_ID": apiArn},
		// The pre-flight checks Swarm as fetch meets it.
		"DoctorFunctionName": {"SWARM_URL": base, "SWARM_API_SECRET_ID": apiArn},
		// Findings also as comments on the job's Swarm review (docs/swarm-comments.md).
		// The comment window is the least infra accepts (more than 3 × the
		// client's 10 s timeout): the stand-in stores a held create within
		// 2 leases (20 s), and a shorter wait keeps the fault suite quick.
		// The review's participants are also e-mailed (not the default), so
		// the suite can read every finding in the e-mail too;
		// TestSwarmParticipantsHearOnce runs the default.
		"NotifyFunctionName": {"SWARM_URL": base, "SWARM_API_SECRET_ID": apiArn, "NOTIFY_CHANNELS": "email,swarm-comments",
			"SWARM_COMMENT_WINDOW_SECONDS": "31", "SWARM_EMAIL_PARTICIPANTS": "true"},
	} {
		edit := func(env map[string]string) {
			maps.Copy(env, vars)
			if fn != "NotifyFunctionName" || env["JOB_PAGE_SECRET_ID"] == "" {
				return
			}
			// The stack gives the e-mail and the summary comment the API's
			// AWS address (execute-api.amazonaws.com), which does not resolve
			// to the emulator: locally the job page is on the emulator's
			// address, where the webhook's own link already points.
			env["JOB_PAGE_BASE_URL"] = l.APIURL
		}
		if _, err := l.setFunctionEnv(ctx, fn, edit, nil); err != nil {
			return err
		}
	}
	l.SwarmToken = token
	l.Secrets["Swarm bearer token"], l.Secrets["Swarm API ticket"], l.Secrets["Swarm events secret"] = token, ticket, eventsKey
	return nil
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
	if l.Deployment != nil {
		errs = append(errs, l.Deployment.Close())
	}
	if l.ownWorkDir {
		errs = append(errs, os.RemoveAll(l.workDir))
	}
	return errors.Join(errs...)
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
