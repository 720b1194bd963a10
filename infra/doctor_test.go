package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDoctorFunction: in every checked-in environment the pre-flight runs
// where fetch runs (its VPC placement and p4 layer), meets each outside
// system with the settings the function that calls it has, reads only the
// secrets those checks need, and touches no table, queue or bucket.
func TestDoctorFunction(t *testing.T) {
	for _, env := range []string{"dev", "staging", "prod"} {
		t.Run(env, func(t *testing.T) {
			_, m := synth(t, checkedInContext(t, env, nil))
			doc := props(m, "DoctorFunction")
			if doc == nil {
				t.Fatal("no DoctorFunction")
			}
			fetch := props(m, "FetchFunction")
			for _, k := range []string{"VpcConfig", "Layers"} {
				got, _ := json.Marshal(doc[k])
				want, _ := json.Marshal(fetch[k])
				if string(got) != string(want) {
					t.Errorf("%s = %s, want fetch's %s", k, got, want)
				}
			}
			if env == "prod" && doc["VpcConfig"] == nil {
				t.Error("prod: the doctor is outside the VPC fetch runs in")
			}
			vars := func(id string) map[string]any {
				e, _ := props(m, id)["Environment"].(map[string]any)
				v, _ := e["Variables"].(map[string]any)
				return v
			}
			mine := vars("DoctorFunction")
			for _, k := range []string{"P4PORT", "P4USER", "P4_BIN", "DEPOT_ALLOWLIST", "P4TRUST_FINGERPRINT", "LLM_MODEL", "LLM_PROVIDER", "SMTP_FROM", "EMAIL_PROVIDER"} {
				if _, ok := mine[k]; !ok && k != "P4TRUST_FINGERPRINT" {
					t.Errorf("doctor lacks %s", k)
				}
			}
			for _, other := range []string{"FetchFunction", "ReviewFunction", "NotifyFunction"} {
				for k, theirs := range vars(other) {
					v, ok := mine[k]
					if !ok || strings.HasSuffix(k, "_QUEUE_URL") || strings.HasSuffix(k, "_DLQ_URL") {
						continue
					}
					a, _ := json.Marshal(v)
					b, _ := json.Marshal(theirs)
					if string(a) != string(b) {
						t.Errorf("%s = %s, but %s has %s: the doctor would check another system", k, a, other, b)
					}
				}
			}
			g := grants(t, m, "DoctorFunction")
			for _, s := range g {
				action, _, _ := strings.Cut(s, " on ")
				for _, banned := range []string{"dynamodb:", "sqs:", "s3:", "ses:Send", "lambda:"} {
					if strings.HasPrefix(action, banned) {
						t.Errorf("doctor may %s", s)
					}
				}
			}
			if !allowed(g, "secretsmanager:GetSecretValue", "P4Secret") {
				t.Errorf("doctor cannot read the p4 credential: %v", g)
			}
			for _, secret := range []string{"WebhookSecret", "DeliveryKeySecret", "SwarmTokenSecret"} {
				if allowed(g, "secretsmanager:GetSecretValue", secret) {
					t.Errorf("doctor reads %s, which no check needs", secret)
				}
			}
			provider, _ := mine["LLM_PROVIDER"].(string)
			if provider == "bedrock" && !strings.Contains(strings.Join(g, " "), "bedrock:InvokeModel") {
				t.Errorf("bedrock: the doctor cannot call the model: %v", g)
			}
			if mail, _ := mine["EMAIL_PROVIDER"].(string); mail == "ses" && !strings.Contains(strings.Join(g, " "), "ses:GetEmailIdentity") {
				t.Errorf("ses: the doctor cannot read the identity: %v", g)
			}
		})
	}
}
