package main

import (
	"encoding/json"
	"os"
	"testing"
)

// cdkContext is cdk.json's context as checked in.
func cdkContext(t *testing.T) map[string]any {
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
