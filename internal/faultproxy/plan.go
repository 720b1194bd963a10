package faultproxy

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"
)

// Rule selects requests and the faults they may get.
type Rule struct {
	// Op matches requests whose Op has this prefix ("dynamodb.UpdateItem",
	// "sqs.", "" for all).
	Op string
	// Contains, when set, further requires the body to contain it (e.g. the
	// "stage_completed" history event only a stage's Complete writes).
	Contains string
	// Nth > 0 fires on exactly the job's n-th request matching the rule;
	// otherwise each matching request fires with probability Rate.
	Nth  int
	Rate float64
	// Kinds the fault is chosen from (by the seed).
	Kinds []Kind
	// MaxDelay bounds a Delay fault (default 1 s): the seed picks in [MaxDelay/4, MaxDelay].
	MaxDelay time.Duration
}

// Plan is a seeded Decider: the same seed, job ordinal, op and ordinal
// always give the same decision.
type Plan struct {
	Seed int64
	// Rules apply to every registered job; Jobs[i], tried first, only to job i.
	Rules []Rule
	Jobs  map[int][]Rule
	// MaxPerJob caps faults per job (0: none), so chance alone cannot
	// exhaust a job's retry budget.
	MaxPerJob int

	mu       sync.Mutex
	injected map[int]int
	matched  map[string]int // "<job>|<rule>" → matching requests seen
}

// Decide implements Decider.
func (p *Plan) Decide(job int, op Op, n int, body []byte) (Fault, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.injected == nil {
		p.injected, p.matched = map[int]int{}, map[string]int{}
	}
	rules := append(append([]Rule(nil), p.Jobs[job]...), p.Rules...)
	for i, r := range rules {
		if !strings.HasPrefix(string(op), r.Op) || (r.Contains != "" && !bytes.Contains(body, []byte(r.Contains))) || len(r.Kinds) == 0 {
			continue
		}
		key := fmt.Sprintf("%d|%d", job, i)
		p.matched[key]++
		if i >= len(p.Jobs[job]) && p.MaxPerJob > 0 && p.injected[job] >= p.MaxPerJob {
			continue // the cap limits chance, not a job's own rules
		}
		h := p.hash(job, op, n, i)
		if r.Nth > 0 {
			if p.matched[key] != r.Nth {
				continue
			}
		} else if float64(h%1_000_000)/1_000_000 >= r.Rate {
			continue
		}
		k := r.Kinds[(h/1_000_000)%uint64(len(r.Kinds))]
		f := Fault{Kind: k}
		if k == Delay {
			maxD := r.MaxDelay
			if maxD <= 0 {
				maxD = time.Second
			}
			f.Delay = maxD/4 + time.Duration((h>>20)%uint64(maxD-maxD/4+1))
		}
		p.injected[job]++
		return f, true
	}
	return Fault{}, false
}

func (p *Plan) hash(job int, op Op, n, rule int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%d|%s|%d|%d", p.Seed, job, op, n, rule)
	return h.Sum64()
}
