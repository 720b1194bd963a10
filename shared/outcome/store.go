package outcome

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/store"
	"github.com/criticizer/criticizer/shared/swarm"
)

// Record is one posted finding's fate with what the acceptance report groups by:
// identities only, never code or model text (docs/guarantees.md RT-2). Its JSON
// is `criticizer outcomes export`'s, which `make eval -outcomes` replays.
type Record struct {
	Review        int64  `dynamodbav:"review" json:"review"`
	Fingerprint   string `dynamodbav:"fp" json:"fp"`
	Fate          Fate   `dynamodbav:"fate" json:"fate"`
	File          string `dynamodbav:"file" json:"file"`
	Severity      string `dynamodbav:"severity" json:"severity"`
	Category      string `dynamodbav:"category" json:"category"`
	RuleID        string `dynamodbav:"rule_id,omitempty" json:"rule_id,omitempty"`
	PromptVersion string `dynamodbav:"prompt_version" json:"prompt_version"`
	Model         string `dynamodbav:"model" json:"model"`
	JobID         string `dynamodbav:"job_id" json:"job_id"` // the job that posted the finding
	// Kind (rule id or hashed title), Category and Scope name the tally its fate
	// counts in.
	Kind string `dynamodbav:"kind" json:"kind"`
	// Scope is the depot path pattern it counts under (Policy.Scope when
	// posted).
	Scope string `dynamodbav:"scope" json:"scope"`
	// By are the people with a say on the review dismissing it
	// (Policy.Standing): only theirs can withhold its kind.
	By []string `dynamodbav:"dismissed_by,omitempty" json:"by,omitempty"`
}

// An outcome is one item beside the ledger, so a review's outcomes are one Query
// and a fingerprint has one item:
//
//	pk  OUTCOME#review#<id>
//	sk  FP#<fingerprint>
const (
	itemPrefix  = "OUTCOME#review#"
	emailPrefix = "OUTCOME#cl#" // a changelist's e-mail-only findings (EmailOnly)
	sortPrefix  = "FP#"
)

func partition(review int64) string { return itemPrefix + strconv.FormatInt(review, 10) }

// Store keeps outcomes in the jobs table.
type Store struct {
	api       store.API
	table     string
	retention time.Duration
	metrics   Metrics // told each fate that judges (FateMoved); nil: nobody
}

// NewStore returns the outcome store, keeping records
// store.DefaultUniquenessRetention by default.
func NewStore(api store.API, table string) *Store {
	return &Store{api: api, table: table, retention: store.DefaultUniquenessRetention}
}

// WithUniquenessRetention keeps new records for UNIQUENESS_RETENTION_DAYS; 0:
// forever.
func (s *Store) WithUniquenessRetention(d time.Duration) *Store {
	if d >= 0 {
		s.retention = d
	}
	return s
}

// WithMetrics tells m each fate ChangeFate judges (FateMoved), whoever read it.
func (s *Store) WithMetrics(m Metrics) *Store {
	s.metrics = m
	return s
}

// Posted records a commented finding as Open. Only the first write of a (review,
// fingerprint) lands (written false otherwise), except over a Withheld one.
func (s *Store) Posted(ctx context.Context, r Record) (written bool, err error) {
	return s.putOnReview(ctx, r, Open, Withheld, "outcome posted")
}

// MarkWithheld records a finding withheld as its kind is repeatedly dismissed:
// neither accepted nor dismissed, so it is never called resolved nor counted. A
// judged record keeps its fate; an open one becomes withheld.
func (s *Store) MarkWithheld(ctx context.Context, r Record) (written bool, err error) {
	return s.putOnReview(ctx, r, Withheld, Open, "outcome withheld")
}

// putOnReview writes r with fate where no record is yet or the one there has
// fate over.
func (s *Store) putOnReview(ctx context.Context, r Record, fate, over Fate, what string) (bool, error) {
	if r.Review <= 0 || r.Fingerprint == "" {
		return false, failure.Errorf(failure.InternalBug, "outcome: a record needs a review and a fingerprint (%d %q)", r.Review, r.Fingerprint)
	}
	item := s.item(partition(r.Review), r, fate)
	item["review"] = nv(r.Review)
	_, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR fate = :over"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":over": sv(string(over))}})
	return landed(err, what)
}

// EmailOnly records a finding told by e-mail only (no Swarm review): nobody can
// react where we read, so its fate is unknown for good, never accepted. Written
// once per (changelist, fingerprint).
func (s *Store) EmailOnly(ctx context.Context, changelist int64, r Record) (written bool, err error) {
	if changelist <= 0 || r.Fingerprint == "" {
		return false, failure.Errorf(failure.InternalBug, "outcome: an e-mail-only record needs a changelist and a fingerprint (%d %q)", changelist, r.Fingerprint)
	}
	return s.putOnce(ctx, s.item(emailPrefix+strconv.FormatInt(changelist, 10), r, Unknown), "outcome e-mail only")
}

// item is r as a record under pk with fate.
func (s *Store) item(pk string, r Record, fate Fate) map[string]types.AttributeValue {
	now := job.Now()
	item := map[string]types.AttributeValue{
		"pk": sv(pk), "sk": sv(sortPrefix + r.Fingerprint),
		"fp": sv(r.Fingerprint), "fate": sv(string(fate)),
		"file": sv(r.File), "severity": sv(r.Severity), "category": sv(r.Category), "rule_id": sv(r.RuleID),
		"prompt_version": sv(r.PromptVersion), "model": sv(r.Model), "job_id": sv(r.JobID), "kind": sv(r.Kind),
		"recorded_at": sv(job.FormatTime(now)), "scope": sv(r.Scope),
	}
	return s.kept(item)
}

// putOnce writes item unless its key is taken (written is false then).
func (s *Store) putOnce(ctx context.Context, item map[string]types.AttributeValue, what string) (written bool, err error) {
	_, err = s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: item,
		ConditionExpression: aws.String("attribute_not_exists(pk)")})
	return landed(err, what)
}

// ChangeFate moves a finding's fate from the one read (rec.Fate) to fate, with
// who with standing dismisses it, and its kind's tally, in one transaction
// (telling the metrics when it judges). Reading the same reactions again writes
// nothing, and a record another reader moved meanwhile is left to the next read.
// Unknown is never written.
func (s *Store) ChangeFate(ctx context.Context, rec Record, fate Fate, by []string) (written bool, err error) {
	by = slices.Sorted(slices.Values(by))
	if !fate.Dismissive() {
		by = nil
	}
	if fate == Unknown || fate == "" || fate == rec.Fate && slices.Equal(by, rec.By) {
		return false, nil
	}
	values := map[string]types.AttributeValue{":fate": sv(string(fate)), ":was": sv(string(rec.Fate)), ":at": sv(job.FormatTime(job.Now()))}
	set := "SET fate = :fate, judged_at = :at REMOVE dismissed_by"
	if len(by) > 0 {
		values[":by"] = lv(by)
		set = "SET fate = :fate, judged_at = :at, dismissed_by = :by"
	}
	items := []types.TransactWriteItem{{Update: &types.Update{TableName: &s.table,
		Key:                       map[string]types.AttributeValue{"pk": sv(partition(rec.Review)), "sk": sv(sortPrefix + rec.Fingerprint)},
		UpdateExpression:          aws.String(set),
		ConditionExpression:       aws.String("fate = :was"),
		ExpressionAttributeValues: values,
	}}}
	if rec.Kind != "" {
		items = append(items, s.tallyMoves(rec, fate, by)...)
	}
	_, err = s.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	var cancelled *types.TransactionCanceledException
	if errors.As(err, &cancelled) {
		return false, nil // moved by another reader since it was read
	}
	if written, err = landed(err, "outcome fate change"); written {
		FateMoved(s.metrics, rec, rec.Fate, fate)
	}
	return written, err
}

// tallyMoves are the tally writes of rec's move: the class counts, and its
// dismissal item put (people with standing dismiss it) or deleted.
func (s *Store) tallyMoves(rec Record, fate Fate, by []string) []types.TransactWriteItem {
	var items []types.TransactWriteItem
	scope := rec.Scope
	if acc, dis := delta(rec.Fate, fate); acc != 0 || dis != 0 {
		values := map[string]types.AttributeValue{":c": sv(rec.Category), ":k": sv(rec.Kind),
			":a": &types.AttributeValueMemberN{Value: itoa(acc)}, ":d": &types.AttributeValueMemberN{Value: itoa(dis)}}
		items = append(items, types.TransactWriteItem{Update: &types.Update{TableName: &s.table, Key: tallyKey(scope, rec.Category, rec.Kind),
			UpdateExpression: aws.String(s.keep("SET category = :c, kind = :k", values) + " ADD accepted :a, dismissed :d"), ExpressionAttributeValues: values,
		}})
	}
	key := dismissalKey(scope, rec.Category, rec.Kind, rec.Review, rec.Fingerprint)
	switch {
	case len(by) > 0:
		item := map[string]types.AttributeValue{"review": nv(rec.Review), "fp": sv(rec.Fingerprint), "by": lv(by), "at": sv(job.FormatTime(job.Now()))}
		maps.Copy(item, key)
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: s.kept(item)}})
	case len(rec.By) > 0:
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: &s.table, Key: key}})
	}
	return items
}

// kept adds expires_at (the uniqueness retention) to item, unless kept forever.
func (s *Store) kept(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	if s.retention > 0 {
		item["expires_at"] = nv(job.Now().Add(s.retention).Unix())
	}
	return item
}

// keep adds the same expires_at to an update's SET: a tally lives as long as the
// last record that moved it, so the retention check (RT-3) never finds one
// living forever.
func (s *Store) keep(set string, values map[string]types.AttributeValue) string {
	if s.retention <= 0 {
		return set
	}
	values[":exp"] = nv(job.Now().Add(s.retention).Unix())
	return set + ", expires_at = :exp"
}

// landed maps a conditional write's answer: a failed condition is "already so".
func landed(err error, what string) (bool, error) {
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return false, nil
	case err != nil:
		return false, awserr.Wrap(what, err)
	}
	return true, nil
}

// Review returns the recorded outcomes of a review, every page read.
func (s *Store) Review(ctx context.Context, review int64) ([]Record, error) {
	recs, _, err := s.review(ctx, review)
	return recs, err
}

// review is Review with who was on the review at its first fetch (FirstFetched;
// zero when unrecorded), from the same query.
func (s *Store) review(ctx context.Context, review int64) ([]Record, swarm.Review, error) {
	var first swarm.Review
	items, err := store.Partition(ctx, s.api, s.table, partition(review), "outcome list")
	if err != nil {
		return nil, first, err
	}
	for _, it := range items {
		if str(it["sk"]) == firstSort && !expired(it, job.Now().Unix()) {
			var f struct { // the attributes FirstFetched writes
				Author       string              `dynamodbav:"author"`
				Participants []string            `dynamodbav:"participants"`
				Groups       []string            `dynamodbav:"groups"`
				Projects     map[string][]string `dynamodbav:"projects"`
			}
			_ = attributevalue.UnmarshalMap(it, &f)
			first = swarm.Review{ID: review, Author: f.Author, Participants: f.Participants, Groups: f.Groups, Projects: f.Projects}
		}
	}
	return records(items), first, nil
}

// Who was on a review at its first fetch, before any comment of ours, is one
// more item of its partition (sk FIRST): Swarm makes every commenter a
// participant (CommentListener::commentCreated), so later lists include whoever
// replied to a finding.
const firstSort = "FIRST"

// FirstFetched records rv's author, participants, groups and project branches as
// first fetched; later versions change nothing.
func (s *Store) FirstFetched(ctx context.Context, rv swarm.Review) error {
	projects := map[string]types.AttributeValue{}
	for p, branches := range rv.Projects {
		projects[p] = lv(branches)
	}
	item := map[string]types.AttributeValue{"pk": sv(partition(rv.ID)), "sk": sv(firstSort), "author": sv(rv.Author),
		"participants": lv(rv.Participants), "groups": lv(rv.Groups), "projects": &types.AttributeValueMemberM{Value: projects},
		"recorded_at": sv(job.FormatTime(job.Now()))}
	_, err := s.putOnce(ctx, s.kept(item), "outcome first fetched")
	return err
}

// EmailOnlyRecords returns a changelist's e-mail-only records (fate unknown).
func (s *Store) EmailOnlyRecords(ctx context.Context, changelist int64) ([]Record, error) {
	items, err := store.Partition(ctx, s.api, s.table, emailPrefix+strconv.FormatInt(changelist, 10), "outcome e-mail-only list")
	return records(items), err
}

// records decodes the unexpired finding records among items.
func records(items []map[string]types.AttributeValue) []Record {
	var out []Record
	now := job.Now().Unix()
	for _, it := range items {
		if strings.HasPrefix(str(it["sk"]), sortPrefix) && !expired(it, now) {
			var r Record
			_ = attributevalue.UnmarshalMap(it, &r) // by Record's dynamodbav tags (the attributes item writes)
			out = append(out, r)
		}
	}
	return out
}

// expired: past expires_at but not yet deleted by DynamoDB; counts as gone.
func expired(it map[string]types.AttributeValue, now int64) bool {
	exp, ok := num(it["expires_at"])
	return ok && exp > 0 && exp <= now
}

func lv(ss []string) types.AttributeValue {
	l := make([]types.AttributeValue, 0, len(ss))
	for _, s := range ss {
		l = append(l, sv(s))
	}
	return &types.AttributeValueMemberL{Value: l}
}

func sv(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
func nv(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func str(av types.AttributeValue) string {
	if v, ok := av.(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func num(av types.AttributeValue) (int64, bool) {
	n, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	return v, err == nil
}
