package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Finding is one validator result on one resource of one environment.
type Finding struct {
	Tool     string // cfn-lint or checkov
	Env      string
	Check    string // W3005, CKV_AWS_117, …
	Resource string // logical id ("" when the finding is not about one resource)
	Message  string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s %s %s: %s", f.Env, f.Tool, f.Check, f.Resource, f.Message)
}

// IsError reports a cfn-lint error (E…), which is never acceptable.
func (f Finding) IsError() bool { return f.Tool == "cfn-lint" && strings.HasPrefix(f.Check, "E") }

// runCfnLint runs cfn-lint on one template (exit status 0, 2, 4, 6, 8 mean
// findings of some level; the JSON says which).
func runCfnLint(ctx context.Context, venv, env, tmpl string) ([]Finding, error) {
	out, err := runTool(ctx, filepath.Join(venv, "bin", "cfn-lint"), "--format", "json", "--", tmpl)
	if err != nil {
		return nil, err
	}
	return parseCfnLint(env, out)
}

func parseCfnLint(env string, out []byte) ([]Finding, error) {
	var raw []struct {
		Level    string
		Message  string
		Rule     struct{ Id string }
		Location struct{ Path []any }
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, fmt.Errorf("cfn-lint output: %w: %.300s", err, out)
	}
	var fs []Finding
	for _, r := range raw {
		res := ""
		if len(r.Location.Path) > 1 && r.Location.Path[0] == "Resources" {
			res, _ = r.Location.Path[1].(string)
		}
		fs = append(fs, Finding{Tool: "cfn-lint", Env: env, Check: r.Rule.Id, Resource: res, Message: r.Message})
	}
	return fs, nil
}

// runCheckov runs checkov's CloudFormation checks on one template.
func runCheckov(ctx context.Context, venv, env, tmpl string) ([]Finding, error) {
	out, err := runTool(ctx, filepath.Join(venv, "bin", "checkov"), "--quiet", "--compact", "--framework", "cloudformation",
		"--output", "json", "--skip-download", "--file", tmpl)
	if err != nil {
		return nil, err
	}
	return parseCheckov(env, out)
}

func parseCheckov(env string, out []byte) ([]Finding, error) {
	type report struct {
		Results struct {
			FailedChecks []struct {
				CheckID   string `json:"check_id"`
				CheckName string `json:"check_name"`
				Resource  string `json:"resource"`
			} `json:"failed_checks"`
		} `json:"results"`
		Summary struct {
			ParsingErrors int `json:"parsing_errors"`
		} `json:"summary"`
	}
	var rep report
	if err := json.Unmarshal(out, &rep); err != nil {
		// checkov prints a list when it ran several frameworks, and
		// {"passed": 0, ...} summary only when it found nothing to check.
		var reps []report
		if err2 := json.Unmarshal(out, &reps); err2 != nil || len(reps) != 1 {
			return nil, fmt.Errorf("checkov output: %w: %.300s", err, out)
		}
		rep = reps[0]
	}
	if rep.Summary.ParsingErrors > 0 {
		return nil, errors.New("checkov could not parse the template")
	}
	var fs []Finding
	for _, c := range rep.Results.FailedChecks {
		// "AWS::Lambda::Function.WebhookFunction" → WebhookFunction
		res := c.Resource[strings.LastIndexByte(c.Resource, '.')+1:]
		fs = append(fs, Finding{Tool: "checkov", Env: env, Check: c.CheckID, Resource: res, Message: c.CheckName})
	}
	return fs, nil
}

// runTool runs a validator and returns its stdout; a non-zero exit is
// findings, not failure, as long as it printed a report.
func runTool(ctx context.Context, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, fmt.Errorf("%s: %w (install it with `localstack/start.sh --install-validators`)", bin, err)
	}
	if stdout.Len() == 0 {
		return nil, fmt.Errorf("%s: no report (%v): %.500s", filepath.Base(bin), err, stderr.String())
	}
	return stdout.Bytes(), nil
}
