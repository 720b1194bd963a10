package smtp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// messageJSON is a Message on the wire: Raw as text, for scripts.
type messageJSON struct {
	Message
	Raw string `json:"raw"`
}

// faultJSON is a Fault on the wire, delay a Go duration ("2s") for curl.
type faultJSON struct {
	Fault
	Delay string `json:"delay,omitempty"` // in place of Fault's
}

// Handler is the control API:
//
//	GET  /messages[?message_id=<id>&to=<addr>]  accepted messages, JSON array
//	POST /reset                                 forget messages and faults
//	GET  /faults                                pending faults
//	POST /faults                                queue a fault (object or array)
//	GET  /healthz                               liveness
//
// Filtering by message_id is the provider lookup that the notify stage's
// reconciliation path would make against a provider that has one.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /messages", s.handleMessages)
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, _ *http.Request) {
		s.Reset()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /faults", func(w http.ResponseWriter, _ *http.Request) {
		out := []faultJSON{}
		for _, f := range s.Faults() {
			fj := faultJSON{Fault: f}
			if f.Delay > 0 {
				fj.Delay = f.Delay.String()
			}
			out = append(out, fj)
		}
		writeJSON(w, out)
	})
	mux.HandleFunc("POST /faults", s.handleQueueFaults)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]string{"status": "ok", "smtp": s.Addr()})
	})
	return mux
}

func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSpace(r.URL.Query().Get("message_id"))
	to := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("to")))
	out := []messageJSON{}
	for _, m := range s.Messages() {
		if id != "" && m.MessageID != id && m.MessageID != "<"+strings.Trim(id, "<>")+">" {
			continue
		}
		if to != "" && !slices.ContainsFunc(m.To, func(x string) bool { return strings.EqualFold(x, to) }) {
			continue
		}
		out = append(out, messageJSON{Message: m, Raw: string(m.Raw)})
	}
	writeJSON(w, out)
}

func (s *Server) handleQueueFaults(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var list []faultJSON
	if t := strings.TrimSpace(string(body)); strings.HasPrefix(t, "[") {
		err = json.Unmarshal(body, &list)
	} else {
		var one faultJSON
		err = json.Unmarshal(body, &one)
		list = []faultJSON{one}
	}
	if err != nil {
		http.Error(w, "bad fault JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	faults := make([]Fault, 0, len(list))
	for _, fj := range list {
		f := fj.Fault
		if fj.Delay != "" {
			if f.Delay, err = time.ParseDuration(fj.Delay); err != nil {
				http.Error(w, fmt.Sprintf("bad delay %q: %v", fj.Delay, err), http.StatusBadRequest)
				return
			}
		}
		if err := validateFault(f); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		faults = append(faults, f)
	}
	for _, f := range faults { // all valid: a bad array queues nothing
		_ = s.QueueFault(f) // validated above
	}
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
