package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
)

// A job of a Swarm review lists its comments beside its e-mails: what each
// says, its state, the comment id, and the class of a refusal (the job did
// not fail on it); a job without a review lists none.
func TestWriteComments(t *testing.T) {
	swarmJob := &job.Job{ID: "j2", Changelist: 42, ReviewVersion: 2, Swarm: &job.SwarmRun{Review: 885}}
	rows := []outbox.Row{
		{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: "finding/ab12", Status: outbox.Sent, NotificationID: "17", Attempts: 1},
		{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: "summary/v2", Status: outbox.Failed, LastErrorClass: "AUTH_DENIED", Attempts: 1},
		{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: "resolved/cd34", Status: outbox.Sending, Attempts: 2},
		{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: "addressed/ef56", Status: outbox.Sent, NotificationID: "9", Attempts: 1},
	}
	for _, tt := range []struct {
		name  string
		j     *job.Job
		rows  []outbox.Row
		lines []string // each must appear on one line, in its words
		not   string
	}{
		{"posted, refused, in flight, addressed", swarmJob, rows, []string{
			"Swarm review 885",
			"finding finding/ab12 sent 17 1",
			"summary summary/v2 failed 1 AUTH_DENIED",
			"resolved note resolved/cd34 sending 2",
			"task addressed addressed/ef56 sent 9 1",
		}, ""},
		{"a Swarm job that posted nothing", swarmJob, nil, []string{"Swarm review 885", "(none)"}, ""},
		{"a trigger job", &job.Job{ID: "j", Changelist: 42, ReviewVersion: 1}, nil, nil, "Swarm"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeComments(&b, tt.j, tt.rows); err != nil {
				t.Fatal(err)
			}
			var norm []string
			for _, l := range strings.Split(b.String(), "\n") {
				norm = append(norm, strings.Join(strings.Fields(l), " "))
			}
			all := strings.Join(norm, "\n")
			for _, want := range tt.lines {
				if !strings.Contains(all, want) {
					t.Errorf("listing:\n%s\nwant a line with %q", b.String(), want)
				}
			}
			if tt.not != "" && strings.Contains(all, tt.not) {
				t.Errorf("listing:\n%s\nwant nothing about %q", b.String(), tt.not)
			}
		})
	}
}

// The reconcile listing names a comment row by its review and item (what
// resolve takes), an e-mail row by its changelist version and recipient.
func TestRowNames(t *testing.T) {
	for _, tt := range []struct {
		r           outbox.Row
		where, what string
	}{
		{outbox.Row{Changelist: 42, ReviewVersion: 2, Recipient: "alice@example.com"}, "changelist 42 v2", "alice@example.com"},
		{outbox.Row{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: "summary/v2"}, "review 885", "summary/v2"},
	} {
		if w, x := rowWhere(tt.r), rowWhat(tt.r); w != tt.where || x != tt.what {
			t.Errorf("%+v: %q %q, want %q %q", tt.r, w, x, tt.where, tt.what)
		}
	}
}

// resolve names an e-mail by its recipient, a comment by its item on the
// job's review; a comment item on a job without a review is an error.
// rowList is a changelist version's e-mail rows.
type rowList []outbox.Row

func (l rowList) List(context.Context, int64, int) ([]outbox.Row, error) { return l, nil }

func TestRowRef(t *testing.T) {
	swarmJob := &job.Job{ID: "j", Changelist: 42, ReviewVersion: 2, Swarm: &job.SwarmRun{Review: 885}}
	trigger := &job.Job{ID: "t", Changelist: 42, ReviewVersion: 2}
	for _, tt := range []struct {
		j       *job.Job
		name    string
		want    string // the row's identity
		wantErr string
	}{
		{swarmJob, "alice@example.com", "42/v2/alice@example.com", ""},
		{swarmJob, " Alice@Example.com", "42/v2/alice@example.com", ""}, // OB-1: one mailbox, one row
		// A row whose address the data scrub removed, named as the listing prints it.
		{swarmJob, "~0123456789abcdef", "42/v2/~0123456789abcdef", ""},
		{swarmJob, "bob@example.com", "", "no e-mail row"},
		{swarmJob, "finding/ab12", "swarm-comments/reviews/885/finding/ab12", ""},
		{swarmJob, "summary/v2", "swarm-comments/reviews/885/summary/v2", ""},
		{swarmJob, "note/x", "", "a comment item starts with"},
		{trigger, "finding/ab12", "", "has no Swarm review"},
	} {
		ref, err := rowRef(context.Background(), rowList{{Changelist: 42, ReviewVersion: 2, Recipient: "alice@example.com"},
			{PK: "OUTBOX#42#2", SK: "RCPTH#0123456789abcdef0123", Changelist: 42, ReviewVersion: 2}}, tt.j, tt.name)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err %v, want %q", tt.name, err, tt.wantErr)
			}
		case err != nil || ref.String() != tt.want:
			t.Errorf("%s: %v, %v; want %s", tt.name, ref, err, tt.want)
		}
	}
}
