package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/envelope"
	"github.com/criticizer/criticizer/shared/job"
)

// operatorName is the actor recorded in a job's history: CRITICIZER_ACTOR
// when set (a shared bastion account names no one), else the login name.
func operatorName() string {
	if a := os.Getenv("CRITICIZER_ACTOR"); a != "" {
		return a
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "operator"
}

// record appends who did what and why to the job's history.
func (a *app) record(ctx context.Context, jobID, action, note string) error {
	if err := a.jobs.RecordOperator(ctx, jobID, action, operatorName(), note, job.Now()); err != nil {
		return fmt.Errorf("recording %s in job %s's history: %w", action, jobID, err)
	}
	return nil
}

// sendRedelivery sends succeeded job j's notify stage a redelivery message
// naming the operator and the note.
func (a *app) sendRedelivery(ctx context.Context, j *job.Job, note string) error {
	body, err := envelope.Redeliver(j, operatorName(), note, job.Now()).Encode()
	if err != nil {
		return err
	}
	q := a.dlq.Queues[domain.StageNotify].Source
	if q == "" {
		return errors.New("the stack has no notify queue")
	}
	_, err = a.dlq.API.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &q, MessageBody: &body})
	return err
}

// reconcileCmd lists the delivery rows the reconciler could not settle, or
// settles one after the operator checked with the provider:
//
//	outbox reconcile                                                    list reconciling rows
//	outbox reconcile resolve JOB_ID RECIPIENT|ITEM --delivered|--not-delivered --note TEXT
//
// A Swarm comment is named by its item on the job's review; --delivered
// then wants the comment's id in the note (checked in the review).
func (a *app) reconcileCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("outbox reconcile", flag.ContinueOnError)
	delivered := fs.Bool("delivered", false, "the provider delivered it: mark sent, never resend")
	notDelivered := fs.Bool("not-delivered", false, "the provider has no record: pending, sent by the next notify run (for a succeeded job: by a redelivery this command sends)")
	note := fs.String("note", "", "evidence or ticket reference (required; kept in the job history)")
	if err := fs.Parse(reorder(args)); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 || rest[0] == "list" {
		rows, err := a.rows.Suspects(ctx, time.Time{}, time.Time{}, time.Time{}, false, 1000)
		if err != nil {
			return err
		}
		if a.json {
			return json.NewEncoder(a.out).Encode(rows)
		}
		tw := tabwriter.NewWriter(a.out, 0, 4, 2, ' ', 0)
		// An e-mail is named by changelist version and recipient, a Swarm
		// comment by its review and item: what resolve takes.
		fmt.Fprintln(tw, "JOB\tWHERE\tRECIPIENT/ITEM\tSINCE\tREASON\tREQUEUES")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", r.JobID, rowWhere(r.Row), rowWhat(r.Row), r.Since, r.Reason, r.Requeues)
		}
		return tw.Flush()
	}
	if rest[0] != "resolve" || len(rest) != 3 || *delivered == *notDelivered || *note == "" {
		return errors.New("usage: criticizer outbox reconcile [list] | outbox reconcile resolve JOB_ID RECIPIENT|ITEM --delivered|--not-delivered --note TEXT")
	}
	j, err := a.jobs.Get(ctx, rest[1])
	if err != nil {
		return err
	}
	k, err := rowRef(ctx, a.rows, j, rest[2])
	if err != nil {
		return err
	}
	if err := a.rows.Resolve(ctx, k, *delivered, *note, job.Now()); err != nil {
		return err
	}
	outcome := "not delivered: pending for the next notify run"
	switch {
	case *delivered:
		outcome = "delivered: marked sent"
	case j.State == job.Succeeded:
		// The job will not run notify again: ask its notify stage to deliver
		// this row under its key (rule OB-5). The notify stage records the
		// delivery's outcome in the job history when it has run.
		if err := a.sendRedelivery(ctx, j, *note); err != nil {
			return fmt.Errorf("the row is pending, but the redelivery could not be sent (run resolve again after fixing): %w", err)
		}
		outcome = "not delivered: pending, redelivery sent to the notify stage of the succeeded job"
	}
	if err := a.record(ctx, j.ID, "outbox_reconcile", rest[2]+" "+outcome+"; "+*note); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "%s %s\n", rest[2], outcome)
	return nil
}
