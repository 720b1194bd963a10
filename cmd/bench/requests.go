package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/criticizer/criticizer/internal/devstack"
)

// The request benchmark: every DynamoDB and SQS request one review costs,
// counted at the wire (wireCounter) while the deployed pipeline runs it end
// to end — webhook, fetch, llm and notify, as deployed, on the emulator with
// the stand-ins — for 1, 2 and 5 recipients, by function and operation. The
// event source mappings' receives and deletes happen inside the emulator and
// are not on the wire; on AWS they cost one ReceiveMessage and one
// DeleteMessageBatch per stage message (docs/benchmarks.md, Monthly cost).

// reviewRecipients are the recipient counts measured.
var reviewRecipients = []int{1, 2, 5}

// reviewCount is one measured review.
type reviewCount struct {
	Recipients int // as the job resolved them
	Calls      map[call]int
}

func (r reviewCount) total() int {
	n := 0
	for _, c := range r.Calls {
		n += c
	}
	return n
}

// runRequests measures the reviews and prints their table; with doc set
// it also writes the table into that file between its requests markers
// (docs/benchmarks.md), so the page shows what was measured.
func runRequests(ctx context.Context, l *devstack.Local, wire *wireCounter, out io.Writer, doc string) error {
	var counts []reviewCount
	for _, r := range reviewRecipients {
		rcpts := make([]string, r)
		for i := range rcpts {
			rcpts[i] = fmt.Sprintf("dev%d@example.com", i+1)
		}
		cl := int64(30_000 + r)
		if err := newChange(l, cl); err != nil {
			return err
		}
		if err := settle(ctx, wire); err != nil {
			return err
		}
		wire.take()
		j, err := runReview(ctx, l, cl, fmt.Sprintf("bench-requests-%d-%d", r, time.Now().UnixNano()), rcpts)
		if err != nil {
			return fmt.Errorf("%d recipients: %w", r, err)
		}
		// The job's last write is notify's completion; what follows it
		// (the message's deletion) is settled before the take.
		if err := settle(ctx, wire); err != nil {
			return err
		}
		_, calls := wire.take()
		counts = append(counts, reviewCount{Recipients: len(j.Recipients), Calls: calls})
	}
	var table strings.Builder
	renderRequests(&table, counts)
	fmt.Fprint(out, table.String())
	if doc == "" {
		return nil
	}
	return writeBetween(doc, "<!-- requests:begin -->\n", "<!-- requests:end -->", time.Now().UTC().Format("Measured 2006-01-02 by `make bench`.")+"\n"+table.String())
}

// writeBetween replaces what file holds between its begin and end markers.
func writeBetween(file, begin, end, text string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	head, rest, ok := strings.Cut(string(b), begin)
	_, tail, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		return fmt.Errorf("%s has no %q … %q block", file, strings.TrimSpace(begin), end)
	}
	return os.WriteFile(file, []byte(head+begin+text+end+tail), 0o644)
}

// settle waits until no request has been counted for two seconds: the
// pipeline's processes have nothing left in flight.
func settle(ctx context.Context, wire *wireCounter) error {
	for deadline := time.Now().Add(time.Minute); wire.idle() < 2*time.Second; time.Sleep(200 * time.Millisecond) { // polling the wire
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the functions did not go quiet within a minute")
		}
	}
	return nil
}

// renderRequests prints a row per function and operation, a column per
// review, then the totals per function and the review's total.
func renderRequests(w io.Writer, counts []reviewCount) {
	fmt.Fprintln(w, "\nDynamoDB and SQS requests of one review, end to end on the emulator (counted at the wire; R is the job's recipients as resolved, the changelist's author included):")
	fmt.Fprintln(w)
	head, rule := "| function | request |", "|---|---|"
	for _, c := range counts {
		head += fmt.Sprintf(" R=%d |", c.Recipients)
		rule += "---:|"
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, rule)
	keys, fns := map[call]bool{}, map[string]bool{}
	for _, c := range counts {
		for k := range c.Calls {
			keys[k], fns[k.Fn] = true, true
		}
	}
	order := func(fn string) string { // pipeline order first, then any other function
		if i := strings.Index("webhook fetch llm notify sweeper", fn); i >= 0 {
			return fmt.Sprintf("%02d", i)
		}
		return "99" + fn
	}
	row := func(name, op, cell string, n func(reviewCount) int) {
		line := fmt.Sprintf("| %s | %s |", name, op)
		for _, c := range counts {
			line += fmt.Sprintf(" "+cell+" |", n(c))
		}
		fmt.Fprintln(w, line)
	}
	for _, k := range slices.SortedFunc(maps.Keys(keys), func(a, b call) int { return cmp.Or(cmp.Compare(order(a.Fn), order(b.Fn)), cmp.Compare(a.Op, b.Op)) }) {
		row(k.Fn, k.Op, "%d", func(c reviewCount) int { return c.Calls[k] })
	}
	for _, fn := range slices.SortedFunc(maps.Keys(fns), func(a, b string) int { return cmp.Compare(order(a), order(b)) }) {
		row("**"+fn+"**", "all", "%d", func(c reviewCount) int {
			n := 0
			for k, v := range c.Calls {
				if k.Fn == fn {
					n += v
				}
			}
			return n
		})
	}
	row("**review**", "**total**", "**%d**", reviewCount.total)
	if f, ok := fit(counts); ok {
		fmt.Fprintf(w, "\nPer review: %s DynamoDB and SQS requests for R recipients.\n", f)
	}
}

// fit is the line a + bR through the first and last review, when every
// review lies on it.
func fit(counts []reviewCount) (string, bool) {
	if len(counts) < 2 {
		return "", false
	}
	first, last := counts[0], counts[len(counts)-1]
	dr := last.Recipients - first.Recipients
	if dr == 0 || (last.total()-first.total())%dr != 0 {
		return "", false
	}
	b := (last.total() - first.total()) / dr
	a := first.total() - b*first.Recipients
	for _, c := range counts {
		if a+b*c.Recipients != c.total() {
			return "", false
		}
	}
	return fmt.Sprintf("%d + %dR", a, b), true
}
