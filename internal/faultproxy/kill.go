package faultproxy

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// KillBootstrapPeer SIGKILLs the local process that owns the client end of
// the TCP connection remote ("127.0.0.1:<port>" as the server saw it),
// provided it is a Lambda function process (its program is named
// "bootstrap", as provided.al2023 functions are). It returns the pid.
// Linux only: it reads /proc.
func KillBootstrapPeer(remote string) (string, error) {
	pid, err := PeerPID(remote)
	if err != nil {
		return "", err
	}
	if name := ProgramName(pid); name != "bootstrap" {
		return "", fmt.Errorf("peer pid %d runs %q, not a function bootstrap", pid, name)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return "", fmt.Errorf("kill %d: %w", pid, err)
	}
	return strconv.Itoa(pid), nil
}

// ProgramName is the base name of pid's program (argv[0]), "" if unknown.
func ProgramName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return ""
	}
	argv0, _, _ := strings.Cut(string(b), "\x00")
	return filepath.Base(argv0)
}

// PeerPID finds the pid owning the loopback socket whose local port is
// remote's port.
func PeerPID(remote string) (int, error) {
	_, portStr, err := net.SplitHostPort(remote)
	if err != nil {
		return 0, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return 0, err
	}
	inode := ""
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if inode, err = socketInode(table, port); err != nil {
			return 0, err
		}
		if inode != "" {
			break
		}
	}
	if inode == "" {
		return 0, fmt.Errorf("no socket with local port %d", port)
	}
	want := "socket:[" + inode + "]"
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue // gone, or not ours
		}
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); err == nil && l == want {
				return pid, nil
			}
		}
	}
	return 0, errors.New("no process holds socket " + want)
}

// socketInode scans a /proc/net/tcp table for a socket whose local port is
// port and returns its inode.
func socketInode(table string, port int) (string, error) {
	f, err := os.Open(table)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	hexPort := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		if strings.HasSuffix(fields[1], hexPort) && fields[9] != "0" {
			return fields[9], nil
		}
	}
	return "", sc.Err()
}

// KillBootstrapsConnectedTo SIGKILLs every function process (program
// "bootstrap") holding an established TCP connection to 127.0.0.1:port — a
// worker in the middle of talking to a stand-in (an SMTP relay, the LLM) —
// and returns their pids.
func KillBootstrapsConnectedTo(port int) ([]int, error) {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Scan()
		hexPort := fmt.Sprintf(":%04X", port)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// rem_address is the peer; state 01 is ESTABLISHED.
			if len(fields) >= 10 && strings.HasSuffix(fields[2], hexPort) && fields[3] == "01" && fields[9] != "0" {
				inodes["socket:["+fields[9]+"]"] = true
			}
		}
		f.Close()
	}
	if len(inodes) == 0 {
		return nil, fmt.Errorf("no connection to port %d", port)
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var killed []int
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || ProgramName(pid) != "bootstrap" {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); err == nil && inodes[l] {
				if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
					killed = append(killed, pid)
				}
				break
			}
		}
	}
	if len(killed) == 0 {
		return nil, fmt.Errorf("no function process holds a connection to port %d", port)
	}
	return killed, nil
}
