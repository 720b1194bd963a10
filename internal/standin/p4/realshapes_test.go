package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The real-shape fixtures (testdata/realshapes, sources in its README.md)
// are records as real servers send them. These tests fail when the
// stand-in's output for a fixture's scenario drifts from the fixture, key
// by key; shared/p4 reads the same fixtures through its own readers.

func readFixture(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "realshapes", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// sameRecords compares decoded stdout lines with the fixture's records,
// naming each key that is missing, extra or different.
func sameRecords(t *testing.T, got []line, want []map[string]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				t.Errorf("record %d: no %q (want %q)", i, k, wv)
			} else if fmt.Sprint(gv) != fmt.Sprint(wv) {
				t.Errorf("record %d: %q = %q, want %q", i, k, gv, wv)
			}
		}
		for k, gv := range g {
			if _, ok := w[k]; !ok {
				t.Errorf("record %d: extra key %q = %q", i, k, gv)
			}
		}
	}
}

func TestRealShapeProtects(t *testing.T) {
	var fx struct {
		Scenarios []struct {
			Name    string
			User    string
			Server  map[string]any
			Records []map[string]any
		}
	}
	readFixture(t, "protects.json", &fx)
	if len(fx.Scenarios) < 8 {
		t.Fatalf("only %d scenarios", len(fx.Scenarios))
	}
	for _, sc := range fx.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			port := copyDepot(t)
			b, _ := json.Marshal(sc.Server)
			os.WriteFile(filepath.Join(port, "server.json"), b, 0o644)
			lines, raw, stderr, exit := p4env(t, map[string]string{"P4PORT": port, "P4USER": sc.User}, "", "-ztag", "-Mj", "protects")
			if exit != 0 || stderr != "" {
				t.Fatalf("exit %d stderr %q stdout %q", exit, stderr, raw)
			}
			sameRecords(t, lines, sc.Records)
		})
	}
}

func TestRealShapeFilelog(t *testing.T) {
	var fx struct {
		Scenarios []struct {
			Name    string
			Change  map[string]any
			Args    []string
			Records []map[string]any
		}
	}
	readFixture(t, "filelog.json", &fx)
	for _, sc := range fx.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			port := copyDepot(t)
			b, _ := json.Marshal(sc.Change)
			os.WriteFile(filepath.Join(port, "changes", fmt.Sprint(sc.Change["change"])+".json"), b, 0o644)
			lines, stderr, exit := p4(t, port, append([]string{"-ztag", "-Mj"}, sc.Args...)...)
			if exit != 0 || stderr != "" {
				t.Fatalf("exit %d stderr %q", exit, stderr)
			}
			sameRecords(t, lines, sc.Records)
		})
	}
}

func TestRealShapeTrust(t *testing.T) {
	var fx struct {
		Fingerprint string
		Scenarios   []struct {
			Name    string
			Trusted string
			Stdout  map[string]any
		}
		StderrForm struct{ Prefix string } `json:"stderr_form"`
	}
	readFixture(t, "trust.json", &fx)
	for _, sc := range fx.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			port := copyDepot(t)
			os.WriteFile(filepath.Join(port, "server.json"), []byte(`{"fingerprint":"`+fx.Fingerprint+`"}`), 0o644)
			dir := t.TempDir()
			env := map[string]string{"P4PORT": port, "P4USER": "svc", "P4TRUST": filepath.Join(dir, "trust")}
			if sc.Trusted != "" {
				if _, _, stderr, exit := p4env(t, env, "", "-ztag", "-Mj", "trust", "-i", sc.Trusted); exit != 0 {
					t.Fatalf("trust -i: exit %d %s", exit, stderr)
				}
			}
			lines, _, stderr, exit := p4env(t, env, "", "-ztag", "-Mj", "describe", "-s", "12345")
			want := map[string]any{}
			for k, v := range sc.Stdout {
				if s, ok := v.(string); ok {
					v = strings.NewReplacer("{port}", port, "{fp}", fx.Fingerprint).Replace(s)
				}
				want[k] = v
			}
			if exit != 1 || stderr != "" {
				t.Errorf("exit %d stderr %q, want 1 and nothing on stderr", exit, stderr)
			}
			sameRecords(t, lines, []map[string]any{want})
		})
	}
	t.Run("mismatch on stderr", func(t *testing.T) {
		port := copyDepot(t)
		os.WriteFile(filepath.Join(port, "server.json"), []byte(`{"fingerprint":"`+fx.Fingerprint+`","trust_failure_stderr":true}`), 0o644)
		env := map[string]string{"P4PORT": port, "P4USER": "svc", "P4TRUST": filepath.Join(t.TempDir(), "trust")}
		p4env(t, env, "", "-ztag", "-Mj", "trust", "-i", strings.Repeat("2E:", 19)+"2E")
		_, raw, stderr, exit := p4env(t, env, "", "-ztag", "-Mj", "describe", "-s", "12345")
		if exit != 1 || raw != "" || !strings.HasPrefix(stderr, fx.StderrForm.Prefix) || !strings.Contains(stderr, fx.Fingerprint) {
			t.Errorf("exit %d stdout %q stderr %q", exit, raw, stderr)
		}
	})
}
