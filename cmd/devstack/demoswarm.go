package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/internal/devstack"
	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/swarm"
)

// The demo's Swarm review: the p4 stand-in's fixture 12350 is its archive
// change (shelved by Swarm's service user); the review has an id of its own.
const (
	demoSwarmChange = 12350
	demoSwarmReview = 12351
)

// runSwarmDemo runs a Swarm-sourced review as Swarm does it: the review's
// test run calls the webhook with the documented body and bearer token; the
// job is followed, and the comments the Swarm stand-in received are printed
// as a reviewer sees them in the review.
func runSwarmDemo(ctx context.Context, l *devstack.Local, a api) error {
	sw := l.Swarm
	sw.AddReview(swarmstandin.Review{ID: demoSwarmReview, Author: "bob", Change: demoSwarmChange, Version: 1})
	run := sw.StartRun(demoSwarmReview, 1)
	def, err := l.SwarmTestDefinition()
	if err != nil {
		return err
	}
	out, err := sw.RunTest(ctx, def, run, demoSwarmChange, "shelved")
	if err != nil {
		return err
	}
	fmt.Printf("\n===== Swarm review %d, version 1 (archive change %d) =====\n", demoSwarmReview, demoSwarmChange)
	fmt.Printf("Swarm's test run POSTs /webhooks/changelist with its bearer token: %s\n", out.StatusLine)
	printJSON(out.Body)
	var created struct {
		JobID string `json:"job_id"`
	}
	if out.Failed || json.Unmarshal(out.Body, &created) != nil || created.JobID == "" {
		return fmt.Errorf("the Swarm test run's request was not accepted (%s)", out.StatusLine)
	}
	st, _, err := followJob(ctx, a, created.JobID)
	if err != nil {
		return err
	}
	if st.State != string(job.Succeeded) {
		return fmt.Errorf("job %s %s: %s", created.JobID, st.State, st.stages())
	}

	inline, summary := ourComments(sw.Comments(demoSwarmReview), sw.Requests())
	fmt.Printf("\n===== comments Swarm received on review %d =====\n", demoSwarmReview)
	for _, c := range inline {
		fmt.Printf("%s:%d  [%s]  %s\n", c.Context.File, c.Context.RightLine, taskLabel(c.TaskState), firstLine(c.Body))
	}
	if summary != nil {
		fmt.Printf("\nsummary (the one comment that notifies):\n")
		for _, line := range strings.Split(visible(summary.Body), "\n") {
			fmt.Println(strings.TrimRight("  "+line, " "))
		}
	}
	var runCalls []string
	for _, c := range sw.Calls(run.ID) {
		runCalls = append(runCalls, c.Kind)
	}
	fmt.Printf("\ntest run %d callbacks: %s\n", run.ID, strings.Join(runCalls, ", "))
	fmt.Printf("review %d: %d finding%s, %d inline comment%s, %d summary\n", demoSwarmReview, st.FindingCount, plural(st.FindingCount), len(inline), plural(len(inline)), btoi(summary != nil))
	switch {
	case summary == nil:
		return fmt.Errorf("job %s succeeded but Swarm received no summary comment on review %d", created.JobID, demoSwarmReview)
	case len(inline) != st.FindingCount:
		return fmt.Errorf("job %s: %d findings but %d inline comments on review %d", created.JobID, st.FindingCount, len(inline), demoSwarmReview)
	}
	return nil
}

// ourComments splits the service's comments (its login's, carrying a
// marker) into inline ones, by file and line, and the summary.
func ourComments(all []swarmstandin.Comment, reqs []swarmstandin.Request) (inline []swarmstandin.Comment, summary *swarmstandin.Comment) {
	login := ""
	for _, r := range reqs {
		if r.Op == swarmstandin.OpCreateComment && r.User != "" {
			login = r.User
		}
	}
	for i, c := range all {
		if _, ok := swarm.MarkerOf(c.Body); !ok || c.User != login {
			continue
		}
		if c.Context == nil {
			summary = &all[i]
			continue
		}
		inline = append(inline, c)
	}
	slices.SortFunc(inline, func(a, b swarmstandin.Comment) int {
		if a.Context.File != b.Context.File {
			return strings.Compare(a.Context.File, b.Context.File)
		}
		return a.Context.RightLine - b.Context.RightLine
	})
	return inline, summary
}

// taskLabel is how Swarm shows a comment's task state.
func taskLabel(state string) string {
	if state == swarmstandin.TaskComment {
		return "comment"
	}
	return state + " task"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// visible is a comment's body as Swarm renders it: without the marker, a
// Markdown link reference definition on the last line that shows nothing.
func visible(body string) string {
	lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
	if _, ok := swarm.MarkerOf(body); ok {
		lines = lines[:len(lines)-1]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
