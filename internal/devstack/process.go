package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// group is a child process started in its own process group, so that
// stopping it also ends every process it spawned (the emulator's Lambda
// workers).
type group struct {
	pid  int
	done chan struct{} // closed when the process has exited
}

func startGroup(cmd *exec.Cmd) (*group, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &group{pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(g.done) }()
	return g, nil
}

var errExited = errors.New("exited during startup")

// awaitReady polls ready every interval until it holds; errExited when the
// process ends first, ctx's error when ctx does.
func (g *group) awaitReady(ctx context.Context, interval time.Duration, ready func() bool) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if ready() {
			return nil
		}
		select {
		case <-g.done:
			return errExited
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM to the group, waits up to 10 s, then SIGKILLs it, and
// reaps any straggler left in the group.
func (g *group) stop(name string) error {
	if g == nil {
		return nil
	}
	_ = syscall.Kill(-g.pid, syscall.SIGTERM)
	var err error
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		err = fmt.Errorf("%s pid %d ignored SIGTERM; killed", name, g.pid)
		_ = syscall.Kill(-g.pid, syscall.SIGKILL)
		<-g.done
	}
	_ = syscall.Kill(-g.pid, syscall.SIGKILL)
	return err
}

// startLogged starts cmd as a group, its output in logFile, and waits until
// ready holds; errPortInUse when it exits saying inUse.
func startLogged(ctx context.Context, name string, cmd *exec.Cmd, logFile string, interval time.Duration, inUse string, ready func() bool) (*group, error) {
	logf, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	g, err := startGroup(cmd)
	if err != nil {
		return nil, fmt.Errorf("start the %s: %w", name, err)
	}
	err = g.awaitReady(ctx, interval, ready)
	if err == nil {
		return g, nil
	}
	_ = g.stop(name)
	tail := logTail(logFile, 20)
	switch {
	case errors.Is(err, errExited) && strings.Contains(tail, inUse):
		return nil, errPortInUse
	case errors.Is(err, errExited):
		return nil, fmt.Errorf("%s exited during startup; log %s:\n%s", name, logFile, tail)
	}
	return nil, fmt.Errorf("%s not ready: %w (log %s)", name, err, logFile)
}

var errPortInUse = errors.New("port already in use")

// onFreePort runs start on port or, when port is 0, on a free one: a free
// port can be taken between probing and binding, so that is tried 3 times.
func onFreePort[T any](port int, start func(port int) (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		p, err := port, error(nil)
		if p == 0 {
			if p, err = freePort(); err != nil {
				var zero T
				return zero, err
			}
		}
		v, err := start(p)
		if err == nil || port != 0 || attempt == 2 || !errors.Is(err, errPortInUse) {
			return v, err
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
