package main

import (
	"strings"
	"testing"
)

// TestNotifyChannelSettings: every environment defaults to e-mail only (the
// notify function and the sweeper get no Swarm login); Swarm comments are turned on per
// environment and need swarmUrl; bad lists fail synth naming the setting.
func TestNotifyChannelSettings(t *testing.T) {
	base := map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256, "llmEndpoint": "https://api.openai.com", "p4Port": "ssl:p4:1666",
		"smtpHost": "smtp.example.com", "recipientDomains": []any{"studio.test"},
		"p4TrustFingerprint": testFingerprint, "depotAllowList": []any{"//depot/projectA/..."}}
	with := func(kv ...any) map[string]any {
		o := map[string]any{}
		for k, v := range base {
			o[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			o[kv[i].(string)] = kv[i+1]
		}
		return o
	}
	swarmOn := []any{"email", "swarm-comments"}
	for _, env := range []string{"dev", "staging", "prod"} {
		for _, c := range []struct {
			over map[string]any
			want string
		}{
			{with("notifyChannels", []any{"email", "slack"}), `notifyChannels entry "slack"`},
			{with("notifyChannels", []any{"swarm-comments"}), `"email" must be one of them`},
			{with("notifyChannels", []any{"email", "email"}), `names "email" twice`},
			{with("notifyChannels", swarmOn), "swarmUrl is empty"},
			{with("notifyChannels", swarmOn, "swarmUrl", "https://swarm.example.com", "swarmCommentWindowSeconds", 20), "swarmCommentWindowSeconds 20"},
			{with("notifyChannels", swarmOn, "swarmUrl", "https://swarm.example.com", "swarmMaxInlineComments", 501), "swarmMaxInlineComments 501"},
			{with("notifyChannels", swarmOn, "swarmUrl", "https://swarm.example.com", "swarmMaxInlineComments", -1), "swarmMaxInlineComments -1"},
		} {
			ctx := map[string]any{ctxEnv: env, ctxOverrides: c.over}
			if _, _, err := LoadConfig(testApp(t, ctx).Node()); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %v: error %v, want one naming %q", env, c.over, err, c.want)
			}
		}
	}
	for _, c := range []struct {
		env       string
		over      map[string]any
		channels  string
		swarmAPI  bool
		windowVar any
		maxInline any // SWARM_MAX_INLINE_COMMENTS; nil: unset (the function's 50)
	}{
		{"dev", with(), "", false, nil, nil}, // unset: the declared "email"
		{"staging", with(), "", false, nil, nil},
		{"prod", with(), "", false, nil, nil},
		{"dev", with("notifyChannels", swarmOn, "swarmUrl", "https://swarm.example.com", "swarmCommentWindowSeconds", 60, "swarmMaxInlineComments", 5), "email,swarm-comments", true, "60", "5"},
		{"staging", with("notifyChannels", swarmOn, "swarmUrl", "https://swarm.example.com"), "email,swarm-comments", true, nil, nil},
		{"prod", with("notifyChannels", swarmOn, "swarmUrl", "https://swarm.example.com", "swarmCommentWindowSeconds", 300, "swarmMaxInlineComments", 100), "email,swarm-comments", true, "300", "100"},
	} {
		t.Run(c.env+"/"+c.channels, func(t *testing.T) {
			ctx := map[string]any{ctxEnv: c.env, ctxOverrides: c.over}
			_, m := synth(t, ctx)
			vars := props(m, "NotifyFunction")["Environment"].(map[string]any)["Variables"].(map[string]any)
			if got := vars["NOTIFY_CHANNELS"]; got != c.channels && (c.channels != "" || got != nil) {
				t.Errorf("NOTIFY_CHANNELS %v, want %q", vars["NOTIFY_CHANNELS"], c.channels)
			}
			if _, ok := vars["SWARM_API_SECRET_ID"]; ok != c.swarmAPI {
				t.Errorf("SWARM_API_SECRET_ID present %v, want %v", ok, c.swarmAPI)
			}
			if vars["SWARM_COMMENT_WINDOW_SECONDS"] != c.windowVar {
				t.Errorf("SWARM_COMMENT_WINDOW_SECONDS %v, want %v", vars["SWARM_COMMENT_WINDOW_SECONDS"], c.windowVar)
			}
			if vars["SWARM_MAX_INLINE_COMMENTS"] != c.maxInline {
				t.Errorf("SWARM_MAX_INLINE_COMMENTS %v, want %v", vars["SWARM_MAX_INLINE_COMMENTS"], c.maxInline)
			}
			// The sweeper reconciles comment rows as the same login, over
			// the same window, and may read that login's secret.
			sv := props(m, "SweeperFunction")["Environment"].(map[string]any)["Variables"].(map[string]any)
			_, sweeperAPI := sv["SWARM_API_SECRET_ID"]
			if sweeperAPI != c.swarmAPI || sv["SWARM_COMMENT_WINDOW_SECONDS"] != c.windowVar || (c.swarmAPI && sv["SWARM_URL"] != "https://swarm.example.com") {
				t.Errorf("sweeper environment %v: want the Swarm login %v, window %v", sv, c.swarmAPI, c.windowVar)
			}
			if got := allowed(grants(t, m, "SweeperFunction"), "secretsmanager:GetSecretValue", "SwarmApiSecret"); got != c.swarmAPI {
				t.Errorf("sweeper may read the Swarm API secret: %v, want %v", got, c.swarmAPI)
			}
		})
	}
}

// TestSwarmGateSetting: the gate is off unless an environment sets it (and
// participants are not e-mailed what Swarm tells them); set,
// the review function, which decides the gate (shared/decide), gets
// SWARM_GATE_SEVERITY; a severity the review does
// not use, or a gate without Swarm, fails synth naming the setting.
func TestSwarmGateSetting(t *testing.T) {
	for _, env := range []string{"dev", "staging", "prod"} {
		for _, c := range []struct {
			over map[string]any
			want any
		}{
			{nil, nil},
			{map[string]any{"swarmUrl": "https://swarm.example.com", "swarmGateSeverity": "off"}, "off"},
			{map[string]any{"swarmUrl": "https://swarm.example.com", "swarmGateSeverity": "high"}, "high"},
		} {
			_, m := synth(t, checkedInContext(t, env, c.over))
			vars := props(m, "ReviewFunction")["Environment"].(map[string]any)["Variables"].(map[string]any)
			if vars["SWARM_GATE_SEVERITY"] != c.want {
				t.Errorf("%s %v: SWARM_GATE_SEVERITY %v, want %v", env, c.over, vars["SWARM_GATE_SEVERITY"], c.want)
			}
			notifyVars := props(m, "NotifyFunction")["Environment"].(map[string]any)["Variables"].(map[string]any)
			if _, ok := notifyVars["SWARM_EMAIL_PARTICIPANTS"]; ok {
				t.Errorf("%s %v: SWARM_EMAIL_PARTICIPANTS set; the default is no duplicate e-mail", env, c.over)
			}
		}
		for over, want := range map[string]map[string]any{
			"swarmGateSeverity \"severe\"": {"swarmUrl": "https://swarm.example.com", "swarmGateSeverity": "severe"},
			"swarmUrl is empty":            {"swarmGateSeverity": "high"},
		} {
			ctx := checkedInContext(t, env, want)
			if _, _, err := LoadConfig(testApp(t, ctx).Node()); err == nil || !strings.Contains(err.Error(), over) {
				t.Errorf("%s %v: error %v, want one naming %q", env, want, err, over)
			}
		}
	}
}
