package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/criticizer/criticizer/shared/llm"
	_ "github.com/criticizer/criticizer/shared/llm/bedrock" // the bedrock family
	"github.com/criticizer/criticizer/shared/p4"
	"github.com/criticizer/criticizer/shared/result"
	"github.com/criticizer/criticizer/shared/secrets"
	"github.com/criticizer/criticizer/shared/smtpmail"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Deps are what the checks are built over.
type Deps struct {
	AWS     aws.Config
	Secrets *secrets.Store
	SES     SESAPI
	Log     *slog.Logger
}

// New builds the pre-flight as the pipeline's functions build their clients; a
// part that cannot be built is a failed verdict naming the fix, not a failed
// cold start.
func New(ctx context.Context, set Settings, d Deps) *Doctor {
	doc := &Doctor{Model: newModel(set, d), Mail: newMail(set, d)}
	var broken *Verdict
	doc.P4, broken = newP4(ctx, set, d)
	if broken != nil {
		doc.Broken = append(doc.Broken, *broken)
	}
	if set.Swarm.URL != "" {
		doc.Swarm = &Swarm{URL: set.Swarm.URL, API: &swarm.Client{BaseURL: set.Swarm.URL, Credentials: swarm.SecretCredentials(d.Secrets, set.Swarm.APISecretID)}}
	}
	return doc
}

func newP4(ctx context.Context, set Settings, d Deps) (*P4, *Verdict) {
	broken := func(err error, fix string) (*P4, *Verdict) {
		return nil, &Verdict{Check: CheckP4Connection, Status: Fail, Detail: err.Error(), Fix: fix}
	}
	cfg := set.P4.Config
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return broken(err, "the function cannot write its p4 home under /tmp: redeploy")
	}
	runner, err := p4.NewRunner(cfg, d.Log)
	if err != nil {
		return broken(err, "the p4 client is missing or p4Bin/p4Port/p4User are wrong: check p4LayerPath (make p4-layer) and p4Bin (docs/perforce-and-swarm.md, The p4 layer)")
	}
	c := &P4{Runner: runner, Port: cfg.Port}
	if id := set.P4.SecretID; id != "" {
		creds := secrets.NewRotating(d.Secrets, id, func(value string) (p4.Credential, error) { return p4.ParseCredential(id, value) })
		cred, _, err := creds.Get(ctx, false)
		if err != nil {
			return broken(err, "the service user's credential cannot be read: put {\"password\": …} or {\"ticket\": …} in P4_SECRET_ID (output P4SecretArn)")
		}
		c.Ticket = cred.Ticket != ""
		runner.SetCredentials(creds)
	}
	if set.AllowList == nil {
		return broken(fmt.Errorf("DEPOT_ALLOWLIST is empty"), "set depotAllowList and deploy")
	}
	fetcher, err := p4.NewFetcher(runner, set.AllowList, d.Log)
	if err != nil {
		return broken(err, "redeploy: the fetcher could not be built")
	}
	c.Fetcher = fetcher.WithOptions(set.P4.Options).CheckProtections()
	return c, nil
}

func newModel(set Settings, d Deps) *Model {
	cfg := set.LLM.Config
	cfg.Schema, cfg.Logger = result.SchemaJSON(), d.Log
	m := &Model{Provider: set.LLM.Provider, Model: cfg.Model, Form: "the prompt's instructions (no schema parameter)",
		ContextTokens: set.ContextTokens, ContextSource: "llmContextTokens"}
	if m.Provider == llm.OpenAI || m.Provider == "" {
		m.Form = "response_format " + cmp.Or(cfg.ResponseFormat, llm.FormatJSONSchema)
	}
	if m.ContextTokens <= 0 {
		m.ContextTokens, m.ContextSource = result.Budget{}.For(cfg.Model).ContextTokens, "the model family table; llmContextTokens overrides it"
	}
	if f, _ := llm.FamilyOf(set.LLM.Provider); f.AWS {
		c, err := llm.New(set.LLM.Provider, cfg, llm.Credentials{AWS: d.AWS}) // the function's role, as the llm function's
		m.Complete = func(ctx context.Context, p llm.Prompt) (llm.Completion, error) {
			if err != nil {
				return llm.Completion{}, err
			}
			return c.Complete(ctx, p)
		}
		return m
	}
	key := secrets.NewRotating(d.Secrets, set.LLM.SecretID, func(v string) (llm.Provider, error) {
		var s struct {
			APIKey string `json:"api_key"`
		}
		if err := secrets.Unmarshal(set.LLM.SecretID, v, &s, "api_key"); err != nil {
			return nil, err
		}
		return llm.New(set.LLM.Provider, cfg, llm.Credentials{APIKey: s.APIKey})
	})
	m.Complete = func(ctx context.Context, p llm.Prompt) (llm.Completion, error) {
		return secrets.Do(ctx, key, func(c llm.Provider) (llm.Completion, error) { return c.Complete(ctx, p) })
	}
	// A detecting client (openai) reports its form and the server's window after
	// the probe.
	m.Found = func(ctx context.Context) (llm.Capabilities, bool) {
		caps, err := secrets.Do(ctx, key, func(c llm.Provider) (llm.Capabilities, error) {
			d, ok := c.(capable)
			if !ok {
				return llm.Capabilities{}, errNotCapable
			}
			caps := d.Capabilities()
			caps.ContextTokens, caps.ContextSource = d.ContextTokens(ctx)
			return caps, nil
		})
		return caps, err == nil
	}
	return m
}

// capable is a provider client that finds its endpoint's capabilities
// (*llm.Client).
type capable interface {
	Capabilities() llm.Capabilities
	ContextTokens(ctx context.Context) (int, string)
}

var errNotCapable = errors.New("the provider client finds no capabilities")

func newMail(set Settings, d Deps) *Mail {
	m := &Mail{Provider: set.Provider, From: set.From, SES: d.SES, Identity: set.From[strings.LastIndexByte(set.From, '@')+1:]}
	m.Relay = fmt.Sprintf("%s:%d", set.SMTP.Host, set.SMTP.Port)
	m.Probe = func(ctx context.Context) error { return smtpmail.Probe(ctx, d.Secrets, set.SMTPSecretID, set.SMTP) }
	return m
}
