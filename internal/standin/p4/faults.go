package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// takeFault returns, counting it served, the first fault for command not yet
// served its "times". Counts live in <depot>/.state/ for the processes that
// follow, updated under an flock on .state/lock.
func (d *depot) takeFault(owner, command string, faults []fault) (*fault, error) {
	var candidates []int
	for i, f := range faults {
		if f.Command == command || f.Command == "*" {
			candidates = append(candidates, i)
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	dir := filepath.Join(d.root, ".state")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	for _, i := range candidates {
		f := faults[i]
		name := filepath.Join(dir, fmt.Sprintf("%s.%s.%d.served", owner, command, i))
		served, err := readCount(name)
		if err != nil {
			return nil, err
		}
		if f.Times > 0 && served >= f.Times {
			continue
		}
		if err := os.WriteFile(name, []byte(strconv.Itoa(served+1)+"\n"), 0o644); err != nil {
			return nil, err
		}
		return &f, nil
	}
	return nil, nil
}

func readCount(name string) (int, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
