package comments

import (
	"context"
	"strconv"

	"github.com/criticizer/criticizer/shared/delivery"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/swarm"
)

// TaskSetter changes a comment's task state (the Swarm client).
type TaskSetter interface {
	SetTaskState(ctx context.Context, review, id int64, state string) (swarm.Comment, error)
}

// Task is one task change: the finding comment id on review whose task is
// set to addressed, once (its row is the record, so a reviewer who reopens
// the task is not overruled later).
type Task struct {
	Review, Comment int64
}

// Tasks is the task-change channel. The PATCH names the comment and
// repeating it changes nothing, so its lookup never finds and a send never
// "may have happened": a row left in flight is reset and the PATCH done
// again.
type Tasks struct{ api TaskSetter }

// NewTasks returns the task-change channel over api.
func NewTasks(api TaskSetter) *Tasks { return &Tasks{api: api} }

// Send sets t's task to addressed; its evidence is the comment id. A
// refusal that is not retryable is wrapped in ErrRefused.
func (s *Tasks) Send(ctx context.Context, t Task) (string, error) {
	if _, err := s.api.SetTaskState(ctx, t.Review, t.Comment, swarm.TaskAddressed); err != nil {
		if !failure.Classify(err).Retryable() {
			err = Refused(err)
		}
		return "", err
	}
	return strconv.FormatInt(t.Comment, 10), nil
}

// Lookup never finds: repeating the PATCH is no change.
func (s *Tasks) Lookup(context.Context, Task, int64) (string, bool, error) { return "", false, nil }

// Classify never says "may have happened": a failed PATCH is released and redone.
func (s *Tasks) Classify(err error) delivery.Verdict {
	return delivery.Verdict{Class: failure.Classify(err)}
}
