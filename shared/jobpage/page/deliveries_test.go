package page

import (
	"bytes"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outbox"
)

// The page lists a Swarm job's comments beside its e-mails: what each says,
// its state (a refusal with its class: the job did not fail on it) and the
// comment id a reader can find in the review — never the item's fingerprint.
func TestDeliveriesListComments(t *testing.T) {
	const fp = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	j := finishedJob(jobA)
	j.Swarm = &job.SwarmRun{Review: 885}
	p := Page{Job: j,
		Deliveries: []outbox.Row{{Recipient: "alice@example.com", Status: outbox.Sent, NotifiedAt: "2026-11-25T10:00:00.000Z"}},
		Comments: []outbox.Row{
			{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: "finding/" + fp, Status: outbox.Sent, NotificationID: "17", NotifiedAt: "2026-11-25T10:00:01.000Z"},
			{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: "summary/v2", Status: outbox.Failed, LastErrorClass: "AUTH_DENIED"},
			{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: "resolved/" + fp, Status: outbox.Sending},
			{Channel: outbox.ChannelSwarmComments, Thread: 885, Item: "addressed/" + fp, Status: outbox.Sent, NotificationID: "operator-confirmed: INC-7"},
		}}
	var b bytes.Buffer
	if err := Render(&b, p); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{
		"<td>e-mail</td><td>a",
		"<td>Swarm comment</td><td>review 885: finding</td><td>sent</td><td>2026-11-25T10:00:01.000Z</td><td>comment 17</td>",
		"<td>Swarm comment</td><td>review 885: summary</td><td>failed (AUTH_DENIED)</td>",
		"<td>Swarm comment</td><td>review 885: resolved note</td><td>sending</td>",
		"<td>Swarm comment</td><td>review 885: task addressed</td><td>sent</td><td></td><td></td>",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, never := range []string{fp, "INC-7"} {
		if strings.Contains(html, never) {
			t.Errorf("page shows %q", never)
		}
	}
}
