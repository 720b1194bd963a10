package p4

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/criticizer/criticizer/shared/failure"
)

// Credential is the service user's secret (P4_SECRET_ID): a password for p4
// login on stdin, or a long-lived ticket for P4PASSWD. Never in argv.
type Credential struct {
	Password string `json:"password"`
	Ticket   string `json:"ticket"`
}

// ParseCredential reads a secret value {"password": …} or {"ticket": …}.
// The error names the secret, never the value.
func ParseCredential(id, value string) (Credential, error) {
	var c Credential
	if err := json.Unmarshal([]byte(value), &c); err != nil || (c.Password == "") == (c.Ticket == "") {
		return Credential{}, failure.Errorf(failure.InternalBug, "secret %s: want a JSON object with exactly one of \"password\" or \"ticket\"", id)
	}
	if strings.ContainsAny(c.Password+c.Ticket, "\x00\n\r") {
		return Credential{}, failure.Errorf(failure.InternalBug, "secret %s: contains a control character", id)
	}
	return c, nil
}

// CredentialSource yields the current credential; fresh bypasses any cache
// (after a rejection), changed reports a rotation. secrets.Rotating[Credential]
// is one.
type CredentialSource interface {
	Get(ctx context.Context, fresh bool) (c Credential, changed bool, err error)
}

// SetCredentials makes the runner authenticate with src before its first
// command, and whenever the server rejects the session read the secret
// afresh, log in again and retry the command once (a second rejection is
// AUTH_DENIED). A password uses "p4 login -a", valid from every host: a
// Lambda's address may change (reference, "Keywords, trust, tickets, edge
// servers").
func (r *Runner) SetCredentials(src CredentialSource) {
	r.auth.mu.Lock()
	defer r.auth.mu.Unlock()
	r.auth.src = src
}

// session returns a command's environment additions and its login
// generation, logging in first when needed.
func (r *Runner) session(ctx context.Context) ([]string, int, error) {
	r.auth.mu.Lock()
	defer r.auth.mu.Unlock()
	if !r.auth.trusted && r.trustFingerprint != "" {
		// Trust the configured fingerprint before anything talks to an ssl:
		// server; never "trust -y" (that would accept any key).
		if _, err := r.exec(ctx, nil, "", "trust", "-i", r.trustFingerprint); err != nil {
			return nil, 0, err
		}
		r.auth.trusted = true
	}
	if r.auth.src == nil {
		return nil, 0, nil
	}
	if !r.auth.ready {
		if err := r.authenticate(ctx, false); err != nil {
			return nil, 0, err
		}
	}
	return r.auth.env, r.auth.gen, nil
}

// reauthenticate handles a rejected session (made under generation gen):
// log in again unless another command already did since.
func (r *Runner) reauthenticate(ctx context.Context, gen int) bool {
	r.auth.mu.Lock()
	defer r.auth.mu.Unlock()
	if r.auth.src == nil {
		return false
	}
	if r.auth.gen != gen {
		return true // another command already renewed the session
	}
	r.log.Warn("p4 session rejected; reading the credential afresh and logging in again", "event", "p4_relogin")
	return r.authenticate(ctx, true) == nil
}

// authenticate (r.auth.mu held) reads the credential and establishes a session.
func (r *Runner) authenticate(ctx context.Context, fresh bool) error {
	c, changed, err := r.auth.src.Get(ctx, fresh)
	if err != nil {
		return err
	}
	if fresh && c.Ticket != "" && !changed {
		// The same ticket was just rejected; sending it again cannot help.
		return failure.Errorf(failure.AuthDenied, "p4 ticket from the secret was rejected and has not been rotated")
	}
	r.maskMu.Lock()
	r.password = c.Password + c.Ticket // masked out of messages
	r.maskMu.Unlock()
	r.auth.env = nil
	if c.Ticket != "" {
		r.auth.env = []string{"P4PASSWD=" + c.Ticket}
	} else if err := r.login(ctx, c.Password); err != nil {
		return err
	}
	r.auth.ready = true
	r.auth.gen++
	return nil
}

// hostlessDisabled is the server's answer to "login -a" where all-host
// tickets are disabled (the client source's msgs/msgserver.cc,
// NoHostlessTickets).
const hostlessDisabled = "'p4 login -a' has been disabled on this server"

// login logs in with password on stdin: "login -a", else (disabled) a
// host-locked "login", which re-login on rejection keeps working.
func (r *Runner) login(ctx context.Context, password string) error {
	if !r.auth.hostLocked {
		_, err := r.exec(ctx, nil, password+"\n", "login", "-a")
		if err == nil || !strings.Contains(err.Error(), hostlessDisabled) {
			return err
		}
		r.auth.hostLocked = true
		r.log.Warn("the p4 server disables all-host tickets; logging in with host-locked tickets", "event", "p4_hostless_tickets_disabled")
	}
	_, err := r.exec(ctx, nil, password+"\n", "login")
	return err
}
