package result

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/criticizer/criticizer/shared/domain"
	"github.com/criticizer/criticizer/shared/failure"
)

// MaxResponseBytes bounds the model output Parse accepts: more is a
// runaway generation, not a review.
const MaxResponseBytes = 1 << 20

// maxLine bounds line numbers: beyond any real file, and an int everywhere.
const maxLine = math.MaxInt32

// Options tune Parse. The zero value is the strict default.
type Options struct {
	PromptVersion string // the request's prompt_version; "" is StablePromptVersion.
	// AllowPromptPatchDrift accepts a prompt_version differing from
	// PromptVersion only in its patch segment (rule RC-4's configured drift).
	AllowPromptPatchDrift bool
}

// Parse validates a model response and returns the ReviewResult to use, in
// the order of rule RC-2: (1) parse JSON, (2) validate the top level and the
// version compatibility, (3) validate each finding, (4) match each finding's
// file with changedFiles.
//
// Failing (1) or (2) rejects the response: the error is classed
// failure.SchemaInvalid, wraps a *RejectError, and the diagnostics end with
// response_rejected. Failing (3) or (4) drops the finding alone
// (finding_dropped); if all were dropped, the findings list is empty, an
// all_findings_dropped warning is added, and err is nil.
//
// Only rule RC-3's safe coercions are applied, each a coercion_applied:
// whitespace trimmed from strings, `\` in file as `/`, integral numeric
// strings and numbers (12.0) in line/end_line as integers. Unknown keys
// reject (top level) or drop (finding) as schema_mismatch under
// SchemaVersion; under a newer compatible minor (RC-4) they are removed as
// field_dropped/unknown_field.
//
// File matching (RC-5, "file-path reconciliation"): a file matches a changed
// path equal to it, or equal after removing leading "./" and slashes
// ("depot/main/a.c" matches "//depot/main/a.c"), or of which it is a
// whole-segment suffix ("src/a.c"); the file is rewritten to the changed path
// (coercion_applied/path_reconciled). A form two changed paths share is
// ambiguous: file_not_in_changed_files.
func Parse(raw []byte, changedFiles []string, opts Options) (domain.ReviewResult, Diagnostics, error) {
	opts.PromptVersion = cmp.Or(opts.PromptVersion, StablePromptVersion)
	p := &parser{opts: opts}
	res, err := p.parse(raw, changedFiles)
	if err != nil {
		return domain.ReviewResult{}, p.diags, err
	}
	return res, p.diags, nil
}

type parser struct {
	opts  Options
	diags Diagnostics
}

var (
	schemaVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
	promptVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9]+)?$`)
	integralRE      = regexp.MustCompile(`^[+-]?[0-9]+(\.0+)?$`)
)

func (p *parser) parse(raw []byte, changed []string) (domain.ReviewResult, error) {
	// 1. Parse JSON.
	if len(raw) > MaxResponseBytes {
		return domain.ReviewResult{}, p.reject(ReasonResponseTooLarge, "",
			fmt.Sprintf("%d bytes, limit %d", len(raw), MaxResponseBytes))
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return domain.ReviewResult{}, p.reject(ReasonInvalidJSON, "", jsonErrorDetail(err))
	}
	// 2. Top level.
	top, newerMinor, err := p.topLevel(doc)
	if err != nil {
		return domain.ReviewResult{}, err
	}
	// 3. Each finding, then 4. repository-aware reconciliation.
	kept := p.findings(top["findings"].([]any), changed, newerMinor) // the schema guarantees an array
	res := domain.ReviewResult{
		SchemaVersion: top["schema_version"].(string),
		PromptVersion: top["prompt_version"].(string),
		Findings:      kept,
	}
	if s, ok := top["summary"].(string); ok {
		res.Summary = s
	}
	if m, ok := top["meta"].(map[string]any); ok && len(m) > 0 {
		res.Meta = m
	}
	return res, nil
}

// topLevel checks the answer's top level: an object with compatible versions
// (newerMinor: its unknown fields are dropped) that matches the schema, with
// an empty findings list so one bad finding cannot reject the response.
func (p *parser) topLevel(doc any) (top map[string]any, newerMinor bool, err error) {
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, false, p.reject(ReasonSchemaMismatch, "", "top level is "+jsonType(doc)+", want object")
	}
	for _, name := range []string{"schema_version", "prompt_version", "summary"} {
		p.trim(top, name, -1, "")
	}
	newerMinor, rerr := p.checkVersions(top)
	if rerr != nil {
		return nil, false, rerr
	}
	if newerMinor {
		for _, k := range slices.Sorted(maps.Keys(top)) {
			if !slices.Contains(factsOnce().topRequired, k) && !slices.Contains(factsOnce().topOptional, k) {
				delete(top, k)
				p.add(Diagnostic{Kind: KindFieldDropped, Reason: ReasonUnknownField, Index: -1, Field: clip(k, 64)})
			}
		}
	}
	shallow := maps.Clone(top)
	if _, isArr := top["findings"].([]any); isArr {
		shallow["findings"] = []any{}
	}
	if vs := violations(topSchema().Validate(shallow)); len(vs) > 0 {
		v := vs[0]
		return nil, false, p.reject(v.reason, v.field, v.detail)
	}
	return top, newerMinor, nil
}

// findings validates each finding on its own, then reconciles its file
// with the changed files (RC-5).
func (p *parser) findings(items []any, changed []string, newerMinor bool) []domain.Finding {
	type candidate struct {
		index int
		f     domain.Finding
	}
	var valid []candidate
	for i, item := range items {
		if f, ok := p.finding(i, item, newerMinor); ok {
			valid = append(valid, candidate{i, f})
		}
	}
	set := newChangedSet(changed)
	kept := make([]domain.Finding, 0, len(valid))
	for _, c := range valid {
		path, ok := set.match(c.f.File)
		if !ok {
			p.drop(c.index, c.f.ID, ReasonFileNotInChanged, "file", c.f.File, c.f.Line, "")
			continue
		}
		if path != c.f.File {
			p.coerced(c.index, c.f.ID, "file", ReasonPathMatched, jsonLiteral(c.f.File), jsonLiteral(path))
			c.f.File = path
		}
		kept = append(kept, c.f)
	}
	if dropped := len(items) - len(kept); dropped > 0 && len(kept) == 0 {
		p.add(Diagnostic{Kind: KindWarning, Reason: ReasonAllFindingsDropped, Index: -1,
			Detail: fmt.Sprintf("%d of %d findings dropped", dropped, len(items))})
	}
	return kept
}

// checkVersions runs the compatibility rules on well-formed version
// literals; the schema check reports malformed or missing ones.
func (p *parser) checkVersions(top map[string]any) (newerMinor bool, err error) {
	if sv, ok := top["schema_version"].(string); ok && schemaVersionRE.MatchString(sv) {
		n, verr := checkSchemaVersion(sv)
		if verr != nil {
			return false, p.reject(ReasonIncompatibleVersion, "schema_version", verr.Error())
		}
		newerMinor = n
	}
	if pv, ok := top["prompt_version"].(string); ok && promptVersionRE.MatchString(pv) {
		if verr := checkPromptVersion(pv, p.opts.PromptVersion, p.opts.AllowPromptPatchDrift); verr != nil {
			return false, p.reject(ReasonIncompatibleVersion, "prompt_version", verr.Error())
		}
	}
	return newerMinor, nil
}

// finding coerces and validates one finding; false (after saying why) drops it.
func (p *parser) finding(i int, item any, newerMinor bool) (domain.Finding, bool) {
	obj, ok := item.(map[string]any)
	if !ok {
		p.drop(i, "", ReasonSchemaMismatch, "", "", 0, "finding is "+jsonType(item)+", want object")
		return domain.Finding{}, false
	}
	id, _ := obj["id"].(string)
	id = clip(strings.TrimSpace(id), 128)

	for _, name := range fieldOrder {
		if factsOnce().findingFields[name] {
			p.trim(obj, name, i, id)
		}
	}
	if file, ok := obj["file"].(string); ok && strings.Contains(file, `\`) {
		norm := strings.ReplaceAll(file, `\`, "/")
		obj["file"] = norm
		p.coerced(i, id, "file", ReasonPathSeparator, jsonLiteral(file), jsonLiteral(norm))
	}
	for _, name := range []string{"line", "end_line"} {
		if !p.coerceLine(obj, name, i, id) {
			return domain.Finding{}, false
		}
	}
	if newerMinor {
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if !factsOnce().findingFields[k] {
				delete(obj, k)
				p.add(Diagnostic{Kind: KindFieldDropped, Reason: ReasonUnknownField, Index: i, FindingID: id, Field: clip(k, 64)})
			}
		}
	}

	if vs := violations(findingSchema().Validate(obj)); len(vs) > 0 {
		v := vs[0]
		p.drop(i, id, v.reason, v.field, str(obj, "file"), locLine(obj), v.detail)
		return domain.Finding{}, false
	}

	f := domain.Finding{
		ID:         obj["id"].(string),
		Severity:   obj["severity"].(string),
		Category:   obj["category"].(string),
		Title:      obj["title"].(string),
		File:       obj["file"].(string),
		Message:    obj["message"].(string),
		Suggestion: str(obj, "suggestion"),
		Confidence: str(obj, "confidence"),
		RuleID:     str(obj, "rule_id"),
	}
	line, ok := toLine(obj["line"])
	if !ok {
		p.drop(i, id, ReasonInvalidLineRange, "line", f.File, 0, fmt.Sprintf("line above %d", maxLine))
		return domain.Finding{}, false
	}
	f.Line = line
	if v, present := obj["end_line"]; present {
		end, ok := toLine(v)
		if !ok {
			p.drop(i, id, ReasonInvalidLineRange, "end_line", f.File, f.Line, fmt.Sprintf("end_line above %d", maxLine))
			return domain.Finding{}, false
		}
		if end < line {
			p.drop(i, id, ReasonInvalidLineRange, "end_line", f.File, f.Line, fmt.Sprintf("end_line %d < line %d", end, line))
			return domain.Finding{}, false
		}
		f.EndLine = end
	}
	return f, true
}

// coerceLine turns an integral numeric string ("12", "12.0") or number
// (12.0, 1.2e1) into a canonical integer; anything else is the schema's,
// except a number beyond float64, dropped here (false) so the validator never
// does arbitrary-precision work on it.
func (p *parser) coerceLine(obj map[string]any, name string, i int, id string) bool {
	switch v := obj[name].(type) {
	case string: // trimmed already (trim)
		if !integralRE.MatchString(v) {
			return true
		}
		n, err := strconv.ParseInt(strings.SplitN(strings.TrimPrefix(v, "+"), ".", 2)[0], 10, 64)
		if err != nil {
			return true // out of int64: stays a string, the schema rejects its type
		}
		obj[name] = json.Number(strconv.FormatInt(n, 10))
		p.coerced(i, id, name, ReasonIntegralString, jsonLiteral(v), strconv.FormatInt(n, 10))
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			p.drop(i, id, ReasonInvalidLineRange, name, str(obj, "file"), 0, "number out of range")
			return false
		}
		if f != math.Trunc(f) || math.Abs(f) > maxLine {
			return true // the schema or toLine reports it
		}
		canon := strconv.FormatInt(int64(f), 10)
		if canon != string(v) {
			obj[name] = json.Number(canon)
			p.coerced(i, id, name, ReasonIntegralNumber, string(v), canon)
		}
	}
	return true
}

// trim removes surrounding whitespace from obj[name] if it is a string.
func (p *parser) trim(obj map[string]any, name string, i int, id string) {
	s, ok := obj[name].(string)
	if !ok {
		return
	}
	t := strings.TrimSpace(s)
	if t == s {
		return
	}
	obj[name] = t
	old, nw := jsonLiteral(s), jsonLiteral(t)
	if sensitiveFields[name] {
		old, nw = redacted(s), redacted(t)
	}
	p.coerced(i, id, name, ReasonTrimmed, old, nw)
}

// sensitiveFields hold the model's free text, which may quote code: never in diagnostics.
var sensitiveFields = map[string]bool{"title": true, "message": true, "suggestion": true, "summary": true}

func redacted(s string) string {
	return fmt.Sprintf("[redacted len=%d sha256:%s]", len(s), digest(s))
}

func (p *parser) add(d Diagnostic) { p.diags = append(p.diags, d) }

func (p *parser) coerced(i int, id, field, reason, old, nw string) {
	p.add(Diagnostic{Kind: KindCoercion, Reason: reason, Index: i, FindingID: id, Field: field, Old: old, New: nw})
}

func (p *parser) drop(i int, id, reason, field, file string, line int, detail string) {
	p.add(Diagnostic{Kind: KindFindingDropped, Reason: reason, Index: i, FindingID: id, Field: field,
		File: clip(file, 512), Line: line, Detail: detail})
}

func (p *parser) reject(reason, field, detail string) error {
	p.add(Diagnostic{Kind: KindRejected, Reason: reason, Index: -1, Field: field, Detail: detail})
	return failure.Wrap(failure.SchemaInvalid, &RejectError{Reason: reason, Field: field, Detail: detail})
}

// violation is one schema failure mapped onto a reason code.
type violation struct{ reason, field, detail string }

// reasonRank orders violations so the most basic problem is reported:
// missing field, wrong type, bad enum value, bad range.
var reasonRank = map[string]int{
	ReasonMissingRequiredField: 0,
	ReasonSchemaMismatch:       1,
	ReasonInvalidEnumValue:     2,
	ReasonInvalidLineRange:     3,
}

// violations flattens a validation error into its leaf failures, by
// reasonRank then field order; details never name values.
func violations(err error) []violation {
	if err == nil {
		return nil
	}
	ve, ok := errors.AsType[*jsonschema.ValidationError](err)
	if !ok {
		return []violation{{ReasonSchemaMismatch, "", "validation failed"}}
	}
	var out []violation
	for _, e := range leafErrors(ve) {
		field := ""
		if n := len(e.InstanceLocation); n > 0 {
			field = clip(e.InstanceLocation[0], 64)
		}
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				out = append(out, violation{ReasonMissingRequiredField, m, "required field missing"})
			}
		case *kind.AdditionalProperties:
			for _, prop := range k.Properties {
				out = append(out, violation{ReasonSchemaMismatch, clip(prop, 64), "undocumented key"})
			}
		case *kind.Enum:
			out = append(out, violation{ReasonInvalidEnumValue, field, "value not in enum"})
		case *kind.MinLength:
			out = append(out, violation{ReasonMissingRequiredField, field, "empty string"})
		case *kind.Minimum:
			out = append(out, violation{ReasonInvalidLineRange, field, "below minimum 1"})
		case *kind.Type:
			out = append(out, violation{ReasonSchemaMismatch, field,
				fmt.Sprintf("got %s, want %s", k.Got, strings.Join(k.Want, " or "))})
		default:
			out = append(out, violation{ReasonSchemaMismatch, field,
				"failed " + strings.Join(e.ErrorKind.KeywordPath(), "/")})
		}
	}
	slices.SortStableFunc(out, func(a, b violation) int {
		return cmp.Or(reasonRank[a.reason]-reasonRank[b.reason], fieldRank(a.field)-fieldRank(b.field), strings.Compare(a.field, b.field))
	})
	return out
}

// leafErrors are the failures at the leaves of a validation error's tree, in order.
func leafErrors(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leafErrors(c)...)
	}
	return out
}

// changedSet answers whether a finding's file is one of the changed files.
type changedSet struct {
	paths []string
	exact map[string]bool
	norm  map[string]string // repoKey -> changed path; "" marks an ambiguous key
}

func newChangedSet(paths []string) changedSet {
	c := changedSet{paths: paths, exact: make(map[string]bool, len(paths)), norm: make(map[string]string, len(paths))}
	for _, p := range paths {
		c.exact[p] = true
		k := repoKey(p)
		if k == "" {
			continue
		}
		if prev, seen := c.norm[k]; seen && prev != p {
			c.norm[k] = ""
			continue
		}
		c.norm[k] = p
	}
	return c
}

// match returns the changed path file names, or false.
func (c changedSet) match(file string) (string, bool) {
	if c.exact[file] {
		return file, true
	}
	k := repoKey(file)
	if k == "" {
		return "", false
	}
	if p, seen := c.norm[k]; seen {
		return p, p != "" // "" marks a normalized form two changed paths share
	}
	// A whole-segment suffix of exactly one changed path.
	hit := ""
	for _, p := range c.paths {
		if strings.HasSuffix(p, "/"+k) {
			if hit != "" && hit != p {
				return "", false
			}
			hit = p
		}
	}
	return hit, hit != ""
}

// repoKey is a path with "/" separators and no leading "./" or slashes;
// never ".." or case: Perforce paths are compared as written.
func repoKey(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	for strings.HasPrefix(p, "./") || strings.HasPrefix(p, "/") {
		p = strings.TrimPrefix(strings.TrimPrefix(p, "./"), "/")
	}
	return p
}

func toLine(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || f < 1 || f > maxLine {
		return 0, false
	}
	return int(f), true
}

func str(obj map[string]any, name string) string {
	s, _ := obj[name].(string)
	return s
}

func locLine(obj map[string]any) int {
	n, _ := toLine(obj["line"])
	return n
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// jsonLiteral renders a non-sensitive value as JSON text, clipped.
func jsonLiteral(s string) string {
	b, _ := json.Marshal(clip(s, 256))
	return string(b)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return domain.Clip(s, n) + "…"
}

// jsonErrorDetail describes a decode failure by position only: the
// decoder's message quotes model output.
func jsonErrorDetail(err error) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte offset %d", se.Offset)
	case errors.Is(err, io.EOF):
		return "empty response"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON"
	}
	return "data after the top-level value"
}

// version is a parsed x.y or x.y.z literal. A missing patch reads as 0, so
// prompt_version "1.0" and "1.0.0" name the same contract.
type version struct{ major, minor, patch uint64 }

func parseVersion(s string, maxParts int) (version, bool) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > maxParts {
		return version{}, false
	}
	var n [3]uint64
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 32) // digits only: no sign, no "_"
		if err != nil {
			return version{}, false
		}
		n[i] = v
	}
	return version{n[0], n[1], n[2]}, true
}

// checkSchemaVersion applies rule RC-4: exact match, or a newer
// minor in the same major (minor updates are additive). It reports whether
// the response is a newer minor, whose unknown fields the parser must ignore.
func checkSchemaVersion(got string) (newerMinor bool, err error) {
	want, _ := parseVersion(SchemaVersion, 2)
	v, ok := parseVersion(got, 2)
	if !ok {
		return false, fmt.Errorf("schema_version %q is not major.minor", got)
	}
	if v.major != want.major || v.minor < want.minor {
		return false, fmt.Errorf("schema_version %s is not compatible with %s (same major, minor >= %d)",
			got, SchemaVersion, want.minor)
	}
	return v.minor > want.minor, nil
}

// checkPromptVersion accepts the exact prompt version the request was built
// with, or, when allowed, any patch of the same major.minor.
func checkPromptVersion(got, expected string, allowPatchDrift bool) error {
	want, ok := parseVersion(expected, 3)
	if !ok {
		return fmt.Errorf("configured prompt version %q is not x.y[.z]", expected)
	}
	v, ok := parseVersion(got, 3)
	if !ok {
		return fmt.Errorf("prompt_version %q is not x.y[.z]", got)
	}
	switch {
	case v == want:
		return nil
	case allowPatchDrift && v.major == want.major && v.minor == want.minor:
		return nil
	case allowPatchDrift:
		return fmt.Errorf("prompt_version %s is outside %d.%d.x", got, want.major, want.minor)
	}
	return fmt.Errorf("prompt_version %s does not match %s", got, expected)
}
