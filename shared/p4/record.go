package p4

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Record is one tagged object of -ztag -Mj output: field name to value.
type Record map[string]string

// first is the first of recs holding field key, nil when none does.
func first(recs []Record, key string) Record {
	for _, r := range recs {
		if _, ok := r[key]; ok {
			return r
		}
	}
	return nil
}

// isData reports whether r only carries content ("data"), as the records
// after a print or diff2 header do.
func (r Record) isData() bool {
	_, ok := r["data"]
	return ok && len(r) == 1
}

// p4's message severities (E_*), as -Mj prints them in "severity": 2 a
// warning, 3 and 4 errors.
const (
	sevWarn    = 2
	sevUnknown = -1 // a -G style record with a code but no severity
)

// message is a server message the client printed among the records:
// {"data": text, "generic": n, "severity": n}.
type message struct {
	text     string
	severity int
	generic  int // p4's EV_* generic code, 0 when not given
}

// parseRecords decodes -ztag -Mj output (shapes: doc.go). Messages are
// returned apart from the data, so a warning with exit status 0 is not read
// as content.
func parseRecords(out []byte) ([]Record, []message, error) {
	var (
		recs []Record
		msgs []message
	)
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	for {
		var raw map[string]any
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return recs, msgs, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("p4 output is not JSON lines: %w", err)
		}
		if raw == nil {
			return nil, nil, errors.New("p4 output holds a null record")
		}
		if m, ok := asMessage(raw); ok {
			if m.severity >= sevWarn || m.severity == sevUnknown {
				msgs = append(msgs, m)
			}
			continue
		}
		if isInfoLine(raw) {
			continue
		}
		rec := make(Record, len(raw))
		for k, v := range raw {
			rec[k] = stringify(v)
		}
		recs = append(recs, rec)
	}
}

// asMessage recognises a server message: "data", a numeric "severity",
// usually "generic", nothing else (a "code" of "error"/"warning", the -G
// spelling, is accepted too).
func asMessage(raw map[string]any) (message, bool) {
	text, ok := raw["data"].(string)
	if !ok {
		return message{}, false
	}
	sev, hasSev := number(raw["severity"])
	gen, hasGen := number(raw["generic"])
	code, _ := raw["code"].(string)
	switch {
	case code == "error" || code == "warning":
		if !hasSev {
			sev = sevUnknown
			if code == "warning" {
				sev = sevWarn
			}
		}
	case code != "":
		return message{}, false
	case !hasSev:
		return message{}, false
	}
	allowed := 2 // data, severity
	if hasGen {
		allowed++
	}
	if code != "" {
		allowed++
	}
	if len(raw) != allowed {
		return message{}, false
	}
	return message{text: strings.TrimSpace(text), severity: sev, generic: gen}, true
}

// isInfoLine recognises {"data": …, "level": n}.
func isInfoLine(raw map[string]any) bool {
	_, isText := raw["data"].(string)
	_, hasLevel := number(raw["level"])
	return isText && hasLevel && len(raw) == 2
}

// number reads an integer sent as a JSON number (or, leniently, as digits).
func number(v any) (int, bool) {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case string:
		s = v
	default:
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func stringify(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	b, _ := json.Marshal(v) // nested values: keep them inspectable as text
	return string(b)
}
