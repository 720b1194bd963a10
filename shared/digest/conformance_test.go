package digest_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/digest"
	"github.com/criticizer/criticizer/shared/notify"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outbox/outboxtest"
	"github.com/criticizer/criticizer/shared/smtpmail"
	"github.com/criticizer/criticizer/shared/weekly"
)

// relay is the SMTP stand-in's mailbox as the relay's message lookup.
type relay struct{ srv *smtp.Server }

func (r relay) count(id string) int {
	n := 0
	for _, m := range r.srv.Messages() {
		if m.MessageID == id {
			n++
		}
	}
	return n
}

func (r relay) Delivered(_ context.Context, id string) (bool, error) { return r.count(id) > 0, nil }

// The weekly digest, its own rows (one per owner and week) over the SMTP
// channel, passes the one conformance suite: once per owner and week, never
// twice after a crash, and a refusal leaves the row pending (KeepPending: the
// week is run again once the service's own refusal is fixed).
func TestDigestConformance(t *testing.T) {
	outboxtest.RunChannelSuite(t, func(t *testing.T) outboxtest.Harness[*notify.Message] {
		srv := smtp.NewServer(smtp.Options{})
		addr, err := srv.Start()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		sender, err := smtpmail.New(smtpmail.Config{Host: host, Port: p, TLS: smtpmail.TLSNone, From: "bounces@example.com",
			Timeout: 5 * time.Second, HELO: "criticizer.test"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		week := weekly.WeekOf(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
		msgs := map[int]*notify.Message{}
		delivery := func(i int) (outbox.Ref, *notify.Message) {
			owner := fmt.Sprintf("owner%d@example.com", i)
			id := digest.IdentityOf(owner, week, testHash)
			if msgs[i] == nil {
				m, err := digest.Compose(digest.Digest{Owner: owner, Week: week, Paths: []string{"//depot/app/..."}, Reviews: 1},
					id, "Criticizer <criticizer@example.com>", time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
				if err != nil {
					t.Fatal(err)
				}
				msgs[i] = m
			}
			return id.Item(), msgs[i]
		}
		return outboxtest.Harness[*notify.Message]{
			Channel:   smtpmail.NewChannel(sender.Send, relay{srv}),
			Delivery:  delivery,
			Delivered: func(t *testing.T, i int) int { _, m := delivery(i); return relay{srv}.count(m.MessageID) },
			Refuse: func(t *testing.T, permanent bool, text string) {
				f := smtp.Fault{Stage: smtp.StageMail, Code: 451, Enhanced: "4.3.0", Message: text}
				if permanent {
					f = smtp.Fault{Stage: smtp.StageRcpt, Code: 550, Enhanced: "5.1.1", Message: text}
				}
				if err := srv.QueueFault(f); err != nil {
					t.Fatal(err)
				}
			},
			Window:      time.Hour,
			KeepPending: true,
		}
	})
}
