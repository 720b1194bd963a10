package swarm

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// What reviewers do with a comment in Swarm's UI, for tests (issue 32),
// after docs/reference/swarm.md "Review comments" and "Outbound webhooks".

// ArchivedFlag is an archived comment's flag: the reference names "an
// archived flag" without its value; the UI uses "closed" (*unverified*: the
// client reads "closed" and "archived").
const ArchivedFlag = "closed"

// Like adds user to the comment's likes (reference "Review comments"), once.
func (s *Server) Like(id int64, user string) error {
	return s.react(id, func(c *Comment) error {
		c.Likes = appendNew(c.Likes, user)
		return nil
	})
}

// Dislike is OUR convention, not Swarm's: Swarm has likes and no dislike
// (reference "Review comments"), so a reviewer dislikes a finding by
// replying 👎 (docs/swarm-comments.md "Reactions").
func (s *Server) Dislike(id int64, user string) (Comment, error) {
	return s.Reply(id, user, "👎", true)
}

// Reply adds user's reply to comment id: linked, with context.comment (a
// third-party capture's field: reference "Outbound webhooks",
// *unverified*); else an inline comment on the same file and line.
func (s *Server) Reply(id int64, user, body string, linked bool) (Comment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comments[id]
	if !ok {
		return Comment{}, fmt.Errorf("swarm stand-in: no comment %d", id)
	}
	r := Comment{Topic: c.Topic, Body: body, User: user, TaskState: TaskComment}
	if linked {
		r.ReplyTo = id
	}
	r.Context = c.clone().Context
	stored := s.store(r)
	s.commented(r.Topic, user)
	s.queueEvent(EventCommentReply, stored)
	return stored, nil
}

// Address moves a comment to addressed along the transition table, a
// plain comment made a task first, as in the UI (reference "Review comments").
func (s *Server) Address(id int64) error { return s.moveTo(id, TaskAddressed) }

// Verify addresses the task if need be, then verifies it.
func (s *Server) Verify(id int64) error { return s.moveTo(id, TaskVerified) }

// Archive sets the comment's archived flag.
func (s *Server) Archive(id int64) error {
	return s.react(id, func(c *Comment) error {
		c.Flags = appendNew(c.Flags, ArchivedFlag)
		return nil
	})
}

// path is the way along the transition table to each state.
var path = []string{TaskComment, TaskOpen, TaskAddressed, TaskVerified}

func (s *Server) moveTo(id int64, to string) error {
	return s.react(id, func(c *Comment) error {
		for c.TaskState != to {
			i := slices.Index(path, c.TaskState)
			if i < 0 || i+1 >= len(path) || !slices.Contains(taskTransitions[c.TaskState], path[i+1]) {
				return fmt.Errorf("swarm stand-in: comment %d is %s, not moved to %s (%s)", id, c.TaskState, to, strings.Join(taskTransitions[c.TaskState], ", "))
			}
			c.TaskState = path[i+1]
		}
		return nil
	})
}

func (s *Server) react(id int64, f func(*Comment) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.comments[id]
	if !ok {
		return fmt.Errorf("swarm stand-in: no comment %d", id)
	}
	next := c.clone()
	if err := f(&next); err != nil {
		return err
	}
	next.Updated = time.Now().Unix()
	*c = next
	s.queueEvent(EventCommentUpdated, next.clone())
	return nil
}
