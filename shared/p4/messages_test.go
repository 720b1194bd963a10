package p4

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/failure"
)

// TestReferenceMessagesThroughRunner runs every message row of the reference
// (docs/reference/p4-cli.md, as internal/standin/p4/testdata/messages.json)
// through the real Runner and the stand-in binary: each must give its class,
// and the server's text must reach the error (the dead letter's reason).
func TestReferenceMessagesThroughRunner(t *testing.T) {
	b, err := os.ReadFile("../../internal/standin/p4/testdata/messages.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Rows []struct {
			Name     string         `json:"name"`
			Server   map[string]any `json:"server"`
			Fault    bool           `json:"fault"`
			Port     string         `json:"port"`
			Args     []string       `json:"args"`
			Message  string         `json:"message"`
			Severity int            `json:"severity"`
			Generic  int            `json:"generic"`
			Stderr   string         `json:"stderr"`
			Class    string         `json:"class"`
		}
	}
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) < 11 {
		t.Fatalf("only %d rows", len(table.Rows))
	}
	for i, row := range table.Rows {
		t.Run(row.Name, func(t *testing.T) {
			depotDir := fixtureDepot(t)
			if row.Server != nil {
				b, _ := json.Marshal(row.Server)
				os.WriteFile(filepath.Join(depotDir, "server.json"), b, 0o644)
			}
			cl := 70000 + i
			if row.Fault {
				writeChange(t, depotDir, map[string]any{"change": cl, "status": "submitted", "user": "alice", "client": "ws", "desc": "x\n", "files": []any{},
					"faults": []any{map[string]any{"command": "describe", "message": row.Message, "severity": row.Severity, "generic": row.Generic}}})
			}
			r, logs := newTestRunner(t, depotDir, func(c *Config) {
				if row.Port != "" {
					c.Port = row.Port
				}
			})
			var args []string
			for _, a := range row.Args {
				args = append(args, strings.ReplaceAll(a, "{cl}", fmt.Sprint(cl)))
			}
			recs, err := r.Run(context.Background(), args[0], args[1:]...)
			if err == nil {
				t.Fatalf("Run succeeded with %v", recs)
			}
			if got := failure.Classify(err); string(got) != row.Class {
				t.Errorf("class = %s, want %s (%v)", got, row.Class, err)
			}
			reason := row.Message
			if row.Stderr != "" {
				reason = row.Stderr
			}
			if !strings.Contains(err.Error(), reason) {
				t.Errorf("error %q does not carry the server's text %q", err, reason)
			}
			if row.Class == string(failure.PolicyRejected) && !strings.Contains(logs.String(), `"event":"p4_protected_namespace"`) {
				t.Errorf("no security event logged: %s", logs)
			}
		})
	}
}
