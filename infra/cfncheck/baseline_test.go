package main

import (
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	lambdaVPC := Accepted{Tool: "checkov", Check: "CKV_AWS_117", Resources: []string{"ReviewFunction"}, Reason: "only fetch needs the VPC"}
	devOnly := Accepted{Tool: "checkov", Check: "CKV_AWS_119", Resources: []string{"JobsTable"}, Envs: []string{"dev"}, Reason: "AWS-owned key in dev"}
	anyStage := Accepted{Tool: "checkov", Check: "CKV_AWS_120", Resources: []string{"*"}, Reason: "no caching"}
	f := func(env, tool, check, res string) Finding {
		return Finding{Env: env, Tool: tool, Check: check, Resource: res}
	}

	cases := []struct {
		name                string
		accepted            []Accepted
		findings            []Finding
		new, invalid, stale int
		ok                  bool
	}{
		{"accepted on its resource", []Accepted{lambdaVPC}, []Finding{f("prod", "checkov", "CKV_AWS_117", "ReviewFunction")}, 0, 0, 0, true},
		{"same check on another resource is new", []Accepted{lambdaVPC},
			[]Finding{f("prod", "checkov", "CKV_AWS_117", "ReviewFunction"), f("prod", "checkov", "CKV_AWS_117", "FetchFunction")}, 1, 0, 0, false},
		{"env-scoped entry does not cover prod", []Accepted{devOnly},
			[]Finding{f("dev", "checkov", "CKV_AWS_119", "JobsTable"), f("prod", "checkov", "CKV_AWS_119", "JobsTable")}, 1, 0, 0, false},
		{"wildcard resource", []Accepted{anyStage}, []Finding{f("dev", "checkov", "CKV_AWS_120", "ApiDeploymentStagedevX")}, 0, 0, 0, true},
		{"stale entry fails", []Accepted{lambdaVPC, anyStage}, []Finding{f("prod", "checkov", "CKV_AWS_117", "ReviewFunction")}, 0, 0, 1, false},
		{"entry without a reason fails", []Accepted{{Tool: "checkov", Check: "CKV_AWS_120", Resources: []string{"*"}, Reason: " "}},
			[]Finding{f("dev", "checkov", "CKV_AWS_120", "S")}, 0, 1, 0, false},
		{"cfn-lint errors cannot be accepted", []Accepted{{Tool: "cfn-lint", Check: "E3002", Resources: []string{"*"}, Reason: "x"}},
			[]Finding{f("dev", "cfn-lint", "E3002", "JobsTable")}, 1, 1, 1, false},
		{"a tool's check id does not cover the other tool", []Accepted{{Tool: "cfn-lint", Check: "CKV_AWS_120", Resources: []string{"*"}, Reason: "x"}},
			[]Finding{f("dev", "checkov", "CKV_AWS_120", "S")}, 1, 0, 1, false},
		{"nothing found, nothing accepted", nil, nil, 0, 0, 0, true},
	}
	for _, c := range cases {
		r := (&Baseline{Accepted: c.accepted}).Judge(c.findings)
		if len(r.New) != c.new || len(r.Invalid) != c.invalid || len(r.Stale) != c.stale || r.OK() != c.ok {
			t.Errorf("%s: new %d invalid %d stale %d ok %v, want %d %d %d %v\n%s", c.name, len(r.New), len(r.Invalid), len(r.Stale), r.OK(),
				c.new, c.invalid, c.stale, c.ok, r)
		}
	}
}

// TestCheckedInBaseline: every accepted check carries its reason and names
// what it accepts; the file decodes strictly.
func TestCheckedInBaseline(t *testing.T) {
	b, err := loadBaseline("baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Accepted) == 0 {
		t.Fatal("empty baseline")
	}
	r := b.Judge(nil)
	if len(r.Invalid) != 0 {
		t.Errorf("invalid entries: %v", r.Invalid)
	}
	for _, a := range b.Accepted {
		if len(strings.Fields(a.Reason)) < 8 {
			t.Errorf("%s %s: reason %q does not say why", a.Tool, a.Check, a.Reason)
		}
	}
}

func TestParseReports(t *testing.T) {
	lint := `[{"Level":"Warning","Message":"dup","Rule":{"Id":"W3005"},"Location":{"Path":["Resources","FetchFunction","DependsOn",1]}},
	          {"Level":"Error","Message":"bad","Rule":{"Id":"E1001"},"Location":{"Path":["Outputs"]}}]`
	fs, err := parseCfnLint("dev", []byte(lint))
	if err != nil || len(fs) != 2 || fs[0].Resource != "FetchFunction" || fs[0].IsError() || !fs[1].IsError() || fs[1].Resource != "" {
		t.Errorf("cfn-lint: %v %v", fs, err)
	}
	ck := `{"results":{"failed_checks":[{"check_id":"CKV_AWS_117","check_name":"VPC","resource":"AWS::Lambda::Function.ReviewFunction"}]},"summary":{"parsing_errors":0}}`
	fs, err = parseCheckov("prod", []byte(ck))
	if err != nil || len(fs) != 1 || fs[0].Resource != "ReviewFunction" || fs[0].Check != "CKV_AWS_117" || fs[0].Env != "prod" {
		t.Errorf("checkov: %v %v", fs, err)
	}
	if _, err := parseCheckov("prod", []byte(`{"results":{},"summary":{"parsing_errors":1}}`)); err == nil {
		t.Error("a template checkov could not parse passed")
	}
	if _, err := parseCheckov("prod", []byte("Traceback")); err == nil {
		t.Error("garbage passed")
	}
}
