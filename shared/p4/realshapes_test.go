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

func readRealShape(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(realShapes + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestMovedFromAnyIndex: "moved from" is found at whatever index of the
// revision's integration records it comes (perforce/p4transfer puts it at
// 1 and 2 when the move/add was also integrated); a malformed one is
// SCHEMA_INVALID, and a revision with no move has no origin.
func TestMovedFromAnyIndex(t *testing.T) {
	rec := func(hows ...string) Record {
		r := Record{"depotFile": "//depot/projectA/new", "rev0": "1", "action0": "move/add"}
		for n, h := range hows {
			k := fmt.Sprintf("0,%d", n)
			r["how"+k], r["file"+k], r["srev"+k], r["erev"+k] = h, fmt.Sprintf("//depot/projectA/from%d", n), "#none", fmt.Sprintf("#%d", n+2)
		}
		return r
	}
	for _, tt := range []struct {
		name string
		rec  Record
		want origin
		ok   bool
	}{
		{"index 0", rec("moved from"), origin{"//depot/projectA/from0", 2}, true},
		{"index 1", rec("copy from", "moved from"), origin{"//depot/projectA/from1", 3}, true},
		{"index 2", rec("copy from", "ignored", "moved from"), origin{"//depot/projectA/from2", 4}, true},
		{"no move", rec("copy from", "ignored"), origin{}, false},
		{"no integrations", rec(), origin{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := movedFrom(tt.rec)
			if err != nil || ok != tt.ok || got != tt.want {
				t.Errorf("movedFrom = %+v, %v, %v; want %+v, %v", got, ok, err, tt.want, tt.ok)
			}
		})
	}
	bad := rec("copy from", "moved from")
	bad["erev0,1"] = "#none"
	if _, _, err := movedFrom(bad); failure.Classify(err) != failure.SchemaInvalid {
		t.Errorf("bad erev: %v, want SCHEMA_INVALID", err)
	}
}

// TestMovesFromRealShapes fetches each recorded filelog scenario's change
// (testdata/realshapes/filelog.json) from the stand-in, which prints the
// fixture's records: every move is reviewed as the diff from its origin,
// whatever index "moved from" has, never as a new file.
func TestMovesFromRealShapes(t *testing.T) {
	var fx struct {
		Scenarios []struct {
			Name      string
			MoveIndex int `json:"move_index"`
			Change    map[string]any
			Records   []Record
		}
	}
	readRealShape(t, "filelog.json", &fx)
	seen := map[int]bool{}
	for _, sc := range fx.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			seen[sc.MoveIndex] = true
			o, ok, err := movedFrom(sc.Records[0])
			if err != nil || !ok || o.path != "//depot/projectA/original/original_file" || o.rev != 2 {
				t.Fatalf("the fixture's record read as %+v, %v, %v", o, ok, err)
			}
			depotDir := fixtureDepot(t)
			writeChange(t, depotDir, sc.Change)
			r, _ := newTestRunner(t, depotDir, nil)
			f, _ := NewFetcher(r, testAllowList(t, nil), nil)
			cl := int64(sc.Change["change"].(float64))
			cs, err := f.Fetch(context.Background(), cl, false)
			if err != nil {
				t.Fatal(err)
			}
			d := cs.Files[0].Diff
			if !strings.HasPrefix(d, "--- //depot/projectA/original/original_file#2\n+++ //depot/projectA/new/new_file#1\n") {
				t.Errorf("the move is not reviewed as a rename:\n%s", d)
			}
		})
	}
	for _, n := range []int{0, 1, 2} {
		if !seen[n] {
			t.Errorf("no scenario with moved from at index %d", n)
		}
	}
}

// TestTrustFailuresFromRealShapes: a server key that differs from the
// pinned one is SECURITY_FAILURE whether the client prints it as a -Mj
// message on stdout (testdata/realshapes/trust.json) or as "Perforce client
// error:" text on stderr (the reference's form); an unknown key stays a
// retryable NETWORK_TIMEOUT on either channel.
func TestTrustFailuresFromRealShapes(t *testing.T) {
	var fx struct {
		Fingerprint string
		Scenarios   []struct {
			Name    string
			Trusted string
			Class   string
		}
	}
	readRealShape(t, "trust.json", &fx)
	for _, sc := range fx.Scenarios {
		for _, stderr := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stderr=%v", sc.Name, stderr), func(t *testing.T) {
				depotDir := fixtureDepot(t)
				srv, _ := json.Marshal(map[string]any{"fingerprint": fx.Fingerprint, "trust_failure_stderr": stderr})
				os.WriteFile(filepath.Join(depotDir, "server.json"), srv, 0o644)
				r, logs := newTestRunner(t, depotDir, func(c *Config) {
					c.Trust = filepath.Join(t.TempDir(), "trust")
					c.TrustFingerprint = sc.Trusted
				})
				_, err := r.Run(context.Background(), "describe", "-s", "12345")
				if got := failure.Classify(err); string(got) != sc.Class {
					t.Fatalf("class %s, want %s (%v)", got, sc.Class, err)
				}
				mismatch := sc.Class == string(failure.SecurityFailure)
				if mismatch != strings.Contains(logs.String(), `"event":"p4_trust_mismatch"`) {
					t.Errorf("security event logged: %v, want %v: %s", !mismatch, mismatch, logs)
				}
			})
		}
	}
}
