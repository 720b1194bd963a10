//go:build integration

package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/doctor"
)

// doctorReport runs `criticizer --json doctor --local` as an operator would
// (the deployed doctor function on the emulator, against the stand-ins).
func doctorReport(t *testing.T) (map[string]doctor.Verdict, string, error) {
	t.Helper()
	stdout, stderr, err := runCriticizer(t, "--json", "doctor", "--local", "--change", "12345")
	var r doctor.Report
	if jerr := json.Unmarshal([]byte(stdout), &r); jerr != nil {
		t.Fatalf("doctor --json: %v\nstdout: %s\nstderr: %s", jerr, stdout, stderr)
	}
	m := map[string]doctor.Verdict{}
	for _, v := range r.Verdicts {
		m[v.Check] = v
	}
	return m, stderr, err
}

// The pre-flight passes on the local environment, every outside system
// checked from the function's side; when the service user's protections
// exclude a path under the allow-list it fails, naming the protection line
// and the fix, and proves nothing further (issue 36).
func TestDoctorLocal(t *testing.T) {
	got, stderr, err := doctorReport(t)
	if err != nil {
		t.Fatalf("doctor --local failed on the stand-ins: %v\n%s\n%+v", err, stderr, got)
	}
	for check, want := range map[string]doctor.Status{
		doctor.CheckP4Connection: doctor.OK, doctor.CheckP4Login: doctor.OK, doctor.CheckP4Protections: doctor.OK,
		doctor.CheckP4Sample: doctor.OK, doctor.CheckModel: doctor.OK, doctor.CheckMail: doctor.OK,
	} {
		if got[check].Status != want {
			t.Errorf("%s: %+v, want %s", check, got[check], want)
		}
	}
	if v := got[doctor.CheckP4Protections]; !strings.Contains(v.Detail, "//...") {
		t.Errorf("the protections verdict names no line: %+v", v)
	}
	if v := got[doctor.CheckP4Sample]; !strings.Contains(v.Detail, "change 12345: 3 files") {
		t.Errorf("sample change: %+v, want its 3 files", v)
	}
	if v := got[doctor.CheckSwarmReach]; v.Status == doctor.Fail || v.Status == doctor.Skip {
		t.Errorf("Swarm is configured locally: %+v", v)
	}
	text := criticizer(t, "doctor", "--local")
	t.Logf("criticizer doctor --local:\n%s", text)
	if !strings.Contains(text, "ok    "+doctor.CheckP4Protections+": ") || !strings.Contains(text, " 0 fail,") {
		t.Errorf("doctor --local output:\n%s", text)
	}

	withServer(t, func(s map[string]any) { s["protect"] = []string{"//depot/projectA/tools/..."} })
	got, stderr, err = doctorReport(t)
	if err == nil || !strings.Contains(stderr, "check(s) failed") {
		t.Fatalf("doctor passed with an exclusion under the allow-list: %v\n%s", err, stderr)
	}
	v := got[doctor.CheckP4Protections]
	if v.Status != doctor.Fail || !strings.Contains(v.Detail, "exclusion_under_allowlist") || !strings.Contains(v.Detail, "//depot/projectA/tools/...") ||
		!strings.Contains(v.Fix, "depotAllowList") || !strings.Contains(v.Fix, "p4 protect") {
		t.Errorf("protections verdict %+v: want a failure naming the excluding line and the fix", v)
	}
	if s := got[doctor.CheckP4Sample].Status; s != doctor.Skip {
		t.Errorf("the sample change was judged (%s) under protections that refuse every fetch", s)
	}
	assertNoSecrets(t, "doctor report", stderr+v.Detail)
}
