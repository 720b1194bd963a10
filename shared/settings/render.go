package settings

import (
	"fmt"
	"strings"
)

// Markdown is table t of docs/configuration.md, header included.
func Markdown(t Table) string {
	var b strings.Builder
	if t == Network {
		b.WriteString("| `cdk.json` key | default | needed in |\n|---|---|---|\n")
	} else {
		b.WriteString("| `cdk.json` key | variable (functions) | default | needed in |\n|---|---|---|---|\n")
	}
	for _, s := range Declared {
		if s.Table != t {
			continue
		}
		if s.StackVars != "" && len(s.Vars) == 0 {
			fmt.Fprintf(&b, "| *stack* | %s | | |\n", s.StackVars)
			continue
		}
		if s.StackVars != "" {
			fmt.Fprintf(&b, "| *stack* | %s | %s | %s |\n", s.StackVars, s.Accepts.Default, s.neededRange())
			continue
		}
		key := ticks(s.Keys)
		if s.KeyNote != "" {
			key += " " + s.KeyNote
		}
		if t == Network {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", key, s.Default, s.needed())
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", key, s.variables(), s.Default, s.needed())
	}
	return b.String()
}

func ticks(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return "`" + strings.Join(xs, "`, `") + "`"
}

// variables is the "variable (functions)" cell.
func (s Setting) variables() string {
	if len(s.Vars) == 0 {
		return strings.TrimSpace("— " + s.VarNote)
	}
	readers := strings.Join(s.ReadBy, ", ")
	if s.ReadNote != "" {
		readers += ", " + s.ReadNote
	}
	return fmt.Sprintf("%s (%s)", ticks(s.Vars), readers)
}

// needed is the "needed in" cell: where it must be given, then its range,
// then what synth refuses as a placeholder.
func (s Setting) needed() string {
	if s.Placeholder == nil {
		return s.neededRange()
	}
	return s.neededRange() + "; refused outside local: " + s.Placeholder.Doc
}

// where is where the setting must be given: Needed, or that it is never
// empty where it is Required (its default fills it).
func (s Setting) where() string {
	switch {
	case s.Needed != "" || s.Required == "":
		return s.Needed
	case s.Required == Everywhere:
		return "never empty"
	}
	return "never empty " + string(s.Required)
}

func (s Setting) neededRange() string {
	rng := s.Accepts.Span()
	if s.Accepts.Kind == Choice {
		rng = ticks(s.Accepts.OneOf)
	}
	if s.Range != "" && rng != "" {
		rng += "; " + s.Range
	} else if s.Range != "" {
		rng = s.Range
	}
	needed := s.where()
	switch {
	case needed == "" && rng == "":
		return "—"
	case rng == "":
		return needed
	case needed == "":
		return "— (" + rng + ")"
	}
	return needed + " (" + rng + ")"
}

// marker opens table t's generated block in the docs; endMarker closes it.
func marker(t Table) string {
	return "<!-- settings:" + string(t) + " (generated from shared/settings: go generate ./shared/settings) -->\n"
}

const endMarker = "<!-- /settings -->\n"

// Docs returns doc with each table's generated block replaced by Markdown;
// an error names a table whose block is missing.
func Docs(doc string) (string, error) {
	for _, t := range Tables {
		start := strings.Index(doc, marker(t))
		if start < 0 {
			return "", fmt.Errorf("no %q in the docs", strings.TrimSpace(marker(t)))
		}
		body := start + len(marker(t))
		end := strings.Index(doc[body:], endMarker)
		if end < 0 {
			return "", fmt.Errorf("table %s: no %q after its start", t, strings.TrimSpace(endMarker))
		}
		doc = doc[:body] + Markdown(t) + doc[body+end:]
	}
	return doc, nil
}
