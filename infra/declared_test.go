package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/internal/fnsettings"
	"github.com/criticizer/criticizer/shared/settings"
)

// TestCheckedInPlaceholdersRefused: dev, staging and prod as checked in hold
// placeholders (an all-zero fingerprint and layer checksum, example.com
// addresses); synth refuses each, naming it, instead of the first job failing.
func TestCheckedInPlaceholdersRefused(t *testing.T) {
	want := []string{`p4TrustFingerprint "00:00`, `p4LayerSha256 "0000`, `smtpFrom "criticizer`, `p4Port "ssl:perforce`, `recipientDomains "example.com"`}
	for _, env := range []string{"dev", "staging", "prod"} {
		ctx := cdkContextAsCheckedIn(t)
		ctx[ctxEnv], ctx[ctxAssetRoot] = env, dummyAssets(t)
		ctx[ctxOverrides] = map[string]any{"p4LayerPath": fakeLayer(t)}
		_, _, err := newApp(t.TempDir(), ctx)
		if err == nil {
			t.Errorf("%s as checked in: synth accepted its placeholders", env)
			continue
		}
		names := want
		if env == "prod" {
			names = append(slices.Clone(want), `alarmEmail "oncall@example.com"`)
		}
		for _, w := range names {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s as checked in: error does not name %s: %v", env, w, err)
			}
		}
	}
	// local keeps its stand-in values (example.com recipients, no fingerprint).
	ctx := cdkContextAsCheckedIn(t)
	ctx[ctxEnv], ctx[ctxAssetRoot] = "local", dummyAssets(t)
	if _, _, err := newApp(t.TempDir(), ctx); err != nil {
		t.Errorf("local as checked in: %v", err)
	}
}

// TestEveryKeyDeclared: each cdk.json key EnvConfig has a field for is
// declared in shared/settings (so it is in docs/configuration.md); a
// declared key with no field is kept as given and reaches declaredEnv,
// and a key no setting declares is refused.
func TestEveryKeyDeclared(t *testing.T) {
	for k := range fieldKeys {
		if !settings.Key(k) {
			t.Errorf("cdk.json key %s is not declared in shared/settings (nor documented)", k)
		}
	}
	c := DefaultConfig("dev")
	if err := strictUnmarshal([]byte(`{"dismissThreshold": 4, "p4Port": "ssl:p4.studio.test:1666"}`), &c); err != nil {
		t.Fatal(err)
	}
	if env := declaredEnv(mustJSONKeys(t, c), "llm"); env["DISMISS_THRESHOLD"] == nil || *env["DISMISS_THRESHOLD"] != "4" || c.P4Port != "ssl:p4.studio.test:1666" {
		t.Errorf("dismissThreshold 4 gives the llm function %v; p4Port decoded as %q", env["DISMISS_THRESHOLD"], c.P4Port)
	}
	if err := strictUnmarshal([]byte(`{"dismissThreshhold": 4}`), &c); err == nil || !strings.Contains(err.Error(), "dismissThreshhold") {
		t.Errorf("a misspelt key: %v, want it refused by name", err)
	}
}

func mustJSONKeys(t *testing.T, c EnvConfig) map[string]any {
	t.Helper()
	v, err := jsonKeys(c)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestEveryVariableDeclared: each variable a function's loaders read is
// declared, with that function among its readers (or read by all), or is one
// the stack sets itself (a *stack* row).
func TestEveryVariableDeclared(t *testing.T) {
	readers := map[string][]string{}
	for _, s := range settings.Declared {
		for _, v := range s.Vars {
			readers[v] = append(readers[v], s.ReadBy...)
		}
	}
	for _, over := range []map[string]any{everything("smtp", "openai"), everything("ses", "bedrock")} {
		o := map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
		for k, v := range over {
			o[k] = v
		}
		ctx := cdkContext(t)
		ctx[ctxEnv], ctx[ctxAssetRoot], ctx[ctxOverrides] = "staging", dummyAssets(t), o
		_, stack, err := newApp(t.TempDir(), ctx)
		if err != nil {
			t.Fatal(err)
		}
		envs, err := functionEnvs(stack)
		if err != nil {
			t.Fatal(err)
		}
		for fn, env := range envs {
			keys, _ := fnsettings.Read(fn, env)
			for _, k := range keys {
				r, ok := readers[k]
				switch {
				case ok && (slices.Contains(r, "all") || slices.Contains(r, fn)):
				case ok:
					t.Errorf("%s reads %s; its declaration names readers %v", fn, k, r)
				case !slices.ContainsFunc(settings.Declared, func(s settings.Setting) bool { return slices.Contains(s.Names, k) }): // not a stack name either
					t.Errorf("%s reads %s, which no setting declares", fn, k)
				}
			}
		}
	}
}

// plainDefault is a declared default of one plain value.
var plainDefault = regexp.MustCompile(`^(\d+|true|false|[a-z0-9.@_-]+)$`)

// TestDeclaredDefaultsAreTheCode: a declared default that is one plain value
// (a number, true/false, a `literal` or none) is DefaultConfig's outside
// local, so the docs' default column cannot drift from infra/config.go. A
// key DefaultConfig leaves out when zero has its default in the function's
// loader and is not checked here.
func TestDeclaredDefaultsAreTheCode(t *testing.T) {
	b, err := json.Marshal(DefaultConfig("staging"))
	if err != nil {
		t.Fatal(err)
	}
	var code map[string]any
	if err := json.Unmarshal(b, &code); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range settings.Declared {
		if len(s.Keys) != 1 {
			continue
		}
		first, _, _ := strings.Cut(s.Default, ";")
		first, _, _ = strings.Cut(first, " (")
		got := fmt.Sprint(code[s.Keys[0]])
		switch want := strings.ReplaceAll(strings.Trim(first, "`"), ",", ""); {
		case want == "none" || strings.HasPrefix(want, "none:") || strings.HasPrefix(want, "empty"):
			if got != "" && got != "<nil>" && got != "0" && got != "false" && got != "[]" {
				t.Errorf("%s: declared default %q, DefaultConfig has %s", s.Keys[0], s.Default, got)
			}
		case got == "<nil>": // omitted when zero: the function's loader holds the default
			continue
		case plainDefault.MatchString(want):
			if got != want {
				t.Errorf("%s: declared default %q, DefaultConfig has %s", s.Keys[0], s.Default, got)
			}
		default:
			continue
		}
		checked++
	}
	t.Logf("%d declared defaults checked against DefaultConfig", checked)
}

// TestDeclaredRangesRefusedInEveryEnvironment: synth checks each cdk.json
// value against what its declaration accepts (shared/settings), in every
// environment, naming the key, the variable the functions read it as, and
// the range; stack-only settings (batchSize, architecture) included. The
// environments as checked in (placeholders replaced by the samples) pass.
func TestDeclaredRangesRefusedInEveryEnvironment(t *testing.T) {
	layer, assets := fakeLayer(t), dummyAssets(t)
	bad := []struct {
		key  string
		val  any
		want string
	}{
		{"batchSize", 11, "batchSize 11: must be an integer in 1–10"},
		{"architecture", "riscv64", "architecture riscv64: must be one of arm64, x86_64"},
		{"leaseSeconds", 4, "leaseSeconds 4 (LEASE_SECONDS): must be an integer in 5–900"},
		{"maxAttempts", 0, "maxAttempts 0 (MAX_ATTEMPTS): must be an integer in 1–20"},
		{"logLevel", "verbose", "logLevel verbose (LOG_LEVEL): must be one of debug, info, warn, error"},
		{"smtpTLS", "ssl", "smtpTLS ssl (SMTP_TLS): must be one of starttls, tls, none"},
		{"swarmMaxInlineComments", 501, "swarmMaxInlineComments 501 (SWARM_MAX_INLINE_COMMENTS): must be an integer in 1–500"},
		{"dismissThreshold", 101, "dismissThreshold 101 (DISMISS_THRESHOLD): must be an integer in 1–100"},
		{"llmModelCandidatePercent", 101, "llmModelCandidatePercent 101 (LLM_MODEL_CANDIDATE_PERCENT): must be an integer in 0–100"},
		{"dismissScopeDepth", -1, "dismissScopeDepth -1 (DISMISS_SCOPE_DEPTH): must be an integer in 1–5"},
		{"acceptanceAlarmThreshold", 1, "acceptanceAlarmThreshold 1: must be a number from 0 to below 1"},
		{"acceptanceMargin", 1, "acceptanceMargin 1: must be a number from 0 to below 1"},
		{"acceptanceMinSample", -1, "acceptanceMinSample -1: must be an integer, at least 0"},
		{"redactEmails", "yes", "redactEmails"}, // not a bool: the JSON decoder refuses it first
	}
	for _, env := range []string{"local", "dev", "staging", "prod"} {
		base := func(key string, val any) map[string]any {
			o := map[string]any{"p4LayerPath": layer, "p4LayerSha256": fakeLayerSHA256}
			if env == "local" {
				o = map[string]any{}
			}
			if key != "" {
				o[key] = val
			}
			return withSamples(map[string]any{ctxEnv: env, ctxAssetRoot: assets, ctxOverrides: o})
		}
		t.Run(env, func(t *testing.T) {
			ctx := cdkContext(t)
			for k, v := range base("", nil) {
				ctx[k] = v
			}
			if _, _, err := newApp(t.TempDir(), ctx); err != nil {
				t.Fatalf("%s as checked in (samples for placeholders): %v", env, err)
			}
			for _, b := range bad {
				ctx := cdkContext(t)
				for k, v := range base(b.key, b.val) {
					ctx[k] = v
				}
				_, _, err := newApp(t.TempDir(), ctx)
				if err == nil || !strings.Contains(err.Error(), b.want) {
					t.Errorf("%s = %v: err = %v, want %q", b.key, b.val, err, b.want)
				}
			}
		})
	}
}

// TestUnsuitableDefaultRefusedOutsideLocal: an environment that leaves out
// smtpFrom gets its documented default, criticizer@example.com, which the
// declaration names a placeholder: synth refuses it outside local instead of
// every e-mail carrying a domain nobody owns.
func TestUnsuitableDefaultRefusedOutsideLocal(t *testing.T) {
	layer, assets := fakeLayer(t), dummyAssets(t)
	for _, env := range []string{"dev", "staging", "prod"} {
		ctx := cdkContext(t)
		delete(ctx[ctxEnvironments].(map[string]any)[env].(map[string]any), "smtpFrom")
		ctx[ctxEnv], ctx[ctxAssetRoot] = env, assets
		ctx[ctxOverrides] = map[string]any{"p4LayerPath": layer, "p4LayerSha256": fakeLayerSHA256}
		_, _, err := newApp(t.TempDir(), ctx)
		if err == nil || !strings.Contains(err.Error(), `smtpFrom "criticizer@example.com": a placeholder, refused outside local`) {
			t.Errorf("%s without smtpFrom: err = %v, want the default refused as a placeholder", env, err)
		}
	}
}

// TestRequiredRefusedEmpty: a key the declaration requires (everywhere, or
// outside local) is refused empty where it is required, naming where.
func TestRequiredRefusedEmpty(t *testing.T) {
	layer, assets := fakeLayer(t), dummyAssets(t)
	cases := []struct {
		env, key string
		empty    any
		want     string // "" = accepted
	}{
		{"local", "p4Port", "", "p4Port is empty: required everywhere"},
		{"local", "p4LayerPath", "", ""},
		{"dev", "p4Port", "", "p4Port is empty: required everywhere"},
		{"staging", "llmModel", "", "llmModel is empty: required everywhere"},
		{"prod", "depotAllowList", []any{}, "depotAllowList is empty: required everywhere"},
		{"dev", "recipientDomains", []any{}, "recipientDomains is empty: required outside local"},
		{"staging", "p4LayerPath", "", "p4LayerPath is empty: required outside local"},
		{"prod", "smtpFrom", "", "smtpFrom is empty: required everywhere"},
	}
	for _, c := range cases {
		o := map[string]any{c.key: c.empty}
		if c.env != "local" && c.key != "p4LayerPath" {
			o["p4LayerPath"], o["p4LayerSha256"] = layer, fakeLayerSHA256
		}
		ctx := cdkContext(t)
		for k, v := range withSamples(map[string]any{ctxEnv: c.env, ctxAssetRoot: assets, ctxOverrides: o}) {
			ctx[k] = v
		}
		_, _, err := newApp(t.TempDir(), ctx)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s with %s empty: %v", c.env, c.key, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s with %s empty: err = %v, want %q", c.env, c.key, err, c.want)
		}
	}
}

// TestStackDefaultsAreTheDeclared: each declared key DefaultConfig always
// gives (outside local) holds the default the functions take without its
// variable (settings.Accepts), so leaving a key out of cdk.json means the
// same thing to the stack and to a function. reviewTimeoutSeconds is the one
// exception: the stack always sets the review function's timeout (900),
// while a review function without QUEUE_VISIBILITY_SECONDS takes its lease.
func TestStackDefaultsAreTheDeclared(t *testing.T) {
	code, err := jsonKeys(DefaultConfig("staging"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range settings.Declared {
		if len(s.Keys) != 1 || s.Keys[0] == "reviewTimeoutSeconds" || s.Accepts.Kind == settings.Text {
			continue
		}
		v, ok := code[s.Keys[0]]
		if !ok {
			continue // left out when zero: the function's default applies
		}
		checked++
		if settings.JSONText(v) != s.Accepts.Default {
			t.Errorf("%s: DefaultConfig gives %s, the declaration's default is %s", s.Keys[0], settings.JSONText(v), s.Accepts.Default)
		}
	}
	if checked < 15 {
		t.Errorf("checked %d defaults; the declaration and DefaultConfig share at least 15", checked)
	}
}

// TestDeclaredBoundsRefused: synth refuses each number just outside its
// declared range — a share's upper bound itself where the declaration
// excludes it (acceptanceMargin 1), one below the lower bound — and accepts
// the bounds it includes, from the declaration alone: no validator of its
// own checks these ranges. (0 for a key cdk.json leaves out when zero is
// "the function's default", never refused.)
func TestDeclaredBoundsRefused(t *testing.T) {
	base, err := jsonKeys(DefaultConfig("staging"))
	if err != nil {
		t.Fatal(err)
	}
	// refuses: whether key v is refused; unset when v is 0 for a key left
	// out of cdk.json when zero (the function's default, not checked).
	refuses := func(key string, v float64) (refused, set bool) {
		m := maps.Clone(base)
		m[key] = v
		b, _ := json.Marshal(m)
		var c EnvConfig
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s %v: %v", key, v, err)
		}
		var p problems
		validateDeclared(c, &p)
		keys, _ := jsonKeys(c)
		_, set = keys[key]
		return slices.ContainsFunc(p, func(s string) bool { return strings.HasPrefix(s, key+" ") }), set
	}
	checked := 0
	for _, s := range settings.Declared {
		a := s.Accepts
		if a.Kind != settings.Integer && a.Kind != settings.Number {
			continue
		}
		step := 1.0
		if a.Kind == settings.Number {
			step = 0.01
		}
		for _, k := range s.Keys {
			if strings.Contains(k, ".") {
				continue // an object's key: its own validator (swarmEvents)
			}
			out, in := []float64{a.Min - step}, []float64{a.Min}
			if a.ZeroToo {
				in = append(in, 0)
			}
			switch {
			case a.Below:
				out, in = append(out, a.Max), append(in, a.Max-step)
			case !math.IsInf(a.Max, 1):
				out, in = append(out, a.Max+step), append(in, a.Max)
			}
			for _, v := range out {
				if refused, set := refuses(k, v); set && !refused {
					t.Errorf("%s %v: accepted, outside %s", k, v, a.Span())
				}
			}
			for _, v := range in {
				if refused, _ := refuses(k, v); refused {
					t.Errorf("%s %v: refused, inside %s", k, v, a.Span())
				}
			}
			checked++
		}
	}
	for _, k := range []string{"acceptanceAlarmThreshold", "acceptanceMargin", "acceptanceMinSample"} {
		if a := declaredAccepts(k); a.Kind == settings.Text {
			t.Errorf("%s declares no range", k)
		}
	}
	t.Logf("%d declared ranges checked", checked)
}

// declaredAccepts is what the declaration of cdk.json key k accepts.
func declaredAccepts(k string) settings.Accepts {
	for _, s := range settings.Declared {
		if slices.Contains(s.Keys, k) {
			return s.Accepts
		}
	}
	return settings.Accepts{}
}

// TestEachFunctionGetsExactlyItsSettings: in dev, staging and prod as
// checked in, and with every optional setting given, each function's
// environment holds exactly the settings whose declarations name it among
// their readers, each with the value cdk.json gives its key: no variable a
// function does not read, none it reads left out.
func TestEachFunctionGetsExactlyItsSettings(t *testing.T) {
	reads := func(s settings.Setting, fn string) bool {
		return slices.Contains(s.ReadBy, fn) || slices.Equal(s.ReadBy, settings.All)
	}
	cases := map[string]map[string]any{
		"dev": checkedInContext(t, "dev", nil), "staging": checkedInContext(t, "staging", nil), "prod": checkedInContext(t, "prod", nil),
	}
	for _, ctx := range cases {
		ctx[ctxAssetRoot] = dummyAssets(t)
	}
	for name, over := range map[string]map[string]any{"everything, smtp and openai": everything("smtp", "openai"), "everything, ses and bedrock": everything("ses", "bedrock")} {
		o := map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
		for k, v := range over {
			o[k] = v
		}
		ctx := cdkContext(t)
		ctx[ctxEnv], ctx[ctxAssetRoot], ctx[ctxOverrides] = "staging", dummyAssets(t), o
		cases[name] = ctx
	}
	for name, ctx := range cases {
		t.Run(name, func(t *testing.T) {
			_, stack, err := newApp(t.TempDir(), ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, cfg, err := LoadConfig(stack.Node())
			if err != nil {
				t.Fatal(err)
			}
			values, err := jsonKeys(cfg)
			if err != nil {
				t.Fatal(err)
			}
			envs, err := functionEnvs(stack)
			if err != nil {
				t.Fatal(err)
			}
			for fn, env := range envs {
				for _, s := range settings.Declared {
					if len(s.Keys) == 0 || s.Computed {
						continue // the stack's own names, and variables it computes
					}
					for i, v := range s.Vars {
						got, set := env[v]
						want := settings.EnvText(values[s.Keys[i]])
						switch {
						case !reads(s, fn) && set:
							t.Errorf("%s has %s, but its declaration names readers %v", fn, v, s.ReadBy)
						case reads(s, fn) && got != want:
							t.Errorf("%s has %s=%q (set %v), want %q from %s", fn, v, got, set, want, s.Keys[i])
						}
					}
				}
			}
			if len(envs) < 6 {
				t.Errorf("checked %d functions, want every one of functions/", len(envs))
			}
		})
	}
}
