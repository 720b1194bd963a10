package result

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
)

func TestParseRules(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // substrings of the rejection reasons; nil = accepted
		check    func(Rules) bool
	}{
		{name: "yaml", in: "version: 1\nignore: ['*.pb.cc', 'third_party/...']\nseverity_threshold: medium\nmax_findings: 20\ndisabled_categories: [style]\ninstructions:\n  - paths: ['engine/**']\n    text: flag allocations in the frame loop\n",
			check: func(r Rules) bool {
				return len(r.Ignore) == 2 && r.SeverityThreshold == "medium" && r.MaxFindings == 20 && r.DisabledCategories[0] == "style" && r.Instructions[0].Text == "flag allocations in the frame loop"
			}},
		{name: "json", in: `{"max_findings": 3}`, check: func(r Rules) bool { return r.MaxFindings == 3 }},
		{name: "empty", in: "", check: func(r Rules) bool { return r.MaxFindings == 0 && len(r.Ignore) == 0 }},
		{name: "not yaml", in: "ignore: [unclosed", want: []string{"not valid YAML or JSON"}},
		{name: "unknown key", in: "severity: high\n", want: []string{"/: additional properties 'severity' not allowed"}},
		{name: "bad values", in: "max_findings: 0\nseverity_threshold: loud\n", want: []string{"/max_findings", "/severity_threshold"}},
		{name: "bad category", in: "disabled_categories: [naming]\n", want: []string{"/disabled_categories/0"}},
		{name: "instruction without paths", in: "instructions:\n  - text: hi\n", want: []string{"/instructions/0", "paths"}},
		{name: "top level list", in: "- a\n- b\n", want: []string{"got array, want object"}},
		{name: "too large", in: strings.Repeat("#", MaxRulesFileBytes+1), want: []string{"limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, rejected := ParseRules([]byte(tc.in))
			if tc.want == nil {
				if len(rejected) > 0 || !tc.check(r) {
					t.Errorf("rules %+v rejected %v", r, rejected)
				}
				return
			}
			all := strings.Join(rejected, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("rejections %q lack %q", all, w)
				}
			}
			if r.MaxFindings != 0 || len(r.Ignore) != 0 {
				t.Errorf("a rejected file yielded rules %+v", r)
			}
		})
	}
}

func TestRulePatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern, rel string
		want         bool
	}{
		{"*.generated.cs", "ui/gen/Menu.generated.cs", true},
		{"*.generated.cs", "ui/Menu.cs", false},
		{"engine/**", "engine/render/frame.cpp", true},
		{"engine/*", "engine/render/frame.cpp", false},
		{"engine/*.cpp", "engine/frame.cpp", true},
		{"third_party/...", "third_party/zlib/inflate.c", true},
		{"shaders/*.hlsl", "shaders/lit.hlsl", true},
		{"shaders/*.hlsl", "shaders/lit.glsl", false},
		{"build?.py", "build1.py", true},
		{"a.c", "src/a.c", true},
		{"**/third_party/**", "third_party/zlib/a.c", true},
		{"**/third_party/**", "depot/game/third_party/zlib/a.c", true},
		{"**/third_party/**", "depot/game/my_third_party/a.c", false},
	} {
		if got := matchPattern(tc.pattern, tc.rel); got != tc.want {
			t.Errorf("%q ~ %q = %v, want %v", tc.pattern, tc.rel, got, tc.want)
		}
	}
}

// TestRuleSetNearestRoot: a file takes the rules of the nearest root above
// it; a rejected root's files take the defaults; pipeline findings are never
// filtered; the smallest cap applies and what it hid is counted.
func TestRuleSetNearestRoot(t *testing.T) {
	rs := RuleSet{
		Defaults: Rules{SeverityThreshold: "medium"},
		Roots: []RootRules{
			{Root: "//depot/game/", Source: "a", Rules: Rules{Ignore: []string{"*.png"}, DisabledCategories: []string{"style"}}},
			{Root: "//depot/game/engine/", Source: "b", Rules: Rules{Ignore: []string{"*.gen.h"}, MaxFindings: 2}},
			{Root: "//depot/tools/", Source: "c", Rejected: []string{"bad"}},
		},
	}
	if !rs.Ignored("//depot/game/engine/x.gen.h") || rs.Ignored("//depot/game/engine/logo.png") || !rs.Ignored("//depot/game/logo.png") {
		t.Error("nearest root not applied")
	}
	f := func(file, sev, cat, rule string) domain.Finding {
		return domain.Finding{File: file, Severity: sev, Category: cat, RuleID: rule, Title: file + sev + cat}
	}
	kept, filtered, hidden := rs.Filter([]domain.Finding{
		f("//depot/game/a.cpp", "low", "style", ""),             // disabled category at //depot/game/
		f("//depot/game/a.cpp", "low", "correctness", ""),       // kept: game has no threshold
		f("//depot/tools/t.py", "low", "correctness", ""),       // rejected root: defaults, below medium
		f("//depot/tools/t.py", "high", "security", "secret/x"), // pipeline: never filtered
		f("//depot/game/engine/e.cpp", "critical", "correctness", ""),
	})
	if len(filtered) != 2 || len(hidden) != 1 || len(kept) != 2 || kept[0].Severity != "critical" || kept[1].RuleID != "secret/x" || hidden[0].Title != "//depot/game/a.cpplowcorrectness" {
		t.Errorf("kept %+v filtered %+v hidden %+v", kept, filtered, hidden)
	}
	applied, rejected := rs.Describe()
	if len(applied) != 2 || len(rejected) != 1 || rejected[0] != "c: bad (defaults applied)" {
		t.Errorf("applied %v rejected %v", applied, rejected)
	}
}

// TestRulesPromptGolden pins prompt 1.2.0 with a team's instructions: the
// system prompt (the cacheable prefix) is the same for every chunk, the
// instructions come in the user message, only for the chunk's own files.
func TestRulesPromptGolden(t *testing.T) {
	cs := domain.Changeset{Changelist: 4243, Status: "submitted", Description: "Frame loop",
		Files: []domain.FileChange{
			{DepotPath: "//depot/game/engine/frame.cpp", Action: "edit", Type: "text", Rev: 3,
				Diff: "@@ -1,2 +1,3 @@\n void Frame::Update() {\n+    auto* p = new Particle();\n }\n"},
			{DepotPath: "//depot/game/tools/build.py", Action: "edit", Type: "text", Rev: 9,
				Diff: "@@ -1,1 +1,2 @@\n import os\n+os.system(cmd)\n"},
		}}
	rs := RuleSet{Roots: []RootRules{{Root: "//depot/game/", Source: "//depot/game/.criticizer.yaml@4242",
		Rules: Rules{Instructions: []Instruction{{Paths: []string{"engine/**"}, Text: "Engine code: flag heap allocations in the frame loop."}}}}}}
	b := Budget{ContextTokens: 8000, MaxChunkFiles: 1}.For("gpt-4o")
	var got strings.Builder
	for _, version := range []string{BasePromptVersion, RulesPromptVersion} {
		plan := b.Plan(cs, version, rs)
		got.WriteString("=== " + version + " system ===\n" + SystemPrompt(version))
		for i, c := range plan.Chunks {
			p := plan.Prompt(cs, c, version)
			if p.System != SystemPrompt(version) {
				t.Error("the system prompt differs between chunks")
			}
			got.WriteString("=== user, chunk " + string(rune('1'+i)) + " ===\n" + p.User)
			has := strings.Contains(p.User, RulesMarker)
			if want := version == RulesPromptVersion && i == 0; has != want {
				t.Errorf("%s chunk %d: rules section = %v, want %v", version, i, has, want)
			}
		}
	}
	path := filepath.Join("testdata", "prompt-"+RulesPromptVersion+"-rules.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./shared/result -run TestRulesPromptGolden -update)", err)
	}
	if got.String() != string(want) {
		t.Errorf("prompt differs from %s:\n%s", path, got.String())
	}
}

// Digest names the rules in play: equal rules, equal digest; any change
// that keeps or withholds findings otherwise, another.
func TestRuleSetDigest(t *testing.T) {
	base := func() RuleSet {
		return RuleSet{Defaults: Rules{SeverityThreshold: "medium"}, Roots: []RootRules{{Root: "//depot/game/", Source: "a@1", Rules: Rules{MaxFindings: 5}}}}
	}
	if a, b := base(), base(); a.Digest() != b.Digest() || len(a.Digest()) != 64 {
		t.Fatalf("equal rules, digests %q and %q", a.Digest(), b.Digest())
	}
	for name, change := range map[string]func(*RuleSet){
		"threshold":          func(s *RuleSet) { s.Defaults.SeverityThreshold = "high" },
		"disabled category":  func(s *RuleSet) { s.Defaults.DisabledCategories = []string{"style"} },
		"cap":                func(s *RuleSet) { s.Roots[0].Rules.MaxFindings = 6 },
		"a rules file added": func(s *RuleSet) { s.Roots = append(s.Roots, RootRules{Root: "//depot/tools/", Source: "b@1"}) },
		"rejected":           func(s *RuleSet) { s.Roots[0].Rejected = []string{"bad"} },
	} {
		s := base()
		change(&s)
		if s.Digest() == base().Digest() {
			t.Errorf("%s: the digest did not change", name)
		}
	}
}

// TestGatesByPath: a rules file's gate_severity gates the findings in its
// files (its "off" too); findings elsewhere are left to the environment;
// a gate the schema does not know rejects the file.
func TestGatesByPath(t *testing.T) {
	rs := ResolveRules([]domain.RulesFile{
		{Root: "//depot/engine/", Source: "//depot/engine/.criticizer.yaml@1", Content: "version: 1\ngate_severity: high\n"},
		{Root: "//depot/tools/", Source: "//depot/tools/.criticizer.yaml@1", Content: "version: 1\ngate_severity: \"off\"\n"},
		{Root: "//depot/bad/", Source: "//depot/bad/.criticizer.yaml@1", Content: "version: 1\ngate_severity: severe\n"},
	})
	got := rs.Gates([]domain.Finding{
		{ID: "E", File: "//depot/engine/render.cpp"}, {ID: "T", File: "//depot/tools/build.py"},
		{ID: "G", File: "//depot/game/main.cpp"}, {ID: "B", File: "//depot/bad/x.c"},
	})
	if len(got) != 2 || got["E"] != "high" || got["T"] != "off" {
		t.Fatalf("Gates = %v, want E high and T off only", got)
	}
	if _, rejected := rs.Describe(); len(rejected) == 0 {
		t.Fatal("a gate_severity the schema does not know was accepted")
	}
}

// TestSuppressAfterByPath: a rules file's dismissal_suppression sets N for
// its files (0: never withheld), and never lists kinds always reported;
// files under no such rules follow the environment; a value outside the
// schema rejects the file.
func TestSuppressAfterByPath(t *testing.T) {
	rs := ResolveRules([]domain.RulesFile{
		{Root: "//depot/engine/", Source: "//depot/engine/.criticizer.yaml@1", Content: "version: 1\ndismissal_suppression:\n  after: 5\n  never: [standin.todo]\n"},
		{Root: "//depot/tools/", Source: "//depot/tools/.criticizer.yaml@1", Content: "version: 1\ndismissal_suppression:\n  after: 0\n"},
		{Root: "//depot/bad/", Source: "//depot/bad/.criticizer.yaml@1", Content: "version: 1\ndismissal_suppression:\n  after: -1\n"},
	})
	kind := func(f domain.Finding) string { return f.RuleID }
	got := rs.SuppressAfter([]domain.Finding{
		{ID: "E", RuleID: "standin.shell", File: "//depot/engine/a.py"}, {ID: "N", RuleID: "standin.todo", File: "//depot/engine/b.c"},
		{ID: "T", RuleID: "standin.shell", File: "//depot/tools/c.py"}, {ID: "G", RuleID: "standin.shell", File: "//depot/game/d.py"},
		{ID: "B", RuleID: "standin.shell", File: "//depot/bad/e.py"},
	}, kind)
	if fmt.Sprint(got) != "map[E:5 N:0 T:0]" {
		t.Fatalf("SuppressAfter = %v, want E 5, N 0 (never), T 0 (off), the others the environment's", got)
	}
	if _, rejected := rs.Describe(); len(rejected) != 1 || !strings.Contains(rejected[0], "bad") {
		t.Fatalf("rejected %v: want the file with after: -1", rejected)
	}
}
