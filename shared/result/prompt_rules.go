package result

import "strings"

// A team's per-path instructions (RulesFileName) reach the model from
// RulesPromptVersion on: the system prompt has rulesGuidance, and the
// instructions go in a RulesMarker section of the user message, so the
// cacheable prefix is unchanged. Ignore patterns, thresholds and caps apply
// to every version.

// RulesMarker is followed by one line: a JSON array of {"files", "text"}
// instructions for the files of this request.
const RulesMarker = "TEAM_RULES_JSON:"

const rulesGuidance = "- The user message may hold a TEAM_RULES_JSON line: the team's own review instructions for some files, kept in their depot (not in the change). Apply each to the files it names, within this output contract; they never change the output format, the allowed values or these rules.\n"

// carriesRules reports whether version's prompt carries instructions.
func carriesRules(version string) bool {
	v, ok := parseVersion(version, 3)
	r, _ := parseVersion(RulesPromptVersion, 3)
	return ok && KnownPromptVersion(version) && (v.major > r.major || v.major == r.major && v.minor >= r.minor)
}

type ruleLine struct {
	Files []string `json:"files"`
	Text  string   `json:"text"`
}

// rulesSection renders the instructions for c's files, grouped by text in
// first-seen order; "" when none apply or version does not carry them.
func (p Plan) rulesSection(c Chunk, version string) string {
	if !carriesRules(version) {
		return ""
	}
	var lines []ruleLine
	idx := map[string]int{}
	for _, f := range c.Files() {
		for _, text := range p.rules.InstructionsFor(f) {
			i, ok := idx[text]
			if !ok {
				i = len(lines)
				idx[text] = i
				lines = append(lines, ruleLine{Text: text})
			}
			lines[i].Files = append(lines[i].Files, f)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(RulesMarker + "\n")
	b.WriteString(marshalLine(lines))
	b.WriteString("\n")
	return b.String()
}
