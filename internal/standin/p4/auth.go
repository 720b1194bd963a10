package main

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Tickets the stand-in issued live in <depot>/.state/tickets/<ticket>, each
// holding its expiry (Unix milliseconds), so that successive processes
// agree and a test can expire one by rewriting or deleting it.

const defaultTicketTTL = 12 * time.Hour

// authenticated checks the session's credentials when server.json sets a
// password, answering like the real server when they fail.
func (s *session) authenticated() bool {
	pw := s.d.server.Password
	if pw == "" {
		return true
	}
	if s.passwd == pw || (s.passwd != "" && s.d.validTicket(s.passwd)) {
		return true
	}
	if s.passwd == "" {
		if t := s.ticketFromFile(); t != "" && s.d.validTicket(t) {
			return true
		}
	}
	s.msg(sevError, evContext, "Perforce password (P4PASSWD) invalid or unset.")
	return false
}

// login reads the password from stdin and stores a new ticket in the
// tickets file ("p4 login"); "login -s" reports whether the session holds
// a valid ticket.
func (s *session) login(args []string) {
	opts, _ := flags(args)
	status := len(opts) == 1 && opts[0] == "-s"
	if status {
		if s.d.server.Password == "" || s.d.validTicket(s.ticketFromFile()) {
			s.emit(map[string]any{"User": s.user, "TicketExpiration": "43200"})
			return
		}
		s.msg(sevError, evContext, "Perforce password (P4PASSWD) invalid or unset.")
		return
	}
	if len(opts) > 0 {
		s.usage("Usage: login [ -a -p -r <remotespec> -s ] [ user ]", "Invalid option: "+opts[0]+".")
		return
	}
	// The real client prompts even when the password comes from a pipe.
	io.WriteString(s.stdout, "Enter password: \n")
	line, _ := bufio.NewReader(s.stdin).ReadString('\n')
	if strings.TrimRight(line, "\r\n") != s.d.server.Password || s.d.server.Password == "" {
		s.msg(sevError, evContext, "Password invalid.")
		return
	}
	ticket, err := s.d.issueTicket()
	if err == nil {
		err = s.storeTicket(ticket)
	}
	if err != nil {
		s.msg(4, 0, "Perforce server error:\n\tstandin: tickets: %v", err)
		return
	}
	ttl := s.d.ticketTTL()
	s.emit(map[string]any{"User": s.user, "TicketExpiration": strconv.FormatInt(int64(ttl/time.Second), 10)})
}

func (d *depot) ticketTTL() time.Duration {
	if d.server.TicketTTLMS > 0 {
		return time.Duration(d.server.TicketTTLMS) * time.Millisecond
	}
	return defaultTicketTTL
}

func (d *depot) ticketDir() string { return filepath.Join(d.root, ".state", "tickets") }

func (d *depot) issueTicket() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	ticket := strings.ToUpper(hex.EncodeToString(b[:]))
	if err := os.MkdirAll(d.ticketDir(), 0o755); err != nil {
		return "", err
	}
	expiry := time.Now().Add(d.ticketTTL()).UnixMilli()
	return ticket, os.WriteFile(filepath.Join(d.ticketDir(), ticket), []byte(strconv.FormatInt(expiry, 10)), 0o644)
}

func (d *depot) validTicket(ticket string) bool {
	if len(ticket) != 32 || strings.Trim(ticket, "0123456789ABCDEF") != "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(d.ticketDir(), ticket))
	if err != nil {
		return false
	}
	expiry, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return err == nil && time.Now().UnixMilli() < expiry
}

// ticketsFile is P4TICKETS, or ~/.p4tickets as with the real client.
func (s *session) ticketsFile() string {
	if s.tickets != "" {
		return s.tickets
	}
	if s.home != "" {
		return filepath.Join(s.home, ".p4tickets")
	}
	return ""
}

// ticketFromFile finds "<port>=<user>:<ticket>" in the tickets file.
func (s *session) ticketFromFile() string {
	name := s.ticketsFile()
	if name == "" {
		return ""
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		key, val, ok := strings.Cut(strings.TrimSpace(line), "=")
		user, ticket, ok2 := strings.Cut(val, ":")
		if ok && ok2 && key == s.port && user == s.user {
			return ticket
		}
	}
	return ""
}

func (s *session) storeTicket(ticket string) error {
	name := s.ticketsFile()
	if name == "" {
		return errors.New("no tickets file (set P4TICKETS or HOME)")
	}
	var keep []string
	b, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	prefix := s.port + "=" + s.user + ":"
	for _, line := range strings.Split(string(b), "\n") {
		if line != "" && !strings.HasPrefix(line, prefix) {
			keep = append(keep, line)
		}
	}
	keep = append(keep, prefix+ticket)
	return os.WriteFile(name, []byte(strings.Join(keep, "\n")+"\n"), 0o600)
}
