//go:build integration

package integration

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/swarm"
)

// The two files of the review under TestSwarmReviewRerunAcceptance. copy.c
// has an unbounded strcpy in version 1 (a high finding: an open task); in
// version 2 it is fixed with snprintf, and a new sprintf is added (a new
// finding); its tail of small functions is the same in both versions (the
// model is not shown it again). log.c has a TODO (a low finding: a plain
// comment) and is the same in both versions.
const (
	rerunCopyC = "//depot/projectA/src/net/copy.c"
	rerunLogC  = "//depot/projectA/src/net/log.c"

	copyTail = "\nint unit_01(void) { return 1; }\nint unit_02(void) { return 2; }\nint unit_03(void) { return 3; }\n" +
		"int unit_04(void) { return 4; }\nint unit_05(void) { return 5; }\nint unit_06(void) { return 6; }\n" +
		"int unit_07(void) { return 7; }\nint unit_08(void) { return 8; }\nint unit_09(void) { return 9; }\n"
	copyV1 = "#include <string.h>\n\nvoid copy(char *d, const char *s)\n{\n\tstrcpy(d, s);\n}\n" + copyTail
	copyV2 = "#include <stdio.h>\n#include <string.h>\n\nvoid copy(char *d, size_t n, const char *s)\n{\n\tsnprintf(d, n, \"%s\", s);\n}\n\n" +
		"void label(char *d, int id)\n{\n\tsprintf(d, \"id-%d\", id);\n}\n" + copyTail
	logC = "#include <stdio.h>\n\n/* TODO: rotate the log file */\nvoid log_line(const char *s)\n{\n\tfputs(s, stderr);\n}\n"
)

// reviewVersionChange writes a fresh shelved change holding files (depot
// path → content, each added) and returns its number.
func reviewVersionChange(t *testing.T, files map[string]string) int64 {
	t.Helper()
	return newChangeWith(t, 12348, func(fx map[string]any) {
		dir := fmt.Sprintf("files/rerun-%d", fx["change"])
		if err := os.MkdirAll(filepath.Join(env.depot, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		var list []any
		for path, content := range files {
			name := dir + "/" + filepath.Base(path)
			if err := os.WriteFile(filepath.Join(env.depot, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			list = append(list, map[string]any{"path": path, "action": "add", "type": "text", "rev": 0, "after_file": name})
		}
		fx["files"] = list
	})
}

// runVersion posts Swarm's test run of a review version and waits for the
// job to succeed.
func runVersion(t *testing.T, review, change int64, version int) {
	t.Helper()
	env.local.Swarm.AddReview(swarmstandin.Review{ID: review, Author: "bob", Change: change, Version: version})
	run := env.local.Swarm.StartRun(review, version)
	resp := swarmPost(t, change, run, "shelved")
	if resp.Status != http.StatusAccepted {
		t.Fatalf("version %d: Swarm's request: %d %s", version, resp.Status, resp.Body)
	}
	waitJob(t, resp.Decoded["job_id"].(string), untilSettled(), "succeeded", succeeded)
}

// TestSwarmReviewRerunAcceptance is issue 22's acceptance: a Swarm review's
// version 1 gets one comment per finding at its file and line plus one
// summary comment, and e-mails; version 2 (one file fixed, one finding new)
// gets comments only for what is new, the resolved finding's task set to
// addressed, and an e-mail grouped new / still open / resolved, the resolved
// finding named by its title; the model is shown only the changed file (the
// unchanged one's finding is carried over and still open).
func TestSwarmReviewRerunAcceptance(t *testing.T) {
	v1Change := reviewVersionChange(t, map[string]string{rerunCopyC: copyV1, rerunLogC: logC})
	review := v1Change + 1
	runVersion(t, review, v1Change, 1)

	type spot struct {
		file string
		line int
	}
	v1 := ourComments(t, review) // fails on any duplicate marker
	at := map[spot]swarmstandin.Comment{}
	summaries := 0
	for _, c := range v1 {
		if c.Context == nil {
			summaries++
			continue
		}
		if c.Context.Version != 1 {
			t.Errorf("version 1 comment on %s:%d says version %d", c.Context.File, c.Context.RightLine, c.Context.Version)
		}
		at[spot{c.Context.File, c.Context.RightLine}] = c
	}
	strcpy, okStrcpy := at[spot{rerunCopyC, 5}]
	todo, okTodo := at[spot{rerunLogC, 3}]
	if summaries != 1 || len(at) != 2 || !okStrcpy || !okTodo {
		t.Fatalf("version 1: %d summaries (want 1), inline comments %v; want one at copy.c:5 (strcpy) and one at log.c:3 (TODO)", summaries, at)
	}
	if strcpy.TaskState != swarm.TaskOpen || !strings.Contains(strcpy.Body, "Unbounded strcpy") || todo.TaskState != swarm.TaskComment || !strings.Contains(todo.Body, "TODO left in code") {
		t.Errorf("version 1: strcpy comment %q task %q (want an open task), TODO comment %q task %q (want a plain comment)", strcpy.Body, strcpy.TaskState, todo.Body, todo.TaskState)
	}
	if n := len(mailsFor(v1Change, 1)); n != 1 {
		t.Fatalf("version 1: %d e-mails, want 1 to the review's author", n)
	}

	// Version 2: strcpy fixed, a new sprintf in the same file; log.c unchanged.
	v2Change := reviewVersionChange(t, map[string]string{rerunCopyC: copyV2, rerunLogC: logC})
	runVersion(t, review, v2Change, 2)

	all := ourComments(t, review)
	added := all[len(v1):]
	var newSprintf, summary2 bool
	for _, c := range added {
		switch {
		case c.Context != nil && c.Context.File == rerunCopyC && c.Context.RightLine == 11 && c.Context.Version == 2:
			newSprintf = strings.Contains(c.Body, "Unbounded sprintf") && c.TaskState == swarm.TaskOpen
		case c.Context == nil && strings.Contains(c.Body, "version 2:**"):
			summary2 = !c.Silenced && strings.Contains(c.Body, "Since version 1: 1 new, 1 still open, 1 resolved, 0 not re-checked.")
		default:
			t.Errorf("version 2 posted a comment that is not new: %+v", c)
		}
	}
	if len(added) != 2 || !newSprintf || !summary2 {
		t.Errorf("version 2: want exactly the new sprintf finding (copy.c:11, an open task) and a notifying summary with the counts; got %+v", added)
	}
	for _, c := range env.local.Swarm.Comments(review) {
		switch c.ID {
		case strcpy.ID:
			if c.TaskState != swarm.TaskAddressed {
				t.Errorf("the fixed strcpy's task is %q, want addressed", c.TaskState)
			}
		case todo.ID:
			if c.TaskState != swarm.TaskComment {
				t.Errorf("the still open TODO comment was changed: task %q", c.TaskState)
			}
		}
	}

	// The model saw of version 2 only what changed since version 1: copy.c's
	// interdiff (not its unchanged tail, which version 1's prompt showed),
	// and not log.c, unchanged.
	var sawCopy, sawLog, sawTail, sawTailV1 bool
	for _, req := range env.llm.Requests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, changeMarker(v1Change)) {
				sawTailV1 = sawTailV1 || strings.Contains(m.Content, "unit_09")
			}
			if !strings.Contains(m.Content, changeMarker(v2Change)) {
				continue
			}
			sawCopy = sawCopy || strings.Contains(m.Content, rerunCopyC)
			sawLog = sawLog || strings.Contains(m.Content, rerunLogC)
			sawTail = sawTail || strings.Contains(m.Content, "unit_09")
		}
	}
	if !sawCopy || sawLog || sawTail || !sawTailV1 {
		t.Errorf("version 2's prompts: copy.c shown %v (want true), its unchanged tail %v (want false; version 1's prompt: %v), log.c shown %v (want false: unchanged, carried over)",
			sawCopy, sawTail, sawTailV1, sawLog)
	}

	mails := mailsFor(v2Change, 2)
	if len(mails) != 1 {
		t.Fatalf("version 2: %d e-mails, want 1", len(mails))
	}
	if !strings.Contains(mails[0].Subject, "; since v1: 1 new, 1 resolved") {
		t.Errorf("version 2's subject %q does not say what changed since version 1", mails[0].Subject)
	}
	text := strings.ReplaceAll(textPart(t, mails[0].Raw), "\r\n", "\n")
	for _, want := range []string{
		"Since review version 1 (job ", "1 new, 1 still open, 1 resolved, 0 not re-checked.",
		"NEW (1)", "STILL OPEN (1)", "RESOLVED (1)",
		"[HIGH] " + rerunCopyC + ":5  Unbounded strcpy\n",
		"1 unchanged since version 1",              // coverage: log.c carried over
		"1 reviewed as its change since version 1", // copy.c: its interdiff
	} {
		if !strings.Contains(text, want) {
			t.Errorf("version 2's e-mail lacks %q:\n%s", want, text)
		}
	}
	newAt, openAt, resolvedAt := strings.Index(text, "NEW (1)"), strings.Index(text, "STILL OPEN (1)"), strings.Index(text, "RESOLVED (1)")
	sprintfAt, todoAt := strings.Index(text, "Unbounded sprintf"), strings.Index(text, "TODO left in code")
	if !(newAt < sprintfAt && sprintfAt < openAt && openAt < todoAt && todoAt < resolvedAt) {
		t.Errorf("version 2's e-mail: the sprintf finding is not under NEW or the TODO not under STILL OPEN:\n%s", text)
	}
}
