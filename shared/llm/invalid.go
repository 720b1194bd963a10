package llm

import (
	"cmp"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/criticizer/criticizer/shared/domain"
)

// invalidMarkers are the words servers use for an invalid request: pydantic
// v2 validation errors (llama-cpp-python and vLLM are FastAPI servers),
// OpenAI's invalid_request_error and unsupported-parameter wording, and any
// complaint naming the response format.
var invalidMarkers = []string{"input should be", "validation error", "literal_error", "extra_forbidden",
	"field required", "missing required parameter", "unrecognized request argument", "unsupported parameter",
	"unknown parameter", "invalid_request_error", "response_format", "json_schema", "not supported"}

// InvalidRequest reports whether an error answer says the request was
// invalid, whatever its status: llama-cpp-python 0.3.36 answers an
// unsupported response_format with HTTP 500 (../shared/reference/
// llm-providers.md). Callers check context length, rate limits, filters and
// auth first.
func InvalidRequest(status int, code, typ, msg string, body []byte) bool {
	if status < 400 {
		return false
	}
	if status == 422 || code == "invalid_request_error" || typ == "invalid_request_error" {
		return true
	}
	text := cmp.Or(strings.ToLower(msg), strings.ToLower(string(body[:min(len(body), 4096)])))
	return slices.ContainsFunc(invalidMarkers, func(m string) bool { return strings.Contains(text, m) })
}

// pydanticError matches one entry of a pydantic error list in Python's repr
// (llama-cpp-python's error.message):
// {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "Input should be …", 'input': …}.
var pydanticError = regexp.MustCompile(`'loc': \(([^)]*)\), 'msg': (?:'([^']*)'|"([^"]*)")`)

// invalidReason is what the server said was wrong without the values it
// quotes (pydantic's 'input' may be prompt text): "loc: msg" per error,
// else the message's first line. Still upstream text: everywhere it leaves
// it passes shared/sanitize. namesFormat: it names the response format.
func invalidReason(msg string, body []byte) (reason string, namesFormat bool) {
	var parts []string
	for _, m := range pydanticError.FindAllStringSubmatch(msg, 8) {
		loc := strings.NewReplacer("'", "", ", ", ".", ",", "").Replace(m[1])
		parts = append(parts, loc+": "+m[2]+m[3])
	}
	if len(parts) == 0 {
		// FastAPI's own 422: {"detail":[{"loc":[…],"msg":…,"type":…}]}.
		var fa struct {
			Detail []struct {
				Loc []any  `json:"loc"`
				Msg string `json:"msg"`
			} `json:"detail"`
		}
		if json.Unmarshal(body, &fa) == nil {
			for _, d := range fa.Detail[:min(len(fa.Detail), 8)] {
				var loc []string
				for _, l := range d.Loc {
					b, _ := json.Marshal(l)
					loc = append(loc, strings.Trim(string(b), `"`))
				}
				parts = append(parts, strings.Join(loc, ".")+": "+d.Msg)
			}
		}
	}
	if len(parts) == 0 {
		first, _, _ := strings.Cut(msg, "\n")
		parts = append(parts, first)
	}
	reason = domain.Clip(domain.OneLine(strings.Join(parts, "; ")), 300)
	lower := strings.ToLower(reason + " " + msg)
	namesFormat = strings.Contains(lower, "response_format") || strings.Contains(lower, "json_schema") || strings.Contains(lower, "json_object")
	return reason, namesFormat
}
