package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
)

// A job's deliveries as the operator reads them: its e-mails (one row per
// recipient) and, for a job of a Swarm review, the comments it posted there
// (one row per finding, summary, resolved note or task change), each with
// its state, its evidence (a Message-ID, a comment id) and the failure class
// of a refusal. A comment refused for good (401/403/404) fails its row, not
// the job, so this is where it shows.

// writeEmails writes the e-mail rows, one line per recipient.
func writeEmails(w io.Writer, rows []outbox.Row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RECIPIENT\tSTATUS\tATTEMPTS\tNOTIFIED_AT\tLAST_ERROR_CLASS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", r.Addressee(), r.Status, r.Attempts, r.NotifiedAt, r.LastErrorClass)
	}
	return tw.Flush()
}

// writeComments writes the job's Swarm comment rows, one line per comment:
// what it says (kind), its item (the name `outbox reconcile resolve` takes),
// its state, the comment id Swarm gave it and the class of a refusal.
func writeComments(w io.Writer, j *job.Job, rows []outbox.Row) error {
	if j.Swarm == nil || j.Swarm.Review <= 0 {
		return nil
	}
	fmt.Fprintf(w, "\nSwarm review %d: comments posted by this job\n", j.Swarm.Review)
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "(none)")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tITEM\tSTATUS\tCOMMENT_ID\tATTEMPTS\tNOTIFIED_AT\tLAST_ERROR_CLASS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ItemKind(), r.Item, r.Status, r.NotificationID, r.Attempts, r.NotifiedAt, r.LastErrorClass)
	}
	return tw.Flush()
}

// rowWhere and rowWhat name a row in the reconcile listing: an e-mail by
// its changelist version and recipient, a comment by its review and item.
func rowWhere(r outbox.Row) string {
	if it, ok := r.ChannelItem(); ok {
		return "review " + strconv.FormatInt(it.Thread, 10)
	}
	return fmt.Sprintf("changelist %d v%d", r.Changelist, r.ReviewVersion)
}

func rowWhat(r outbox.Row) string {
	if r.Channel != "" {
		return r.Item
	}
	return r.Addressee()
}

// emailRows lists a changelist version's e-mail rows.
type emailRows interface {
	List(ctx context.Context, changelist int64, version int) ([]outbox.Row, error)
}

// rowRef resolves the delivery an operator names for job j: an e-mail by its
// recipient (any spelling) or, once the data scrub removed the address, by
// the name the listing prints ("~<hash>"), found among the job's rows (the
// CLI holds no delivery key); a Swarm comment by its item
// ("finding/<fingerprint>", "summary/v2", as the listings print it) on the
// job's review.
func rowRef(ctx context.Context, rows emailRows, j *job.Job, name string) (outbox.Ref, error) {
	kind, _, isItem := strings.Cut(name, "/")
	if !isItem || strings.Contains(name, "@") {
		list, err := rows.List(ctx, j.Changelist, j.ReviewVersion)
		if err != nil {
			return nil, err
		}
		for i := range list {
			if r := &list[i]; r.Channel == "" && (r.Recipient == delivery.Canonical(name) || r.Addressee() == name) {
				return r.Ref(), nil
			}
		}
		return nil, fmt.Errorf("job %s has no e-mail row for %q (see `criticizer outbox %s`)", j.ID, name, j.ID)
	}
	if j.Swarm == nil || j.Swarm.Review <= 0 {
		return nil, fmt.Errorf("%q names a Swarm comment, but job %s has no Swarm review", name, j.ID)
	}
	switch kind {
	case "finding", "summary", "resolved", "addressed":
	default:
		return nil, fmt.Errorf("%q: a comment item starts with finding/, summary/, resolved/ or addressed/", name)
	}
	return outbox.Item{Channel: outbox.ChannelSwarmComments, Thread: j.Swarm.Review, ID: name}, nil
}
