package comments_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	swarmstandin "github.com/criticizer/criticizer/internal/standin/swarm"
	"github.com/criticizer/criticizer/shared/outbox"
	"github.com/criticizer/criticizer/shared/outbox/outboxtest"
	"github.com/criticizer/criticizer/shared/swarm"
	"github.com/criticizer/criticizer/shared/swarm/comments"
)

const review = 885

// standin starts the Swarm stand-in with one review and returns it and a
// client logged in as the service.
func standin(t *testing.T) (*swarmstandin.Server, *swarm.Client) {
	t.Helper()
	s := swarmstandin.NewServer(swarmstandin.Options{User: "criticizer", Ticket: "ticket-1"})
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.AddReview(swarmstandin.Review{ID: review, Author: "bob", Change: 12348, Version: 1})
	return s, &swarm.Client{BaseURL: s.URL(), HTTP: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}},
		Credentials: func(context.Context, bool) (swarm.Credentials, error) {
			return swarm.Credentials{User: "criticizer", Ticket: "ticket-1"}, nil
		}}
}

// refuse makes the stand-in answer the next requests of op for good (403,
// twice: the client logs in again once) or for now (429; a 5xx on a create
// may have stored it). The stand-in's answer carries no text of the
// test's: the suite's check that no reply text reaches a row holds
// trivially here.
func refuse(s *swarmstandin.Server, op swarmstandin.Op, permanent bool) {
	if permanent {
		s.InjectFault(op, swarmstandin.Fault{Status: http.StatusForbidden}, swarmstandin.Fault{Status: http.StatusForbidden})
		return
	}
	s.InjectFault(op, swarmstandin.Fault{Status: http.StatusTooManyRequests})
}

// The comments channel passes the one conformance suite against the Swarm
// stand-in: a comment is on the review once, whatever crashes between its
// create and its row's mark (found by its marker).
func TestCommentsChannelConformance(t *testing.T) {
	outboxtest.RunChannelSuite(t, func(t *testing.T) outboxtest.Harness[swarm.NewComment] {
		s, client := standin(t)
		key := func(i int) swarm.CommentKey { return swarm.FindingKey(review, fmt.Sprint("fp-", i)) }
		return outboxtest.Harness[swarm.NewComment]{
			Channel: comments.New(client),
			Delivery: func(i int) (outbox.Ref, swarm.NewComment) {
				k := key(i)
				return outbox.Item{Channel: outbox.ChannelSwarmComments, Thread: review, ID: k.Kind + "/" + k.ID},
					swarm.NewComment{Review: review, Body: fmt.Sprint("finding ", i), Marker: k.Marker(), Silent: true}
			},
			Delivered: func(t *testing.T, i int) int {
				n := 0
				for _, c := range s.Comments(review) {
					if m, ok := swarm.MarkerOf(c.Body); ok && m == key(i).Marker() {
						n++
					}
				}
				return n
			},
			Refuse: func(t *testing.T, permanent bool, _ string) { refuse(s, swarmstandin.OpCreateComment, permanent) },
			Window: 2 * time.Minute,
		}
	})
}

// The task-change channel passes it too: a resolved finding's task is set
// addressed once (a repeated PATCH is no change, so its lookup never finds).
func TestTasksChannelConformance(t *testing.T) {
	outboxtest.RunChannelSuite(t, func(t *testing.T) outboxtest.Harness[comments.Task] {
		s, client := standin(t)
		ids := map[int]int64{}
		comment := func(i int) int64 {
			if ids[i] == 0 {
				ids[i] = s.AddComment(swarmstandin.Comment{Topic: "reviews/" + strconv.Itoa(review), Body: fmt.Sprint("finding ", i),
					User: "criticizer", TaskState: swarmstandin.TaskOpen}).ID
			}
			return ids[i]
		}
		return outboxtest.Harness[comments.Task]{
			Channel: comments.NewTasks(client),
			Delivery: func(i int) (outbox.Ref, comments.Task) {
				return outbox.Item{Channel: outbox.ChannelSwarmComments, Thread: review, ID: fmt.Sprint("addressed/fp-", i)},
					comments.Task{Review: review, Comment: comment(i)}
			},
			Delivered: func(t *testing.T, i int) int {
				for _, c := range s.Comments(review) {
					if c.ID == comment(i) && c.TaskState == swarmstandin.TaskAddressed {
						return 1
					}
				}
				return 0
			},
			Refuse: func(t *testing.T, permanent bool, _ string) { refuse(s, swarmstandin.OpEditComment, permanent) },
		}
	})
}
