// Package llmtest holds test doubles for the llm package's seams, shared by
// the tests of llm and of the stages that drive it.
package llmtest

import (
	"sync"
	"time"
)

// VirtualClock is an llm.Clock that moves time forward by whatever a waiter
// asks: rate-limit waits take no real time, and the clock says how long
// they would have taken.
type VirtualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewVirtualClock starts at the wall clock's now.
func NewVirtualClock() *VirtualClock { return &VirtualClock{now: time.Now()} }

// Now is the virtual time.
func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// At moves the virtual time forward to t, never back, and fires at once.
// Two waiters for the same t move it once: the clock then says how long the
// wait would have taken, not the sum of everyone's waits.
func (c *VirtualClock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	if t.After(c.now) {
		c.now = t
	}
	t = c.now
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- t
	return ch
}
