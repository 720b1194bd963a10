package result

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/failure"
)

var changed = []string{"//depot/main/src/a.c", "//depot/main/src/b.go", "src/local.c"}

// findingJSON returns a valid finding as a JSON object map, with edits applied.
func findingJSON(edits map[string]any) map[string]any {
	f := map[string]any{
		"id": "F1", "severity": "high", "category": "security", "title": "Unbounded copy",
		"file": "//depot/main/src/a.c", "line": 10, "message": "strcpy may overflow",
	}
	for k, v := range edits {
		if v == nil {
			delete(f, k)
			continue
		}
		f[k] = v
	}
	return f
}

func response(edits map[string]any, findings ...any) []byte {
	top := map[string]any{"schema_version": SchemaVersion, "prompt_version": StablePromptVersion, "findings": findings}
	if findings == nil {
		top["findings"] = []any{}
	}
	for k, v := range edits {
		if v == nil {
			delete(top, k)
			continue
		}
		top[k] = v
	}
	b, err := json.Marshal(top)
	if err != nil {
		panic(err)
	}
	return b
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name   string
		raw    []byte
		opts   Options
		reason string
		field  string
	}{
		{"invalid json", []byte(`{"schema_version":`), Options{}, ReasonInvalidJSON, ""},
		{"prose wrapper", []byte("Here is the review:\n{}"), Options{}, ReasonInvalidJSON, ""},
		{"code fence", []byte("```json\n{}\n```"), Options{}, ReasonInvalidJSON, ""},
		{"trailing data", append(response(nil), []byte(` {}`)...), Options{}, ReasonInvalidJSON, ""},
		{"empty", nil, Options{}, ReasonInvalidJSON, ""},
		{"too large", response(map[string]any{"summary": strings.Repeat("x", MaxResponseBytes)}), Options{}, ReasonResponseTooLarge, ""},
		{"top level array", []byte(`[]`), Options{}, ReasonSchemaMismatch, ""},
		{"missing findings", response(map[string]any{"findings": nil}), Options{}, ReasonMissingRequiredField, "findings"},
		{"missing schema_version", response(map[string]any{"schema_version": nil}), Options{}, ReasonMissingRequiredField, "schema_version"},
		{"missing prompt_version", response(map[string]any{"prompt_version": nil}), Options{}, ReasonMissingRequiredField, "prompt_version"},
		{"findings object", response(map[string]any{"findings": map[string]any{}}), Options{}, ReasonSchemaMismatch, "findings"},
		{"findings null", []byte(`{"schema_version":"1.0","prompt_version":"1.0.0","findings":null}`), Options{}, ReasonSchemaMismatch, "findings"},
		{"schema_version number", response(map[string]any{"schema_version": 1.0}), Options{}, ReasonSchemaMismatch, "schema_version"},
		{"schema_version pattern", response(map[string]any{"schema_version": "v1"}), Options{}, ReasonSchemaMismatch, "schema_version"},
		{"prompt_version pattern", response(map[string]any{"prompt_version": "1"}), Options{}, ReasonSchemaMismatch, "prompt_version"},
		{"summary not string", response(map[string]any{"summary": 3}), Options{}, ReasonSchemaMismatch, "summary"},
		{"meta not object", response(map[string]any{"meta": "x"}), Options{}, ReasonSchemaMismatch, "meta"},
		{"unknown top-level key", response(map[string]any{"verdict": "ok"}), Options{}, ReasonSchemaMismatch, "verdict"},
		{"schema major ahead", response(map[string]any{"schema_version": "2.0"}), Options{}, ReasonIncompatibleVersion, "schema_version"},
		{"schema major behind", response(map[string]any{"schema_version": "0.9"}), Options{}, ReasonIncompatibleVersion, "schema_version"},
		{"schema version overflow", response(map[string]any{"schema_version": "99999999999999999999.0"}), Options{}, ReasonIncompatibleVersion, "schema_version"},
		{"prompt patch drift not allowed", response(map[string]any{"prompt_version": "1.0.1"}), Options{}, ReasonIncompatibleVersion, "prompt_version"},
		{"prompt minor drift", response(map[string]any{"prompt_version": "1.1.0"}), Options{AllowPromptPatchDrift: true}, ReasonIncompatibleVersion, "prompt_version"},
		{"prompt major drift", response(map[string]any{"prompt_version": "2.0.0"}), Options{AllowPromptPatchDrift: true}, ReasonIncompatibleVersion, "prompt_version"},
		{"incompatible before findings", response(map[string]any{"schema_version": "3.1"}, "not-a-finding"), Options{}, ReasonIncompatibleVersion, "schema_version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, diags, err := Parse(tt.raw, changed, tt.opts)
			if err == nil {
				t.Fatalf("Parse accepted: %+v", res)
			}
			if c := failure.Classify(err); c != failure.SchemaInvalid {
				t.Errorf("class = %s, want SCHEMA_INVALID", c)
			}
			var rej *RejectError
			if !errors.As(err, &rej) {
				t.Fatalf("error %v does not wrap *RejectError", err)
			}
			if rej.Reason != tt.reason || rej.Field != tt.field {
				t.Errorf("reject = %s/%q, want %s/%q (%s)", rej.Reason, rej.Field, tt.reason, tt.field, rej.Detail)
			}
			last := diags[len(diags)-1]
			if last.Kind != KindRejected || last.Reason != tt.reason || last.Index != -1 {
				t.Errorf("last diagnostic = %v, want response_rejected/%s", last, tt.reason)
			}
			if diags.Counts()[KindFindingDropped+"/"+ReasonIncompatibleVersion] > 0 || res.Findings != nil {
				t.Errorf("rejected response produced findings or finding diagnostics: %v", diags)
			}
		})
	}
}

func TestParseAcceptsVersions(t *testing.T) {
	tests := []struct {
		name  string
		edits map[string]any
		opts  Options
	}{
		{"exact", nil, Options{}},
		{"newer schema minor", map[string]any{"schema_version": "1.7"}, Options{}},
		{"prompt without patch equals x.y.0", map[string]any{"prompt_version": "1.0"}, Options{}},
		{"prompt patch drift allowed", map[string]any{"prompt_version": "1.0.9"}, Options{AllowPromptPatchDrift: true}},
		{"configured rollout prompt", map[string]any{"prompt_version": "1.1.0"}, Options{PromptVersion: "1.1.0"}},
		{"surrounding whitespace", map[string]any{"schema_version": " 1.0\n", "prompt_version": "\t1.0.0 "}, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags, err := Parse(response(tt.edits, findingJSON(nil)), changed, tt.opts)
			if err != nil {
				t.Fatalf("Parse: %v (%v)", err, diags)
			}
		})
	}
}

func TestParseDropsFindings(t *testing.T) {
	tests := []struct {
		name    string
		finding any
		reason  string
		field   string
		file    string
		line    int
	}{
		{"not an object", "F1", ReasonSchemaMismatch, "", "", 0},
		{"missing id", findingJSON(map[string]any{"id": nil}), ReasonMissingRequiredField, "id", "//depot/main/src/a.c", 10},
		{"missing severity", findingJSON(map[string]any{"severity": nil}), ReasonMissingRequiredField, "severity", "//depot/main/src/a.c", 10},
		{"missing category", findingJSON(map[string]any{"category": nil}), ReasonMissingRequiredField, "category", "//depot/main/src/a.c", 10},
		{"missing title", findingJSON(map[string]any{"title": nil}), ReasonMissingRequiredField, "title", "//depot/main/src/a.c", 10},
		{"missing file", findingJSON(map[string]any{"file": nil}), ReasonMissingRequiredField, "file", "", 10},
		{"missing line", findingJSON(map[string]any{"line": nil}), ReasonMissingRequiredField, "line", "//depot/main/src/a.c", 0},
		{"missing message", findingJSON(map[string]any{"message": nil}), ReasonMissingRequiredField, "message", "//depot/main/src/a.c", 10},
		{"blank title", findingJSON(map[string]any{"title": "   "}), ReasonMissingRequiredField, "title", "//depot/main/src/a.c", 10},
		{"missing beats enum", findingJSON(map[string]any{"id": nil, "severity": "urgent"}), ReasonMissingRequiredField, "id", "//depot/main/src/a.c", 10},
		{"severity enum", findingJSON(map[string]any{"severity": "urgent"}), ReasonInvalidEnumValue, "severity", "//depot/main/src/a.c", 10},
		{"severity case", findingJSON(map[string]any{"severity": "High"}), ReasonInvalidEnumValue, "severity", "//depot/main/src/a.c", 10},
		{"category enum", findingJSON(map[string]any{"category": "bug"}), ReasonInvalidEnumValue, "category", "//depot/main/src/a.c", 10},
		{"confidence enum", findingJSON(map[string]any{"confidence": "certain"}), ReasonInvalidEnumValue, "confidence", "//depot/main/src/a.c", 10},
		{"line zero", findingJSON(map[string]any{"line": 0}), ReasonInvalidLineRange, "line", "//depot/main/src/a.c", 0},
		{"line negative", findingJSON(map[string]any{"line": -4}), ReasonInvalidLineRange, "line", "//depot/main/src/a.c", 0},
		{"line negative string", findingJSON(map[string]any{"line": "-4"}), ReasonInvalidLineRange, "line", "//depot/main/src/a.c", 0},
		{"end_line zero", findingJSON(map[string]any{"end_line": 0}), ReasonInvalidLineRange, "end_line", "//depot/main/src/a.c", 10},
		{"end_line before line", findingJSON(map[string]any{"end_line": 9}), ReasonInvalidLineRange, "end_line", "//depot/main/src/a.c", 10},
		{"line huge", findingJSON(map[string]any{"line": 1e12}), ReasonInvalidLineRange, "line", "//depot/main/src/a.c", 0},
		{"line fractional", findingJSON(map[string]any{"line": 10.5}), ReasonSchemaMismatch, "line", "//depot/main/src/a.c", 0},
		{"line word", findingJSON(map[string]any{"line": "ten"}), ReasonSchemaMismatch, "line", "//depot/main/src/a.c", 0},
		{"line bool", findingJSON(map[string]any{"line": true}), ReasonSchemaMismatch, "line", "//depot/main/src/a.c", 0},
		{"suggestion not string", findingJSON(map[string]any{"suggestion": 3}), ReasonSchemaMismatch, "suggestion", "//depot/main/src/a.c", 10},
		{"undocumented key", findingJSON(map[string]any{"fix": "x"}), ReasonSchemaMismatch, "fix", "//depot/main/src/a.c", 10},
		{"file not changed", findingJSON(map[string]any{"file": "//depot/main/src/other.c"}), ReasonFileNotInChanged, "file", "//depot/main/src/other.c", 10},
		{"part of a segment is not a suffix", findingJSON(map[string]any{"file": "rc/a.c"}), ReasonFileNotInChanged, "file", "rc/a.c", 10},
		{"dot dot is not resolved", findingJSON(map[string]any{"file": "//depot/main/x/../src/a.c"}), ReasonFileNotInChanged, "file", "//depot/main/x/../src/a.c", 10},
		{"case differs", findingJSON(map[string]any{"file": "//depot/main/src/A.c"}), ReasonFileNotInChanged, "file", "//depot/main/src/A.c", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := findingJSON(map[string]any{"id": "OK"})
			res, diags, err := Parse(response(nil, good, tt.finding), changed, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(res.Findings) != 1 || res.Findings[0].ID != "OK" {
				t.Fatalf("findings = %+v, want only OK", res.Findings)
			}
			var got []Diagnostic
			for _, d := range diags {
				if d.Kind == KindFindingDropped {
					got = append(got, d)
				}
			}
			if len(got) != 1 {
				t.Fatalf("dropped diagnostics = %v, want 1", got)
			}
			d := got[0]
			if d.Reason != tt.reason || d.Field != tt.field || d.File != tt.file || d.Line != tt.line || d.Index != 1 {
				t.Errorf("diagnostic = %v\nwant reason=%s field=%q file=%q line=%d index=1", d, tt.reason, tt.field, tt.file, tt.line)
			}
		})
	}
}

func TestParseCoercions(t *testing.T) {
	tests := []struct {
		name    string
		finding map[string]any
		changed []string
		want    map[string]any // expected finding fields after parsing
		reasons []string       // coercion reasons, in order
	}{
		{"trim strings", findingJSON(map[string]any{"id": " F1 ", "severity": "high\n", "title": "  Unbounded copy"}), changed,
			map[string]any{"id": "F1", "severity": "high", "title": "Unbounded copy"}, []string{ReasonTrimmed, ReasonTrimmed, ReasonTrimmed}},
		{"backslashes", findingJSON(map[string]any{"file": `src\local.c`}), changed,
			map[string]any{"file": "src/local.c"}, []string{ReasonPathSeparator}},
		{"line string", findingJSON(map[string]any{"line": "12", "end_line": " 14 "}), changed,
			map[string]any{"line": 12, "end_line": 14}, []string{ReasonTrimmed, ReasonIntegralString, ReasonIntegralString}},
		{"line string with zero fraction", findingJSON(map[string]any{"line": "12.0"}), changed,
			map[string]any{"line": 12}, []string{ReasonIntegralString}},
		{"line number with zero fraction", findingJSON(map[string]any{"line": json.Number("12.0")}), changed,
			map[string]any{"line": 12}, []string{ReasonIntegralNumber}},
		{"dot slash", findingJSON(map[string]any{"file": "./src/local.c"}), changed,
			map[string]any{"file": "src/local.c"}, []string{ReasonPathMatched}},
		{"depot path without slashes", findingJSON(map[string]any{"file": "depot/main/src/a.c"}), changed,
			map[string]any{"file": "//depot/main/src/a.c"}, []string{ReasonPathMatched}},
		{"windows dot slash", findingJSON(map[string]any{"file": `.\src\local.c`}), changed,
			map[string]any{"file": "src/local.c"}, []string{ReasonPathSeparator, ReasonPathMatched}},
		{"changed list in local form", findingJSON(map[string]any{"file": "//depot/x.c"}), []string{"./depot/x.c"},
			map[string]any{"file": "./depot/x.c"}, []string{ReasonPathMatched}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, diags, err := Parse(response(nil, tt.finding), tt.changed, Options{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(res.Findings) != 1 {
				t.Fatalf("findings = %+v; diags %v", res.Findings, diags)
			}
			b, _ := json.Marshal(res.Findings[0])
			var got map[string]any
			_ = json.Unmarshal(b, &got)
			for k, v := range tt.want {
				if want, _ := json.Marshal(v); string(want) != mustJSON(got[k]) {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
			var reasons []string
			for _, d := range diags {
				if d.Kind != KindCoercion {
					t.Errorf("unexpected diagnostic %v", d)
					continue
				}
				if d.FindingID != "F1" || d.Index != 0 || d.Field == "" || d.Old == d.New {
					t.Errorf("incomplete coercion diagnostic %v", d)
				}
				reasons = append(reasons, d.Reason)
			}
			if strings.Join(reasons, ",") != strings.Join(tt.reasons, ",") {
				t.Errorf("coercions = %v, want %v", reasons, tt.reasons)
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestParseRedactsFreeTextInDiagnostics(t *testing.T) {
	secretish := "  uses password hunter2 here  "
	raw := response(map[string]any{"summary": " s3cr3t summary "},
		findingJSON(map[string]any{"message": secretish, "suggestion": secretish}))
	_, diags, err := Parse(raw, changed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(diags)
	if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "s3cr3t") {
		t.Fatalf("diagnostics leak free text: %s", b)
	}
	if n := diags.Counts()[KindCoercion+"/"+ReasonTrimmed]; n != 3 {
		t.Errorf("trim coercions = %d, want 3 (%v)", n, diags)
	}
}

// The warning is about the answer, not a count: a response whose only
// finding is dropped gets it too, and one that keeps any finding does not.
func TestParseAllFindingsDroppedWarning(t *testing.T) {
	for _, tt := range []struct {
		name     string
		findings []any
		want     bool
	}{
		{"the only finding dropped", []any{findingJSON(map[string]any{"file": "nope.c"})}, true},
		{"every finding dropped", []any{findingJSON(map[string]any{"file": "nope.c"}), findingJSON(map[string]any{"id": "F2", "severity": "bad"})}, true},
		{"one of two kept", []any{findingJSON(nil), findingJSON(map[string]any{"id": "F2", "file": "nope.c"})}, false},
		{"no findings at all", nil, false},
	} {
		_, diags, err := Parse(response(nil, tt.findings...), changed, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := diags.Counts()[KindWarning+"/"+ReasonAllFindingsDropped] > 0; got != tt.want {
			t.Errorf("%s: all_findings_dropped warning %v, want %v (%v)", tt.name, got, tt.want, diags)
		}
	}
}

func TestParseAllFindingsDropped(t *testing.T) {
	raw := response(nil, findingJSON(map[string]any{"severity": "bad"}), findingJSON(map[string]any{"file": "nope.c"}))
	res, diags, err := Parse(raw, changed, Options{})
	if err != nil {
		t.Fatalf("all-dropped must not be an error: %v", err)
	}
	if res.Findings == nil || len(res.Findings) != 0 {
		t.Fatalf("findings = %#v, want empty non-nil", res.Findings)
	}
	if b, _ := json.Marshal(res); !strings.Contains(string(b), `"findings":[]`) {
		t.Errorf("result marshals as %s", b)
	}
	if diags.Counts()[KindWarning+"/"+ReasonAllFindingsDropped] == 0 {
		t.Errorf("missing all_findings_dropped warning: %v", diags)
	}
	if got := diags.Counts()[KindFindingDropped+"/"+ReasonInvalidEnumValue] + diags.Counts()[KindFindingDropped+"/"+ReasonFileNotInChanged]; got != 2 {
		t.Errorf("per-finding diagnostics = %v", diags)
	}
}

func TestParseEmptyFindingsIsClean(t *testing.T) {
	res, diags, err := Parse(response(map[string]any{"summary": "LGTM"}), changed, Options{})
	if err != nil || len(diags) != 0 || res.Findings == nil || res.Summary != "LGTM" {
		t.Fatalf("res=%+v diags=%v err=%v", res, diags, err)
	}
}

func TestParseNewerMinorIgnoresUnknownFields(t *testing.T) {
	raw := response(map[string]any{"schema_version": "1.2", "verdict": "ok"},
		findingJSON(map[string]any{"cwe": "CWE-120", "severity": "critical"}))
	res, diags, err := Parse(raw, changed, Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(res.Findings) != 1 || res.SchemaVersion != "1.2" {
		t.Fatalf("res = %+v", res)
	}
	if n := diags.Counts()[KindFieldDropped+"/"+ReasonUnknownField]; n != 2 {
		t.Errorf("field_dropped = %d, want 2: %v", n, diags)
	}
}

func TestParseKeepsOptionalFieldsAndMeta(t *testing.T) {
	raw := response(map[string]any{"summary": "one issue", "meta": map[string]any{"model": "x", "tokens": 12}},
		findingJSON(map[string]any{"end_line": 12, "suggestion": "use strlcpy", "confidence": "high", "rule_id": "C001"}))
	res, diags, err := Parse(raw, changed, Options{})
	if err != nil || len(diags) != 0 {
		t.Fatalf("err=%v diags=%v", err, diags)
	}
	f := res.Findings[0]
	if f.EndLine != 12 || f.Suggestion != "use strlcpy" || f.Confidence != "high" || f.RuleID != "C001" || res.Meta["model"] != "x" {
		t.Errorf("res = %+v", res)
	}
}

func TestRepoKey(t *testing.T) {
	for in, want := range map[string]string{
		"//depot/a.c": "depot/a.c", "./././a.c": "a.c", `.\a.c`: "a.c", "/./a.c": "a.c", "a/./b": "a/./b", "./": "",
	} {
		if got := repoKey(in); got != want {
			t.Errorf("repoKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAmbiguousNormalizedPathDoesNotMatch(t *testing.T) {
	raw := response(nil, findingJSON(map[string]any{"file": "depot/x.c"}))
	_, diags, _ := Parse(raw, []string{"//depot/x.c", "/depot/x.c"}, Options{})
	if diags.Counts()[KindFindingDropped+"/"+ReasonFileNotInChanged] == 0 {
		t.Errorf("ambiguous key matched: %v", diags)
	}
}

func TestDiagnosticsAreMachineReadable(t *testing.T) {
	_, diags, _ := Parse(response(nil, findingJSON(map[string]any{"line": "7"})), changed, Options{})
	b, err := json.Marshal(diags)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"kind":"coercion_applied","reason":"integral_string_to_integer","finding_id":"F1","index":0,"field":"line","old":"\"7\"","new":"7"}]`
	if string(b) != want {
		t.Errorf("diagnostics JSON\n got %s\nwant %s", b, want)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(response(nil, findingJSON(nil)), "//depot/main/src/a.c")
	f.Add(response(map[string]any{"schema_version": "1.3", "x": 1}, findingJSON(map[string]any{"line": "3", "y": 2})), "src/local.c")
	f.Add([]byte(`{"schema_version":"1.0","prompt_version":"1.0.0","findings":[{"line":1e999}]}`), "")
	f.Add([]byte(`{"findings":[null,1,"a",[],{}]}`), "./a")
	f.Add([]byte(`not json`), "")
	f.Fuzz(func(t *testing.T, raw []byte, file string) {
		res, diags, err := Parse(raw, []string{file, "//depot/main/src/a.c"}, Options{AllowPromptPatchDrift: len(file)%2 == 0})
		if err != nil {
			if failure.Classify(err) != failure.SchemaInvalid || len(diags) == 0 || diags[len(diags)-1].Kind != KindRejected {
				t.Fatalf("bad rejection: %v %v", err, diags)
			}
			return
		}
		if res.Findings == nil {
			t.Fatal("accepted result with nil findings")
		}
		for _, fd := range res.Findings {
			if fd.Line < 1 || (fd.EndLine != 0 && fd.EndLine < fd.Line) || fd.ID == "" {
				t.Fatalf("invalid finding kept: %+v", fd)
			}
		}
		// An accepted result must itself be valid against the schema.
		b, _ := json.Marshal(res)
		if _, d2, err := Parse(b, []string{file, "//depot/main/src/a.c"}, Options{AllowPromptPatchDrift: true, PromptVersion: res.PromptVersion}); err != nil {
			t.Fatalf("re-parse of accepted result failed: %v %v\n%s", err, d2, b)
		}
	})
}

// TestParsePathSuffix: a path as models write it, relative to some root, is
// reconciled when it is a whole-segment suffix of exactly one changed path.
func TestParsePathSuffix(t *testing.T) {
	changed := []string{"//depot/projectA/src/net/buffer.c", "//depot/projectA/src/io/buffer.c", "//depot/projectA/src/net/socket.c"}
	tests := []struct {
		file, want string // want "" = dropped
	}{
		{"src/net/buffer.c", "//depot/projectA/src/net/buffer.c"},
		{"net/buffer.c", "//depot/projectA/src/net/buffer.c"},
		{"socket.c", "//depot/projectA/src/net/socket.c"},
		{"./projectA/src/net/socket.c", "//depot/projectA/src/net/socket.c"},
		{"buffer.c", ""},     // ambiguous: net/ and io/
		{"src/buffer.c", ""}, // not a suffix of either
		{"et/socket.c", ""},  // not whole segments
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f := findingJSON(map[string]any{"file": tt.file})
			res, diags, err := Parse(response(nil, f), changed, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if len(res.Findings) != 0 || diags.Counts()[KindFindingDropped+"/"+ReasonFileNotInChanged] == 0 {
					t.Errorf("findings %+v diags %v, want dropped as file_not_in_changed_files", res.Findings, diags)
				}
				return
			}
			if len(res.Findings) != 1 || res.Findings[0].File != tt.want || diags.Counts()[KindCoercion+"/"+ReasonPathMatched] == 0 {
				t.Errorf("findings %+v diags %v, want reconciled to %s", res.Findings, diags, tt.want)
			}
		})
	}
}
