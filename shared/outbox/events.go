package outbox

import (
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
)

// RowEvent is one entry of a row's history (rule OB-8): when, who, which write,
// from which statuses to which.
type RowEvent struct {
	At    string `dynamodbav:"at" json:"at"`
	Actor string `dynamodbav:"actor" json:"actor"`
	Op    string `dynamodbav:"op" json:"op"`
	From  string `dynamodbav:"from,omitempty" json:"from,omitempty"`
	To    string `dynamodbav:"to" json:"to"`
}

// WithActor names the writer in the rows' history ("notify", "reconciler",
// "operator <name>").
func (o *Outbox) WithActor(actor string) *Outbox {
	o.actor = actor
	return o
}

func (o *Outbox) who() string {
	if o.actor == "" {
		return "unknown"
	}
	return o.actor
}

// statusSet finds the status a write sets, and a condition's expected one.
var statusSet = regexp.MustCompile(`#s = (:\w+)`)

// withEvent appends this write's event to the row's history in the same write,
// so an event is recorded exactly when the change is; to is read from set.
func (o *Outbox) withEvent(set string, values map[string]types.AttributeValue, op string, from []string) string {
	fromText := strings.Join(from, "|")
	to := fromText
	if st := expected(set, values); st != nil {
		to = st[0]
	}
	at := job.FormatTime(job.Now())
	if v, ok := values[":now"].(*types.AttributeValueMemberS); ok {
		at = v.Value
	}
	ev, _ := attributevalue.Marshal([]RowEvent{{At: at, Actor: o.who(), Op: op, From: fromText, To: to}}) // strings only: cannot fail
	values[":rowev"], values[":noev"] = ev, &types.AttributeValueMemberL{}
	return store.AddSet(set, "events = list_append(if_not_exists(events, :noev), :rowev)")
}

// expected returns the status a condition names with `#s = :x` (or an
// update sets), if any.
func expected(cond string, values map[string]types.AttributeValue) []string {
	if m := statusSet.FindStringSubmatch(cond); m != nil {
		if v, ok := values[m[1]].(*types.AttributeValueMemberS); ok {
			return []string{v.Value}
		}
	}
	return nil
}

func statusNames(from []Status) []string {
	out := make([]string, len(from))
	for i, s := range from {
		out[i] = string(s)
	}
	return out
}
