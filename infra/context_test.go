package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/criticizer/criticizer/shared/settings"
)

// cdkContext is cdk.json's context with each non-local environment's
// placeholders replaced by the declared samples (settings.Samples): synth
// refuses placeholders outside local (TestCheckedInPlaceholdersRefused reads
// them as checked in).
func cdkContext(t *testing.T) map[string]any {
	t.Helper()
	ctx := cdkContextAsCheckedIn(t)
	for name, env := range ctx[ctxEnvironments].(map[string]any) {
		if name == "local" {
			continue
		}
		for k, v := range settings.SamplesUnder(nil) {
			env.(map[string]any)[k] = v
		}
	}
	return ctx
}

// cdkContextAsCheckedIn is cdk.json's context as checked in.
func cdkContextAsCheckedIn(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../cdk.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Context
}
