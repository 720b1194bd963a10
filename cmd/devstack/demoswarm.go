package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/internal/devstack"
	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/swarm"
)

// The demo's Swarm review: the p4 stand-in's fixtures 12350 and 12352 are
// the archive changes of its versions 1 and 2 (shelved by Swarm's service
// user); the review has an id of its own.
const (
	demoSwarmChange   = 12350
	demoSwarmChangeV2 = 12352
	demoSwarmReview   = 12351
)

// runSwarmDemo runs a Swarm-sourced review as Swarm does it: the review's
// test run calls the webhook with the documented body and bearer token; the
// job is followed, and the comments the Swarm stand-in received are printed
// as a reviewer sees them in the review. Then version 2 of the review (the
// TODO gone, a new strcpy) runs the same way: only the new finding is
// commented, the resolved one gets its note, and the summary says what
// changed since version 1.
func runSwarmDemo(ctx context.Context, l *devstack.Local) error {
	sw := l.Swarm
	def, err := l.SwarmTestDefinition()
	if err != nil {
		return err
	}
	before := 0
	for _, v := range []struct {
		version int
		change  int64
	}{{1, demoSwarmChange}, {2, demoSwarmChangeV2}} {
		sw.AddReview(swarmstandin.Review{ID: demoSwarmReview, Author: "bob", Change: v.change, Version: v.version})
		run := sw.StartRun(demoSwarmReview, v.version)
		out, err := sw.RunTest(ctx, def, run, v.change, "shelved")
		if err != nil {
			return err
		}
		fmt.Printf("\n===== Swarm review %d, version %d (archive change %d) =====\n", demoSwarmReview, v.version, v.change)
		fmt.Printf("Swarm's test run POSTs /webhooks/changelist with its bearer token: %s\n", out.StatusLine)
		printJSON(out.Body)
		id := devstack.CreatedJob(out.Body)
		if out.Failed || id == "" {
			return fmt.Errorf("the Swarm test run's request was not accepted (%s)", out.StatusLine)
		}
		st, _, err := followJob(ctx, l, id)
		if err != nil {
			return err
		}
		if unusableAnswer(st) {
			continue
		}
		if st.State != job.Succeeded {
			return fmt.Errorf("job %s %s: %s", id, st.State, stages(st))
		}

		all, summary := ourComments(sw.Comments(demoSwarmReview), sw.Requests(), v.version)
		fmt.Printf("\n===== comments Swarm received on review %d for version %d =====\n", demoSwarmReview, v.version)
		for _, c := range all[before:] {
			if c.Context != nil {
				fmt.Printf("%s:%d  [%s]  %s\n", c.Context.File, c.Context.RightLine, taskLabel(c.TaskState), firstLine(c.Body))
			} else if summary == nil || c.ID != summary.ID {
				fmt.Printf("on the review  [%s]  %s\n", taskLabel(c.TaskState), firstLine(c.Body))
			}
		}
		if v.version > 1 {
			for _, c := range all[:before] {
				if c.TaskState == swarmstandin.TaskAddressed {
					fmt.Printf("%s:%d  task now addressed: %s\n", c.Context.File, c.Context.RightLine, firstLine(c.Body))
				}
			}
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
		fmt.Printf("review %d version %d: %d %s, %d new %s\n", demoSwarmReview, v.version, st.FindingCount, domain.Plural(st.FindingCount, "finding"),
			len(all)-before, domain.Plural(len(all)-before, "comment"))
		if summary == nil {
			return fmt.Errorf("job %s succeeded but Swarm received no summary comment for version %d on review %d", id, v.version, demoSwarmReview)
		}
		if v.version == 1 && len(all)-1 != st.FindingCount {
			return fmt.Errorf("job %s: %d findings but %d inline comments on review %d", id, st.FindingCount, len(all)-1, demoSwarmReview)
		}
		before = len(all)
	}
	return nil
}

// ourComments returns the service's comments (its login's, carrying a
// marker) in the order Swarm stored them, and version's summary among them.
func ourComments(all []swarmstandin.Comment, reqs []swarmstandin.Request, version int) (ours []swarmstandin.Comment, summary *swarmstandin.Comment) {
	login := ""
	for _, r := range reqs {
		if r.Op == swarmstandin.OpCreateComment && r.User != "" {
			login = r.User
		}
	}
	for _, c := range all {
		if _, ok := swarm.MarkerOf(c.Body); ok && c.User == login {
			ours = append(ours, c)
		}
	}
	slices.SortStableFunc(ours, func(a, b swarmstandin.Comment) int { return cmp.Compare(a.ID, b.ID) })
	want := swarm.SummaryKey(demoSwarmReview, version).Marker()
	for i, c := range ours {
		if m, _ := swarm.MarkerOf(c.Body); m == want {
			summary = &ours[i]
		}
	}
	return ours, summary
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
