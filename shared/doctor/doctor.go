// Package doctor is the pre-flight: it proves, before a deployment's first
// review, that the systems outside AWS answer the functions the way the
// pipeline needs them to — Perforce (connection, trust, login, the
// protections proof, a sample changelist fetched whole), P4 Code Review
// (reachable, its release, the service user's login), the model endpoint
// (the structured-output form the llm stage sends, the context window) and
// the e-mail identity — and names the fix for every check that fails.
//
// It runs inside the doctor function (functions/doctor), which the stack
// places on the fetch function's network: an answer from the laptop's
// network would prove nothing about the VPC's. `criticizer doctor` invokes
// it and prints the report. Each check is small and independent; a check
// whose prerequisite failed is skipped, saying which.
package doctor

import (
	"context"
	"fmt"
)

// Status is a check's verdict.
type Status string

// The verdicts. Only Fail makes the report fail: Warn is a risk the
// operator should know of, Skip a check that could not run here.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Verdict is one check's outcome: what was checked, what was found and,
// unless it passed, what to do about it.
type Verdict struct {
	Check  string `json:"check"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

func ok(check, format string, args ...any) Verdict {
	return Verdict{Check: check, Status: OK, Detail: fmt.Sprintf(format, args...)}
}

func skip(check, detail string) Verdict { return Verdict{Check: check, Status: Skip, Detail: detail} }

// Report is every verdict of one run, in the order the checks ran.
type Report struct {
	Verdicts []Verdict `json:"verdicts"`
}

// Failed reports whether any check failed.
func (r Report) Failed() bool {
	for _, v := range r.Verdicts {
		if v.Status == Fail {
			return true
		}
	}
	return false
}

// Request is what an invocation may add: a sample changelist to fetch
// whole and a Swarm review to read, both optional.
type Request struct {
	Change int64 `json:"change,omitempty"`
	Review int64 `json:"review,omitempty"`
}

// Doctor is the pre-flight of one deployment. A nil part is one the wiring
// could not build: Broken says why, as failed verdicts.
type Doctor struct {
	P4    *P4
	Swarm *Swarm // nil: Swarm is off (no swarmUrl)
	Model *Model
	Mail  *Mail
	// Broken are the verdicts of parts that could not be built (a secret
	// that cannot be read, a p4 executable missing), reported first.
	Broken []Verdict
}

// Run runs every check, in order: Perforce, Swarm, the model, e-mail.
func (d *Doctor) Run(ctx context.Context, req Request) Report {
	r := Report{Verdicts: append([]Verdict(nil), d.Broken...)}
	add := func(v ...Verdict) { r.Verdicts = append(r.Verdicts, v...) }
	if d.P4 != nil {
		add(d.P4.checks(ctx, req.Change)...)
	}
	if d.Swarm != nil {
		add(d.Swarm.checks(ctx, req.Review)...)
	} else {
		add(skip(CheckSwarmReach, "Swarm is off in this environment (no swarmUrl)"))
	}
	if d.Model != nil {
		add(d.Model.checks(ctx)...)
	}
	if d.Mail != nil {
		add(d.Mail.checks(ctx)...)
	}
	return r
}

// Handle is the doctor function's handler: the report is the answer; a
// failed check is a verdict, not an error.
func (d *Doctor) Handle(ctx context.Context, req Request) (Report, error) {
	return d.Run(ctx, req), nil
}
