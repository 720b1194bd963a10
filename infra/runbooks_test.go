package main

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// runbookTable reads docs/operating.md's alarm table: each alarm name (a
// backquoted word ending in "Alarm", "<…>" standing for any word, such as
// `<Function>ErrorsAlarm`) with the anchor of the runbook its row links,
// and the anchors of the document's headings.
func runbookTable(t *testing.T) (names map[*regexp.Regexp]string, anchors map[string]bool) {
	t.Helper()
	b, err := os.ReadFile("../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	names, anchors = map[*regexp.Regexp]string{}, map[string]bool{}
	link := regexp.MustCompile(`\]\(#([a-z0-9-]+)\)`)
	alarm := regexp.MustCompile("`([A-Za-z0-9<>]*Alarm[A-Za-z0-9<>]*)`")
	slug := regexp.MustCompile(`[^a-z0-9 -]`)
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			anchors[strings.ReplaceAll(slug.ReplaceAllString(strings.ToLower(h), ""), " ", "-")] = true
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "|") {
			continue
		}
		to := link.FindStringSubmatch(cells[2])
		for _, m := range alarm.FindAllStringSubmatch(cells[1], -1) {
			if to == nil {
				t.Errorf("docs/operating.md: the row of %s links no runbook", m[1])
				continue
			}
			pattern := regexp.MustCompile(`<[^>]+>`).ReplaceAllString(regexp.QuoteMeta(m[1]), `[A-Za-z0-9]+`)
			names[regexp.MustCompile("^"+strings.NewReplacer(`\<`, "<", `\>`, ">").Replace(pattern)+"$")] = to[1]
		}
	}
	return names, anchors
}

// TestEveryAlarmHasARunbook: every alarm the CDK app synthesizes, in every
// checked-in environment and with every optional feature on, is named in
// docs/operating.md's alarm table, and the row links a runbook section the
// document has. A new alarm fails here until its runbook is written
// (docs/development.md, "Add an alarm").
func TestEveryAlarmHasARunbook(t *testing.T) {
	names, anchors := runbookTable(t)
	if len(names) < 20 {
		t.Fatalf("read %d alarm names from docs/operating.md's table; the check would prove little", len(names))
	}
	for pattern, anchor := range names {
		if !anchors[anchor] {
			t.Errorf("docs/operating.md: %s links #%s, which no heading has", pattern, anchor)
		}
	}
	checkedIn := cdkContext(t)
	layer := fakeLayer(t)
	seen := map[string]bool{}
	for _, tc := range []struct {
		env       string
		overrides map[string]any
	}{
		{"local", nil}, {"dev", nil}, {"staging", nil}, {"prod", nil},
		{"staging", everything("smtp", "openai")}, {"prod", everything("ses", "bedrock")},
	} {
		ctx := map[string]any{}
		for k, v := range checkedIn {
			ctx[k] = v
		}
		delete(ctx, ctxAssetRoot)
		ctx[ctxEnv] = tc.env
		if tc.env != "local" {
			o := map[string]any{"p4LayerPath": layer, "p4LayerSha256": fakeLayerSHA256, "smtpHost": "smtp.example.com"}
			for k, v := range tc.overrides {
				o[k] = v
			}
			ctx[ctxOverrides] = o
		}
		_, m := synth(t, ctx)
		for id, r := range resources(m) {
			if r["Type"] == "AWS::CloudWatch::Alarm" {
				seen[id] = true
			}
		}
	}
	if len(seen) < 20 {
		t.Fatalf("the stacks synthesized %d alarms; the check would prove little", len(seen))
	}
	var ids []string
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		found := false
		for pattern := range names {
			found = found || pattern.MatchString(id)
		}
		if !found {
			t.Errorf("alarm %s has no runbook: add its row to docs/operating.md's alarm table and its section", id)
		}
	}
}
