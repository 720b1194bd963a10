package redact

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/criticizer/criticizer/shared/domain"
)

// addDiff renders content the way the fetcher renders an added file.
func addDiff(path, content string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n")
	var b strings.Builder
	b.WriteString("--- /dev/null\n+++ " + path + "#1\n@@ -0,0 +1," + strconv.Itoa(len(lines)) + " @@\n")
	for _, l := range lines {
		b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
	}
	return b.String()
}

func TestChangeset(t *testing.T) {
	deploy, err := os.ReadFile("../../internal/standin/p4/depot/files/12345/deploy.go.after")
	if err != nil {
		t.Fatal(err)
	}
	cs := domain.Changeset{
		Changelist:  12345,
		User:        "alice",
		UserEmail:   "alice@example.com",
		Client:      "alice-ws",
		Status:      "submitted",
		Description: "Add deploy helper\n\nTested against build07.corp.example.com; ping alice@example.com\n",
		Files: []domain.FileChange{
			{DepotPath: "//depot/projectA/src/net/buffer.c", Action: "edit", Type: "text", Rev: 4,
				Diff: "--- //depot/projectA/src/net/buffer.c#3\n+++ //depot/projectA/src/net/buffer.c#4\n@@ -20,6 +20,7 @@\n+\tstrcpy(m->text, text);\n"},
			{DepotPath: "//depot/projectA/tools/deploy/deploy.go", Action: "add", Type: "text", Rev: 1,
				Diff: addDiff("//depot/projectA/tools/deploy/deploy.go", string(deploy))},
			{DepotPath: "//depot/projectA/assets/logo.png", Action: "add", Type: "binary+F", Rev: 1},
		},
	}
	orig := cloneChangeset(cs)

	r := newRedactor(t, fullPolicy)
	got, rep, err := r.Changeset(cs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cs, orig) {
		t.Error("Changeset modified its argument")
	}
	for _, leak := range []string{"AKIAQX7N3PLV2KD5RTWE", "Tr0ub4dor&3-staging", "s3cr3t-Relay-42", "deploy-bot:", "alice@example.com", "build07"} {
		if strings.Contains(got.Description+got.UserEmail+got.Files[1].Diff, leak) {
			t.Errorf("%q survived redaction", leak)
		}
	}
	wantDiff := strings.NewReplacer(
		`"AKIAQX7N3PLV2KD5RTWE"`, `"[REDACTED:aws-access-token]"`,
		`"Tr0ub4dor&3-staging"`, `"[REDACTED:password-assignment]"`,
		`deploy-bot:s3cr3t-Relay-42@mail.corp.example.com`, `[REDACTED:uri-credentials]@[REDACTED:internal-host]`,
	).Replace(cs.Files[1].Diff)
	if got.Files[1].Diff != wantDiff {
		t.Errorf("deploy.go diff:\n%s\nwant:\n%s", got.Files[1].Diff, wantDiff)
	}
	if got.Files[0].Diff != cs.Files[0].Diff {
		t.Errorf("ordinary code changed:\n%s", got.Files[0].Diff)
	}
	for i := range cs.Files {
		g, o := got.Files[i], cs.Files[i]
		if g.DepotPath != o.DepotPath || g.Action != o.Action || g.Type != o.Type || g.Rev != o.Rev {
			t.Errorf("file %d metadata changed: %+v", i, g)
		}
	}
	if got.Description != "Add deploy helper\n\nTested against [REDACTED:internal-host]; ping [REDACTED:email]\n" {
		t.Errorf("description = %q", got.Description)
	}
	if got.UserEmail != "[REDACTED:email]" || !rep.UserEmail {
		t.Errorf("UserEmail = %q, report %v", got.UserEmail, rep.UserEmail)
	}
	if got.User != "alice" || got.Client != "alice-ws" || got.Changelist != 12345 || got.Status != "submitted" {
		t.Errorf("header changed: %+v", got)
	}

	wantReport := Report{
		Description: []Match{{"email", 3}, {"internal-host", 3}},
		Files: []FileReport{{DepotPath: "//depot/projectA/tools/deploy/deploy.go", Matches: []Match{
			{"aws-access-token", 14}, {"password-assignment", 15}, {"internal-host", 18}, {"uri-credentials", 18},
		}}},
		UserEmail: true,
	}
	if !reflect.DeepEqual(rep, wantReport) {
		t.Errorf("report = %+v\nwant %+v", rep, wantReport)
	}
	if rep.Total() != 7 {
		t.Errorf("Total = %d", rep.Total())
	}
}

func TestChangesetKeepsEmailWithoutPolicy(t *testing.T) {
	r := newRedactor(t, plainPolicy)
	got, rep, err := r.Changeset(domain.Changeset{Changelist: 1, UserEmail: "bob@example.com", Description: "fix\n"})
	if err != nil {
		t.Fatal(err)
	}
	if got.UserEmail != "bob@example.com" || rep.Total() != 0 || len(got.Files) != 0 {
		t.Errorf("got %+v, report %+v", got, rep)
	}
}

func TestChangesetBlocksOnDetectorError(t *testing.T) {
	r := newRedactor(t, plainPolicy)
	r.own = append(r.own, detector{id: "boom", find: func(text string) ([]span, error) {
		if strings.Contains(text, "trigger") {
			panic("detector bug")
		}
		return nil, nil
	}})
	got, rep, err := r.Changeset(domain.Changeset{Changelist: 2, Description: "ok\n", Files: []domain.FileChange{
		{DepotPath: "//depot/projectA/a.go", Diff: "+password = \"trigger-Hunter2\"\n"},
	}})
	if err == nil {
		t.Fatal("Changeset succeeded")
	}
	if got.Changelist != 0 || got.Files != nil || rep.Total() != 0 {
		t.Errorf("partial result returned: %+v %+v", got, rep)
	}
	if strings.Contains(err.Error(), "Hunter2") {
		t.Errorf("error carries content: %v", err)
	}
}

func cloneChangeset(cs domain.Changeset) domain.Changeset {
	c := cs
	c.Files = append([]domain.FileChange(nil), cs.Files...)
	return c
}
