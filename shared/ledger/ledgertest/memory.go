// Package ledgertest is the in-memory rerun ledger for unit tests: the same
// Put and Previous as ledger.Store (first job of a version keeps it, the
// same job replaces its own entry), with faults injected per call.
package ledgertest

import (
	"context"
	"slices"
	"sync"

	"github.com/criticizer/criticizer/shared/ledger"
)

// Memory is an in-memory ledger. The zero value is ready to use.
type Memory struct {
	mu      sync.Mutex
	entries map[ledger.Thread]map[int]ledger.Version
	faults  map[string][]error
	calls   map[string]int
}

// Inject queues errors for the next calls of op ("put", "previous"), one
// per call; a nil error lets that call through.
func (m *Memory) Inject(op string, errs ...error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.faults == nil {
		m.faults = map[string][]error{}
	}
	m.faults[op] = append(m.faults[op], errs...)
}

// Calls reports how often op was called.
func (m *Memory) Calls(op string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[op]
}

func (m *Memory) call(op string) error {
	if m.calls == nil {
		m.calls = map[string]int{}
	}
	m.calls[op]++
	if q := m.faults[op]; len(q) > 0 {
		m.faults[op] = q[1:]
		return q[0]
	}
	return nil
}

// Put records v as ledger.Store does.
func (m *Memory) Put(_ context.Context, v ledger.Version) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.call("put"); err != nil {
		return err
	}
	if m.entries == nil {
		m.entries = map[ledger.Thread]map[int]ledger.Version{}
	}
	vs := m.entries[v.Thread]
	if vs == nil {
		vs = map[int]ledger.Version{}
		m.entries[v.Thread] = vs
	}
	if old, ok := vs[v.Version]; ok && old.JobID != v.JobID {
		return &ledger.VersionTakenError{JobID: old.JobID}
	}
	vs[v.Version] = clone(v)
	return nil
}

// Previous returns the latest entry of t below version, as ledger.Store does.
func (m *Memory) Previous(_ context.Context, t ledger.Thread, version int) (*ledger.Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.call("previous"); err != nil {
		return nil, err
	}
	best := -1
	for v := range m.entries[t] {
		if v < version && v > best {
			best = v
		}
	}
	if best < 0 {
		return nil, nil
	}
	v := clone(m.entries[t][best])
	return &v, nil
}

// Get returns the entry of t at version, if any (for assertions).
func (m *Memory) Get(t ledger.Thread, version int) (ledger.Version, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.entries[t][version]
	return clone(v), ok
}

func clone(v ledger.Version) ledger.Version {
	v.Files = slices.Clone(v.Files)
	v.Findings = slices.Clone(v.Findings)
	return v
}
