package store

import (
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// RecordOperator appends an operator action to the job's history: who did
// what and why (a note or ticket reference), as the runbook asks — evidence
// before a replay, the resolution after. The job's state is not touched.
func (st *Store) RecordOperator(ctx context.Context, id, action, actor, note string, now time.Time) error {
	if strings.TrimSpace(actor) == "" || strings.TrimSpace(note) == "" {
		return failure.Errorf(failure.SchemaInvalid, "an operator action needs an actor and a note or ticket reference")
	}
	at := domain.FormatTime(now)
	ev, _ := attributevalue.Marshal([]Event{{At: at, Type: "operator_" + action, Actor: actor, Detail: note}}) // strings only: cannot fail
	_, err := st.update(ctx, "record operator action", id, "SET history = list_append(if_not_exists(history, :empty), :ev), updated_at = :now",
		"attribute_exists(pk)", nil, map[string]types.AttributeValue{":ev": ev, ":empty": &types.AttributeValueMemberL{}, ":now": s(at)})
	return err
}
