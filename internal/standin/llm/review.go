package llm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/criticizer/criticizer/shared/udiff"
)

// The prompt's documented markers, as a model would read them.
const (
	changedFilesMarker = "CHANGED_FILES_JSON:"
	diffsMarker        = "DIFFS:"
	fileHeaderPrefix   = "FILE: "
)

// Fallback versions echoed when a prompt names none.
const (
	defaultPromptVersion = "1.0.0"
	defaultSchemaVersion = "1.0"
)

// ReviewResult is the stand-in's answer, in the schema's field order.
type ReviewResult struct {
	SchemaVersion string         `json:"schema_version"`
	PromptVersion string         `json:"prompt_version"`
	Summary       string         `json:"summary"`
	Findings      []Finding      `json:"findings"`
	Meta          map[string]any `json:"meta,omitempty"`
}

// Finding is one stand-in finding.
type Finding struct {
	ID         string `json:"id"`
	Severity   string `json:"severity"`
	Category   string `json:"category"`
	Title      string `json:"title"`
	File       string `json:"file"`
	Line       int    `json:"line"`
	Message    string `json:"message"`
	Suggestion string `json:"suggestion,omitempty"`
	Confidence string `json:"confidence"`
	RuleID     string `json:"rule_id"`
}

// rule is one deterministic "insight": a substring on an added line. Without
// a message, the rest of the line is the message: a model obeying a planted
// instruction (prompt injection), which the channels must neutralise.
type rule struct {
	needle, id, severity, category, title, message, suggestion string
}

var rules = []rule{
	{"strcpy(", "standin.strcpy", "high", "security", "Unbounded strcpy",
		"strcpy copies without a bound and can overflow the destination buffer.",
		"Use a bounded copy (strlcpy or snprintf) with the destination size."},
	{"sprintf(", "standin.sprintf", "high", "security", "Unbounded sprintf",
		"sprintf writes without a bound and can overflow the destination buffer.",
		"Use snprintf with the destination size."},
	{"shell=True", "standin.shell", "high", "security", "Command run through the shell",
		"A command built from strings runs through the shell: arguments with shell syntax are executed.",
		"Pass an argument list and drop shell=True."},
	{").Result;", "standin.task-result", "medium", "reliability", "Blocking wait on a Task",
		"Task.Result blocks the calling thread and can deadlock on a synchronization context.",
		"await the task instead."},
	{"TODO", "standin.todo", "low", "maintainability", "TODO left in code",
		"A TODO marker was added; track the work in an issue or finish it before submitting.", ""},
	{"[REDACTED:", "standin.redacted-secret", "info", "security", "Secret redacted before review",
		"A secret was redacted from this line before review; make sure no credential is committed to the depot.",
		"Move the credential to the secret store and rotate it."},
	{"REVIEWER-NOTE:", "standin.injected", "medium", "maintainability", "Note for the reviewer", "", ""},
}

// severityMark on an added line sets its findings' severity, as a real
// model grades by context (our convention, not an upstream's).
var severityMark = regexp.MustCompile(`standin-severity: (critical|high|medium|low|info)\b`)

// Review answers a review prompt's user message: one finding per rule match
// on each added line, numbered in the new revision. promptVersion and
// schemaVersion, when set, override the prompt's.
func Review(user, promptVersion, schemaVersion string) ReviewResult {
	p := readPrompt(user)
	res := ReviewResult{
		SchemaVersion: cmp.Or(schemaVersion, p.schemaVersion, defaultSchemaVersion),
		PromptVersion: cmp.Or(promptVersion, p.promptVersion, defaultPromptVersion),
		Findings:      []Finding{},
		Meta:          map[string]any{"reviewer": "llm-standin", "changed_files": len(p.changed)},
	}
	files := map[string]bool{}
	for _, fd := range p.files {
		for _, l := range udiff.NewLines(fd.diff) {
			for _, r := range rules {
				if !l.Added || !strings.Contains(l.Text, r.needle) {
					continue
				}
				msg, sev := cmp.Or(r.message, strings.TrimSpace(l.Text[strings.Index(l.Text, r.needle)+len(r.needle):])), r.severity
				if m := severityMark.FindStringSubmatch(l.Text); m != nil {
					sev = m[1]
				}
				res.Findings = append(res.Findings, Finding{ID: fmt.Sprintf("SI-%03d", len(res.Findings)+1), Severity: sev,
					Category: r.category, Title: r.title, File: fd.path, Line: l.N, Message: msg, Suggestion: r.suggestion,
					Confidence: "high", RuleID: r.id})
				files[fd.path] = true
			}
		}
	}
	if n := len(res.Findings); n == 0 {
		res.Summary = "No issues found in the changed lines."
	} else {
		res.Summary = fmt.Sprintf("%d finding(s) in %d file(s).", n, len(files))
	}
	return res
}

type promptData struct {
	promptVersion, schemaVersion string
	changed                      []string
	files                        []fileDiff
}

type fileDiff struct{ path, diff string }

// readPrompt reads the header, the changed files, and after DIFFS: the file
// blocks: a FILE: line with its JSON, then exactly diff_bytes of diff, so
// diff text cannot forge a header.
func readPrompt(user string) promptData {
	var p promptData
	rest := user
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		switch {
		case p.promptVersion == "" && strings.HasPrefix(line, "prompt_version: "):
			p.promptVersion = strings.TrimSpace(strings.TrimPrefix(line, "prompt_version: "))
		case p.schemaVersion == "" && strings.HasPrefix(line, "schema_version: "):
			p.schemaVersion = strings.TrimSpace(strings.TrimPrefix(line, "schema_version: "))
		case line == changedFilesMarker && p.changed == nil:
			var list string
			list, rest, _ = strings.Cut(rest, "\n")
			if json.Unmarshal([]byte(list), &p.changed) != nil {
				p.changed = []string{}
			}
		case line == diffsMarker && p.changed != nil:
			p.files = readFiles(rest)
			return p
		}
	}
	return p
}

func readFiles(s string) []fileDiff {
	var out []fileDiff
	for s != "" {
		var line string
		line, s, _ = strings.Cut(s, "\n")
		if !strings.HasPrefix(line, fileHeaderPrefix) {
			continue // NOTE: lines and blank lines
		}
		var h struct {
			Path      string `json:"path"`
			DiffBytes int    `json:"diff_bytes"`
		}
		if json.Unmarshal([]byte(strings.TrimPrefix(line, fileHeaderPrefix)), &h) != nil || h.DiffBytes < 0 {
			continue
		}
		n := min(h.DiffBytes, len(s))
		out = append(out, fileDiff{path: h.Path, diff: s[:n]})
		s = s[n:]
	}
	return out
}
