package store

import (
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
)

// RecordOperator appends an operator action to the job's history — who, what,
// why (note or ticket) — as the runbook asks; the state is untouched.
func (st *Store) RecordOperator(ctx context.Context, id, action, actor, note string, now time.Time) error {
	if strings.TrimSpace(actor) == "" || strings.TrimSpace(note) == "" {
		return failure.Errorf(failure.SchemaInvalid, "an operator action needs an actor and a note or ticket reference")
	}
	at := job.FormatTime(now)
	ev, _ := attributevalue.Marshal([]eventItem{{At: at, Type: job.EventType("operator_" + action), Actor: actor, Detail: note}}) // strings only: cannot fail
	// No write token: a note appended twice after a lost answer is harmless in
	// an audit log.
	_, err := st.update(ctx, id, write{op: "record operator action",
		update: "SET history = list_append(if_not_exists(history, :empty), :ev), updated_at = :now", cond: "attribute_exists(pk)",
		values: map[string]types.AttributeValue{":ev": ev, ":empty": &types.AttributeValueMemberL{}, ":now": s(at)}})
	return err
}
