package main

import (
	"bytes"
	"os"
	"testing"
)

// TestHandlesGenerated: shared/settings/handles.go is the declaration's (a
// variable added, dropped or of another kind changes it).
func TestHandlesGenerated(t *testing.T) {
	want, err := handles()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile("../../shared/settings/handles.go"); err != nil || !bytes.Equal(got, want) {
		t.Errorf("shared/settings/handles.go is not the declaration's (%v): run go generate ./shared/settings", err)
	}
}
