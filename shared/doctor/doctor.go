// Package doctor is the pre-flight: before a deployment's first review it proves
// that the systems outside AWS answer the functions as the pipeline needs —
// Perforce (connection, trust, login, protections proof, a sample changelist),
// P4 Code Review (reach, release, login), the model endpoint (the llm stage's
// structured-output form, the context window) and the e-mail identity — and
// names the fix for every failure. It runs in the doctor function, on the fetch
// function's network (an answer from a laptop would prove nothing about the
// VPC's); `criticizer doctor` invokes it. A check whose prerequisite failed is
// skipped, saying which.
package doctor

import (
	"context"
	"fmt"
	"slices"
)

// Status is a check's verdict.
type Status string

// The verdicts: only Fail fails the report; Warn is a risk to know of, Skip a
// check that could not run here.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Verdict is one check's outcome and, unless it passed, the fix.
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

// bad is a verdict that did not pass, with its fix.
func bad(s Status, check, detail, fix string) Verdict {
	return Verdict{Check: check, Status: s, Detail: detail, Fix: fix}
}

// Report is every verdict of one run, in the order the checks ran.
type Report struct {
	Verdicts []Verdict `json:"verdicts"`
}

// Failed reports whether any check failed.
func (r Report) Failed() bool {
	return slices.ContainsFunc(r.Verdicts, func(v Verdict) bool { return v.Status == Fail })
}

// Request optionally names a sample changelist and a Swarm review.
type Request struct {
	Change int64 `json:"change,omitempty"`
	Review int64 `json:"review,omitempty"`
}

// Doctor is one deployment's pre-flight; a part the wiring could not build is
// nil, and Broken says why.
type Doctor struct {
	P4     *P4
	Swarm  *Swarm // nil: Swarm is off (no swarmUrl)
	Model  *Model
	Mail   *Mail
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

// Handle is the doctor function's handler: a failed check is a verdict, not an
// error.
func (d *Doctor) Handle(ctx context.Context, req Request) (Report, error) {
	return d.Run(ctx, req), nil
}
