package store

import (
	"fmt"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/job"
)

// jobItem is a job item: shared/job's types name their own attributes
// (dynamodbav tags), with the last applied write's token beside them.
type jobItem struct {
	job.Job
	// LastWrite is the last applied write's token: a retry whose condition fails
	// finds its own here.
	LastWrite string `dynamodbav:"last_write,omitempty"`
}

// toItem and job keep stages a map (never NULL): writes set its members.
func toItem(j *job.Job) *jobItem { return &jobItem{Job: *withStages(j)} }

func (it *jobItem) job() *job.Job { return withStages(&it.Job) }

func withStages(j *job.Job) *job.Job {
	c := *j
	if c.Stages == nil {
		c.Stages = map[domain.Stage]*job.StageRecord{}
	}
	return &c
}

func jobPK(id string) string       { return "JOB#" + id }
func idemPK(key string) string     { return "IDEM#" + key }
func changelistPK(cl int64) string { return fmt.Sprintf("CL#%d", cl) }

const (
	skJob        = "JOB"
	skIdem       = "IDEM"
	skChangelist = "CL"
)
