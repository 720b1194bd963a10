package main

import (
	"os"
	"strings"
)

// trustFile is P4TRUST, or ~/.p4trust as with the real client.
func (s *session) trustFile() string { return s.clientFile(s.trust, ".p4trust") }

// trustCmd is "p4 trust -i <fingerprint>" (client-side); "-y" is refused so
// that no test can come to rely on accepting any key.
func (s *session) trustCmd(args []string) int {
	if len(args) != 2 || args[0] != "-i" {
		return s.clientFailure("standin: only 'trust -i <fingerprint>' is supported.")
	}
	name := s.trustFile()
	if name == "" {
		return s.clientFailure("Perforce client error:\n\tNo trust file (set P4TRUST or HOME).")
	}
	line := s.port + "=" + args[1] + "\n"
	if err := os.WriteFile(name, []byte(line), 0o600); err != nil {
		return s.clientFailure("Perforce client error:\n\t" + err.Error())
	}
	s.emit(map[string]any{"data": "Added trust for P4PORT '" + s.port + "' (" + args[1] + ")\n", "level": 0})
	return 0
}

// checkTrust fails like the real client when an ssl: server's key is not
// the trust file's: msgs/msgrpc.cc HostKeyUnknown (nothing for P4PORT) or
// HostKeyMismatch, E_FAILED / EV_COMM. Under -Mj the client writes it as a
// JSON message (client/client.cc WaitTag; client/clientusermsh.cc
// HandleError; issue 36); the reference has "Perforce client error:" text
// on stderr (trust_failure_stderr), so the client reads both (reference,
// "Keywords, trust, tickets, edge servers": "a later mismatch fails every
// command").
func (s *session) checkTrust() int {
	fp := s.d.server.Fingerprint
	if fp == "" {
		return 0
	}
	trusted := ""
	if b, err := os.ReadFile(s.trustFile()); err == nil { // "" fails: no trust file
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, s.port+"="); ok {
				trusted = v
			}
		}
	}
	var text string
	switch trusted {
	case fp:
		return 0
	case "":
		text = "The authenticity of '" + s.port + "' can't be established,\nthis may be your first attempt to connect to this P4PORT.\nThe fingerprint for the key sent to your client is\n" + fp + "\nTo allow connection use the 'p4 trust' command."
	default:
		text = "******* WARNING P4PORT IDENTIFICATION HAS CHANGED! *******\nIt is possible that someone is intercepting your connection\nto the Perforce P4PORT '" + s.port + "'\nIf this is not a scheduled key change, then you should contact\nyour Perforce administrator.\nThe fingerprint for the mismatched key sent to your client is\n" + fp + "\nTo allow connection use the 'p4 trust' command."
	}
	if s.json && !s.d.server.TrustFailureStderr {
		s.msg(sevError, evComm, "%s", text)
		return 1
	}
	return s.clientFailure("Perforce client error:\n\t" + strings.ReplaceAll(text, "\n", "\n\t"))
}
