package weekly

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/criticizer/criticizer/shared/awserr"
	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
	"github.com/criticizer/criticizer/shared/job"
	"github.com/criticizer/criticizer/shared/outcome"
	"github.com/criticizer/criticizer/shared/rerun"
	"github.com/criticizer/criticizer/shared/store"
)

// Entry is what one job adds to its week: identities and counts, never
// code, model text or addresses (docs/guarantees.md RT-2).
type Entry struct {
	JobID      string `json:"job"`
	Changelist int64  `json:"cl"`
	// Review is the Swarm review its findings were posted on; 0: told by
	// e-mail only, so their fate is unknown (package outcome).
	Review int64 `json:"review,omitempty"`
	// Dirs are the distinct directories of the changed files: the job
	// touches an owner's path when one of them is under it.
	Dirs     []string  `json:"dirs"`
	Findings []Finding `json:"findings,omitempty"`
	// Withheld counts the findings withheld as repeatedly dismissed.
	Withheld int `json:"withheld,omitempty"`
	// Unlisted counts the findings left out of a job's entry so it fits
	// one item (fit): a review of thousands of files.
	Unlisted     int     `json:"unlisted,omitempty"`
	InputTokens  int64   `json:"in,omitempty"`
	OutputTokens int64   `json:"out,omitempty"`
	CostUSD      float64 `json:"usd,omitempty"`
}

// Finding is one finding the job reported, by fingerprint.
type Finding struct {
	Fingerprint string `json:"fp"`
	File        string `json:"file"`
	Severity    string `json:"sev"`
}

// EntryOf is j's entry: its changed files' directories, the findings it
// reported (after any withheld), and the tokens and estimated cost its
// review meta records.
func EntryOf(j *job.Job, review domain.ReviewResult, current []rerun.Current, cs *domain.Changeset) Entry {
	meta := domain.ReadReviewMeta(review.Meta)
	e := Entry{JobID: j.ID, Changelist: j.Changelist, Withheld: meta.WithheldAsDismissed,
		InputTokens: int64(meta.InputTokens), OutputTokens: int64(meta.OutputTokens), CostUSD: meta.EstimatedCostUSD}
	if j.Swarm != nil {
		e.Review = j.Swarm.Review
	}
	for _, f := range cs.Files {
		e.Dirs = append(e.Dirs, dirOf(f.DepotPath))
	}
	for _, c := range current {
		e.Findings = append(e.Findings, Finding{Fingerprint: c.Fingerprint, File: c.Finding.File, Severity: strings.ToLower(c.Finding.Severity)})
		e.Dirs = append(e.Dirs, dirOf(c.Finding.File))
	}
	slices.Sort(e.Dirs)
	e.Dirs = slices.Compact(e.Dirs)
	return e
}

// dirOf is a depot file's directory, "//depot/a" for "//depot/a/f.c"
// (path.Dir would clean the depot's leading "//" to "/").
func dirOf(file string) string {
	if i := strings.LastIndexByte(file, '/'); i > 1 {
		return file[:i]
	}
	return file
}

// A week entry is one item of the jobs table,
//
//	pk  DIGEST#week#<2026-W48>
//	sk  JOB#<job id>
//
// so a week's digest reads one partition (a Query), never the table's
// history. It is kept EntryRetention after its week ends.
const (
	weekPrefix = "DIGEST#week#"
	jobPrefix  = "JOB#"
)

// EntryRetention is how long a week's entries outlive the week: long
// enough for a late or repeated digest run, short for data nobody reads.
const EntryRetention = 35 * 24 * time.Hour

// Entries keeps week entries in the jobs table.
type Entries struct {
	API   store.API
	Table string
}

// Record stores e under week (the week its job was created in, so every
// retry of the job writes the same item): the same job replaces its own
// entry, a retry changes nothing.
func (s *Entries) Record(ctx context.Context, week Week, e Entry) error {
	if e.JobID == "" {
		return failure.Errorf(failure.InternalBug, "digest: an entry needs its job id")
	}
	data, err := fit(e)
	if err != nil {
		return failure.Wrap(failure.InternalBug, err)
	}
	_, err = s.API.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.Table, Item: map[string]types.AttributeValue{
		"pk": sv(weekPrefix + week.String()), "sk": sv(jobPrefix + e.JobID), "data": sv(string(data)),
		"expires_at": &types.AttributeValueMemberN{Value: strconv.FormatInt(week.End().Add(EntryRetention).Unix(), 10)},
	}})
	if err != nil {
		return awserr.Wrap("digest entry", err)
	}
	return nil
}

// maxEntryBytes keeps an entry inside one DynamoDB item (400 KB), with
// room for its keys.
const maxEntryBytes = 350_000

// fit marshals e, made smaller until it fits one item: its directories
// coarsened to the shallowest scope (outcome.ScopeAt depth 1: an owner of a deeper path then
// counts the job if it touched the scope), then its least severe findings
// left out and counted in Unlisted, which the digest reports.
func fit(e Entry) ([]byte, error) {
	data, err := json.Marshal(e)
	if err != nil || len(data) <= maxEntryBytes {
		return data, err
	}
	for i, d := range e.Dirs {
		e.Dirs[i] = strings.TrimSuffix(outcome.ScopeAt(d+"/f", 1), "/...")
	}
	slices.Sort(e.Dirs)
	e.Dirs = slices.Compact(e.Dirs)
	slices.SortStableFunc(e.Findings, func(a, b Finding) int { return domain.SeverityRank(a.Severity) - domain.SeverityRank(b.Severity) })
	for {
		if data, err = json.Marshal(e); err != nil || len(data) <= maxEntryBytes || len(e.Findings) == 0 {
			return data, err
		}
		drop := max(len(e.Findings)/10, 1)
		e.Findings, e.Unlisted = e.Findings[:len(e.Findings)-drop], e.Unlisted+drop
	}
}

// Week reads every entry of week, every page of its one partition.
func (s *Entries) Week(ctx context.Context, week Week) ([]Entry, error) {
	items, err := store.Partition(ctx, s.API, s.Table, weekPrefix+week.String(), "digest week")
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, it := range items {
		var e Entry
		data, _ := it["data"].(*types.AttributeValueMemberS)
		if data == nil || json.Unmarshal([]byte(data.Value), &e) != nil {
			return nil, failure.Errorf(failure.SchemaInvalid, "digest: week entry %v is malformed", it["sk"])
		}
		out = append(out, e)
	}
	return out, nil
}

func sv(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
