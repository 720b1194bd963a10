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

// Int returns field key parsed as a decimal integer.
func (r Record) Int(key string) (int64, error) {
	v, ok := r[key]
	if !ok {
		return 0, fmt.Errorf("missing field %q", key)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("field %q: %w", key, err)
	}
	return n, nil
}

// isData reports whether r only carries content ("data"), as the records
// after a print or diff2 header do.
func (r Record) isData() bool {
	_, ok := r["data"]
	return ok && len(r) == 1
}

// message is a failure the client reported inside its output.
type message struct {
	text    string
	generic int // p4's EV_* generic code, 0 when not given
}

// parseRecords decodes JSON-lines output. It separates the records the
// caller wants from error and warning records, whose text it returns.
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
		rec := make(Record, len(raw))
		for k, v := range raw {
			rec[k] = stringify(v)
		}
		switch code := rec["code"]; code {
		case "error", "warning":
			generic, _ := strconv.Atoi(rec["generic"])
			msgs = append(msgs, message{text: strings.TrimSpace(rec["data"]), generic: generic})
			continue
		case "stat", "text", "binary", "info":
			delete(rec, "code")
		}
		recs = append(recs, rec)
	}
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

// splitContent returns the header record of print/diff2 output (the first
// record that is not pure data) and the concatenated data records.
func splitContent(recs []Record) (header Record, data string) {
	var b strings.Builder
	for _, r := range recs {
		if r.isData() {
			b.WriteString(r["data"])
			continue
		}
		if header == nil {
			header = r
		}
	}
	return header, b.String()
}
