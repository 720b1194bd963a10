package main

import (
	"bufio"
	"cmp"
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

// Issued tickets live in <depot>/.state/tickets/<ticket>: "<expiry Unix ms>
// <host>" ("*": all hosts), shared by successive processes; a test expires
// one by rewriting it. The client's address is .state/client_address
// (default 127.0.0.1), rewritten to stand for a Lambda whose address changed.

const defaultTicketTTL = 12 * time.Hour

// ticketState is what the server finds for a presented ticket.
type ticketState int

const (
	ticketUnknown ticketState = iota
	ticketValid
	ticketExpired
	ticketOtherHost
)

// authenticated checks credentials when server.json sets a password: an
// expired ticket gets LoginExpired (msgs/msgserver.cc, E_FAILED /
// EV_ILLEGAL), anything else BadPassword (3 / 36), also a ticket from
// another host (reference: "Tickets from p4 login are host-locked unless -a
// is given"; the text for that case *unverified*).
func (s *session) authenticated() bool {
	pw := s.d.server.Password
	if pw == "" || s.passwd == pw {
		return true
	}
	switch s.d.ticket(cmp.Or(s.passwd, s.ticketFromFile())) {
	case ticketValid:
		return true
	case ticketExpired:
		s.msg(sevError, evIllegal, "Your session has expired, please login again.")
	default:
		s.msg(sevError, evContext, "Perforce password (P4PASSWD) invalid or unset.")
	}
	return false
}

// login reads the password from stdin and stores a new ticket ("-a": for
// all hosts); "login -s" reports whether the session holds a valid one.
func (s *session) login(args []string) {
	opts, _ := flags(args)
	if len(opts) == 1 && opts[0] == "-s" {
		if s.d.server.Password == "" || s.d.ticket(s.ticketFromFile()) == ticketValid {
			s.emit(map[string]any{"User": s.user, "TicketExpiration": "43200"})
			return
		}
		s.msg(sevError, evContext, "Perforce password (P4PASSWD) invalid or unset.")
		return
	}
	allHosts := len(opts) == 1 && opts[0] == "-a"
	if len(opts) > 1 || (len(opts) == 1 && !allHosts) {
		s.usage("Usage: login [ -a -p -r <remotespec> -s ] [ user ]", "Invalid option: "+opts[0]+".")
		return
	}
	if allHosts && s.d.server.NoHostlessTickets {
		// msgs/msgserver.cc NoHostlessTickets (E_FAILED / EV_ILLEGAL).
		s.msg(sevError, evIllegal, "'p4 login -a' has been disabled on this server.")
		return
	}
	// The text client prompts even for a pipe; -Mj does not (issue 36, a
	// capture: MsgServer::PasswordPrompt is E_INFO, not printed as JSON).
	if !s.json {
		io.WriteString(s.stdout, "Enter password: \n")
	}
	line, _ := bufio.NewReader(s.stdin).ReadString('\n')
	if strings.TrimRight(line, "\r\n") != s.d.server.Password || s.d.server.Password == "" {
		// msgs/msgserver.cc BadPassword0: E_FAILED / EV_ILLEGAL (generic 4).
		s.msg(sevError, evIllegal, "Password invalid.")
		return
	}
	host := "*"
	if !allHosts {
		host = s.d.clientAddress()
	}
	ticket, err := s.d.issueTicket(host)
	if err == nil {
		err = s.storeTicket(ticket)
	}
	if err != nil {
		s.serverError("tickets", err)
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

func (d *depot) clientAddress() string {
	b, _ := os.ReadFile(filepath.Join(d.root, ".state", "client_address"))
	return cmp.Or(strings.TrimSpace(string(b)), "127.0.0.1")
}

func (d *depot) issueTicket(host string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	ticket := strings.ToUpper(hex.EncodeToString(b[:]))
	if err := os.MkdirAll(d.ticketDir(), 0o755); err != nil {
		return "", err
	}
	expiry := time.Now().Add(d.ticketTTL()).UnixMilli()
	return ticket, os.WriteFile(filepath.Join(d.ticketDir(), ticket), []byte(strconv.FormatInt(expiry, 10)+" "+host), 0o644)
}

func (d *depot) ticket(ticket string) ticketState {
	if len(ticket) != 32 || strings.Trim(ticket, "0123456789ABCDEF") != "" {
		return ticketUnknown
	}
	b, err := os.ReadFile(filepath.Join(d.ticketDir(), ticket))
	if err != nil {
		return ticketUnknown
	}
	exp, host, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	expiry, err := strconv.ParseInt(exp, 10, 64)
	switch {
	case err != nil:
		return ticketUnknown
	case host != "" && host != "*" && host != d.clientAddress(): // "" : a ticket from before hosts were recorded, as -a
		return ticketOtherHost
	case time.Now().UnixMilli() >= expiry:
		return ticketExpired
	}
	return ticketValid
}

// ticketsFile is P4TICKETS, or ~/.p4tickets as with the real client.
func (s *session) ticketsFile() string { return s.clientFile(s.tickets, ".p4tickets") }

// clientFile is the file env names, or ~/name; "" without HOME.
func (s *session) clientFile(env, name string) string {
	if env == "" && s.home != "" {
		return filepath.Join(s.home, name)
	}
	return env
}

// ticketFromFile finds "<port>=<user>:<ticket>" in the tickets file.
func (s *session) ticketFromFile() string {
	b, err := os.ReadFile(s.ticketsFile()) // "" fails: no tickets file
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
