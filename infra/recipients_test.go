package main

import (
	"strings"
	"testing"
)

// TestRecipientPolicySettings: synth refuses a non-local environment with no
// recipientDomains, naming the setting, and malformed entries; dev, staging
// and prod as checked in hand the policy to the webhook, fetch and notify.
func TestRecipientPolicySettings(t *testing.T) {
	base := map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256, "llmEndpoint": "https://api.openai.com", "p4Port": "ssl:p4:1666",
		"smtpHost": "smtp.example.com", "recipientDomains": []any{"studio.test"}, "smtpFrom": "criticizer@studio.test",
		"p4TrustFingerprint": testFingerprint, "depotAllowList": []any{"//depot/projectA/..."}}
	with := func(k string, v any) map[string]any {
		o := map[string]any{}
		for kk, vv := range base {
			o[kk] = vv
		}
		if v == nil {
			delete(o, k)
		} else {
			o[k] = v
		}
		return o
	}
	for _, env := range []string{"dev", "staging", "prod"} {
		for _, c := range []struct {
			over map[string]any
			want string
		}{
			{with("recipientDomains", nil), "recipientDomains is empty"},
			{with("recipientDomains", []any{}), "recipientDomains is empty"},
			{with("recipientDomains", []any{"@example.com"}), `recipientDomains entry "@example.com"`},
			{with("recipientDomains", []any{"*"}), `recipientDomains entry "*"`},
			{with("maxRecipients", 51), "maxRecipients 51"},
		} {
			ctx := map[string]any{ctxEnv: env, ctxOverrides: c.over}
			if _, _, err := LoadConfig(testApp(t, ctx).Node()); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %v: error %v, want one naming %q", env, c.over, err, c.want)
			}
		}
		ok := map[string]any{ctxEnv: env, ctxOverrides: base}
		if _, _, err := LoadConfig(testApp(t, ok).Node()); err != nil {
			t.Errorf("%s with recipientDomains: %v", env, err)
		}
	}
	// local may leave it to the default (the stand-in depot's domain).
	local := map[string]any{ctxEnv: "local", ctxOverrides: map[string]any{}}
	if _, cfg, err := LoadConfig(testApp(t, local).Node()); err != nil || len(cfg.RecipientDomains) == 0 {
		t.Errorf("local: %v, domains %v", err, cfg.RecipientDomains)
	}

	checkedIn := cdkContext(t)
	for _, env := range []string{"dev", "staging", "prod"} {
		t.Run(env, func(t *testing.T) {
			ctx := map[string]any{}
			for k, v := range checkedIn {
				ctx[k] = v
			}
			ctx[ctxEnv] = env
			ctx[ctxOverrides] = map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256}
			delete(ctx, ctxAssetRoot)
			_, m := synth(t, ctx)
			for _, fn := range []string{"WebhookFunction", "FetchFunction", "NotifyFunction"} {
				vars := props(m, fn)["Environment"].(map[string]any)["Variables"].(map[string]any)
				d, _ := vars["RECIPIENT_DOMAINS"].(string)
				if d == "" || strings.Contains(d, "*,") || vars["MAX_RECIPIENTS"] != "10" {
					t.Errorf("%s: RECIPIENT_DOMAINS %q MAX_RECIPIENTS %v", fn, d, vars["MAX_RECIPIENTS"])
				}
				for _, dom := range strings.Split(d, ",") {
					if dom != "studio.test" && dom != "*.corp.studio.test" {
						t.Errorf("%s: domain %q is not one of the declared sample domains", fn, dom)
					}
				}
			}
			for _, fn := range []string{"ReviewFunction", "SweeperFunction"} {
				if _, ok := props(m, fn)["Environment"].(map[string]any)["Variables"].(map[string]any)["RECIPIENT_DOMAINS"]; ok {
					t.Errorf("%s has the recipient policy: it sends nothing", fn)
				}
			}
		})
	}
}
