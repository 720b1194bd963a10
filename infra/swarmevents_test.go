package main

import (
	"slices"
	"strings"
	"testing"
)

// TestSwarmEventsPerEnvironment synthesizes dev, staging and prod as
// checked in (the receiver off) and with swarmEvents on: the route is
// always there (the function answers 404 while off); the secret, the
// variables the receiver reads and its grants on the jobs table exist
// exactly when it is on.
func TestSwarmEventsPerEnvironment(t *testing.T) {
	for _, env := range []string{"dev", "staging", "prod"} {
		for _, on := range []bool{false, true} {
			t.Run(env+map[bool]string{false: " off", true: " on"}[on], func(t *testing.T) {
				ctx := cdkContext(t)
				ctx[ctxEnv] = env
				delete(ctx, ctxAssetRoot)
				over := map[string]any{"p4LayerPath": fakeLayer(t), "p4LayerSha256": fakeLayerSHA256, "swarmUrl": "https://swarm.studio.test"}
				if on {
					over["swarmEvents"] = map[string]any{"enabled": true, "signatureHeader": "X-Hub-Signature-256"}
				}
				ctx[ctxOverrides] = over
				_, m := synth(t, ctx)
				res := resources(m)
				route := false
				for _, r := range res {
					if r["Type"] == "AWS::ApiGateway::Resource" && r["Properties"].(map[string]any)["PathPart"] == "swarm-events" {
						route = true
					}
				}
				if !route {
					t.Error("no /webhooks/swarm-events route")
				}
				_, secret := res["SwarmEventsSecret"]
				vars := envVars(m, "WebhookFunction")
				_, secretVar := vars["SWARM_EVENTS_SECRET_ID"]
				reads := allowed(grants(t, m, "WebhookFunction"), "secretsmanager:GetSecretValue", "SwarmEventsSecret")
				access := tableAccess(t, m, "WebhookFunction")
				claims := slices.Contains(access["dynamodb:PutItem"], itemSwarmEvent) && slices.Contains(access["dynamodb:DeleteItem"], itemSwarmEvent)
				raises := slices.Contains(access["dynamodb:UpdateItem"], itemOutcome) && slices.Contains(access["dynamodb:Query"], itemOutcome)
				if secret != on || secretVar != on || reads != on || claims != on || raises != on {
					t.Fatalf("secret %v, SWARM_EVENTS_SECRET_ID %v, reads it %v, claims %v, raises outcomes %v; want all %v (access %v)", secret, secretVar, reads, claims, raises, on, access)
				}
				if on && vars["SWARM_EVENTS_SIGNATURE_HEADER"] != "X-Hub-Signature-256" || on && vars["SWARM_EVENTS_DELIVERY_HEADER"] != "X-Swarm-Delivery" {
					t.Errorf("header names %v %v: want the configured one and the default", vars["SWARM_EVENTS_SIGNATURE_HEADER"], vars["SWARM_EVENTS_DELIVERY_HEADER"])
				}
			})
		}
	}
}

func TestSwarmEventsValidation(t *testing.T) {
	cases := []struct {
		c    EnvConfig
		want string
	}{
		{EnvConfig{SwarmEvents: SwarmEventsConfig{Enabled: true}}, "needs swarmUrl"},
		{EnvConfig{SwarmURL: "https://s", SwarmEvents: SwarmEventsConfig{Enabled: true, EventHeader: "X Event"}}, "eventHeader"},
		{EnvConfig{SwarmURL: "https://s", SwarmEvents: SwarmEventsConfig{Enabled: true, ToleranceSeconds: 5}}, "toleranceSeconds"},
		{EnvConfig{SwarmURL: "https://s", SwarmEvents: SwarmEventsConfig{Enabled: true, TimestampHeader: "X-Swarm-Timestamp", ToleranceSeconds: 60}}, ""},
		{EnvConfig{SwarmEvents: SwarmEventsConfig{EventHeader: "X Event"}}, ""}, // off: not checked
	}
	for _, tc := range cases {
		var p problems
		validateSwarmEvents(tc.c, &p)
		got := strings.Join(p, "; ")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: problems %q, want %q", tc.c.SwarmEvents, got, tc.want)
		}
	}
}
