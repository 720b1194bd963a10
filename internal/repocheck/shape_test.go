package repocheck

import (
	"slices"
	"strings"
	"testing"
)

// TestNoPackageNamedReview: "review" alone means a Swarm review
// (docs/design.md, "Words with one meaning"); the result contract is
// shared/result, the llm stage shared/llmstage and its function functions/llm.
func TestNoPackageNamedReview(t *testing.T) {
	bad, err := AmbiguousPackages("../..", "shared", "functions")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// overLongAllowed are the functions still over MaxFuncLines, each with the
// work that removes it. It is empty, and nothing may be added here.
var overLongAllowed = []string{}

// TestSharedFunctionsAreShort: no non-test function in shared/ is over
// MaxFuncLines lines, so each reads top to bottom as named steps. It lists
// every offender, not the first.
func TestSharedFunctionsAreShort(t *testing.T) {
	long, err := LongFunctions("../..", MaxFuncLines, "shared")
	if err != nil {
		t.Fatal(err)
	}
	var allowed []string
	for _, l := range long {
		if slices.Contains(overLongAllowed, allowedKey(l)) {
			allowed = append(allowed, allowedKey(l))
			continue
		}
		t.Errorf("%s (over %d: split it into named steps)", l, MaxFuncLines)
	}
	for _, a := range overLongAllowed {
		if !slices.Contains(allowed, a) {
			t.Errorf("%s is allowed to be long but is not (or is gone): remove it from overLongAllowed", a)
		}
	}
}

// allowedKey is "file: name" of a LongFunctions line, "file:line: name is N lines".
func allowedKey(line string) string {
	file, rest, _ := strings.Cut(line, ":")
	_, rest, _ = strings.Cut(rest, ": ")
	name, _, _ := strings.Cut(rest, " is ")
	return file + ": " + name
}

// TestShapeChecksFindOffenders: both checks on a tree built for them report
// every offender (a package named review by its directory, one by its
// clause; two long functions, a method by its receiver) and pass the rest
// (a test file's long function, a function of exactly the limit).
func TestShapeChecksFindOffenders(t *testing.T) {
	root := t.TempDir()
	long := func(name string, lines int) string {
		return "func " + name + " {\n" + strings.Repeat("\t_ = 0\n", lines-2) + "}\n"
	}
	files := map[string]string{
		"shared/review/a.go":       "package review\n",
		"shared/other/b.go":        "package review\n\ntype T struct{}\n\n" + long("(t *T) Long()", 81) + long("AtLimit()", 80),
		"shared/other/b_test.go":   "package review_test\n\n" + long("TestLong()", 200),
		"shared/fine/c.go":         "package fine\n\n" + long("Long()", 120),
		"functions/llm/main.go":    "package main\n",
		"functions/reviewer/x.go":  "package main\n",
		"functions/review/main.go": "package main\n",
	}
	writeTree(t, root, files)
	names, err := AmbiguousPackages(root, "shared", "functions")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	want := []string{
		`functions/review/main.go: directory "review": name the package for the one thing it is`,
		`shared/other/b.go: package review: name the package for the one thing it is`,
		`shared/other/b_test.go: package review: name the package for the one thing it is`,
		`shared/review/a.go: directory "review": name the package for the one thing it is`,
	}
	if !slices.Equal(names, want) {
		t.Errorf("AmbiguousPackages =\n%s\nwant\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	lengths, err := LongFunctions(root, MaxFuncLines, "shared")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lengths)
	wantLong := []string{"shared/fine/c.go:3: Long is 120 lines", "shared/other/b.go:5: T.Long is 81 lines"}
	if !slices.Equal(lengths, wantLong) {
		t.Errorf("LongFunctions = %q, want %q", lengths, wantLong)
	}
	if k := allowedKey(wantLong[1]); k != "shared/other/b.go: T.Long" {
		t.Errorf("allowedKey = %q", k)
	}
}
