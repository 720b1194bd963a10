package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// messageRow is one row of testdata/messages.json, the reference's message
// table (docs/reference/p4-cli.md).
type messageRow struct {
	Name     string         `json:"name"`
	Server   map[string]any `json:"server"`
	Fault    bool           `json:"fault"`
	Port     string         `json:"port"`
	Args     []string       `json:"args"`
	Message  string         `json:"message"`
	Severity int            `json:"severity"`
	Generic  int            `json:"generic"`
	Stderr   string         `json:"stderr"`
	Exit     int            `json:"exit"`
	Class    string         `json:"class"`
}

func loadMessageRows(t *testing.T) []messageRow {
	t.Helper()
	b, err := os.ReadFile("testdata/messages.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct{ Rows []messageRow }
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatal(err)
	}
	return table.Rows
}

// TestReferenceMessages pins every message row of the reference: the record
// on stdout byte for byte (sorted keys, numeric severity and generic, text
// ending in a newline, no "code"), the exit status, and nothing on stderr;
// client-side failures only on stderr.
func TestReferenceMessages(t *testing.T) {
	for i, row := range loadMessageRows(t) {
		t.Run(row.Name, func(t *testing.T) {
			port := copyDepot(t)
			if row.Server != nil {
				b, _ := json.Marshal(row.Server)
				os.WriteFile(filepath.Join(port, "server.json"), b, 0o644)
			}
			cl := fmt.Sprint(70000 + i)
			if row.Fault {
				f := map[string]any{"command": "describe", "message": row.Message, "severity": row.Severity, "generic": row.Generic}
				c := map[string]any{"change": 70000 + i, "status": "submitted", "user": "alice", "client": "ws", "desc": "x\n", "files": []any{}, "faults": []any{f}}
				b, _ := json.Marshal(c)
				os.WriteFile(filepath.Join(port, "changes", cl+".json"), b, 0o644)
			}
			if row.Port != "" {
				port = row.Port
			}
			args := []string{"-ztag", "-Mj"}
			for _, a := range row.Args {
				args = append(args, strings.ReplaceAll(a, "{cl}", cl))
			}
			_, raw, stderr, exit := p4env(t, map[string]string{"P4PORT": port, "P4USER": "criticizer"}, "", args...)
			if exit != row.Exit {
				t.Errorf("exit = %d, want %d", exit, row.Exit)
			}
			if row.Stderr != "" {
				if !strings.HasPrefix(stderr, row.Stderr) || raw != "" {
					t.Errorf("stderr = %q, stdout = %q; want %q… on stderr only", stderr, raw, row.Stderr)
				}
				return
			}
			text, _ := json.Marshal(row.Message + "\n")
			want := fmt.Sprintf(`{"data":%s,"generic":%d,"severity":%d}`+"\n", text, row.Generic, row.Severity)
			if raw != want || stderr != "" {
				t.Errorf("stdout = %q, stderr = %q\nwant stdout %q", raw, stderr, want)
			}
		})
	}
}

func TestSortedKeysAndInvalidUTF8(t *testing.T) {
	port := copyDepot(t)
	latin1 := "caf\xe9\n"
	c := change{Change: 6, Status: "submitted", User: "u", Files: []file{{Path: "//depot/a/l1.txt", Action: "add", Type: "text", Rev: 1, After: &latin1}}}
	b, _ := json.Marshal(c)
	os.WriteFile(filepath.Join(port, "changes", "6.json"), b, 0o644)
	_, raw, _, exit := p4env(t, map[string]string{"P4PORT": port}, "", "-ztag", "-Mj", "print", "//depot/a/l1.txt#1")
	if exit != 0 {
		t.Fatalf("exit %d", exit)
	}
	lines := strings.Split(strings.TrimSpace(raw), "\n")
	if !strings.HasPrefix(lines[0], `{"action":"add","change":"6","depotFile":"//depot/a/l1.txt","fileSize":`) {
		t.Errorf("header keys not sorted: %s", lines[0])
	}
	if lines[1] != `{"data":"caf`+"\uFFFD"+`\n"}` {
		t.Errorf("data = %s, want U+FFFD for the Latin-1 byte", lines[1])
	}
}

func TestMoveIsDeletePlusAdd(t *testing.T) {
	port := copyDepot(t)
	lines, _, exit := p4(t, port, "-ztag", "-Mj", "describe", "-s", "12349")
	if exit != 0 || len(lines) != 1 {
		t.Fatalf("exit %d, %v", exit, lines)
	}
	d := lines[0]
	if d.s("action0") != "move/add" || d.s("rev0") != "1" || d.s("action1") != "move/delete" || d.s("depotFile1") != "//depot/projectA/src/net/buf.c" {
		t.Errorf("describe of a move: %v", d)
	}
	fl, _, exit := p4(t, port, "-ztag", "-Mj", "filelog", "-m1", "//depot/projectA/src/net/buffer_pool.c#1")
	if exit != 0 || len(fl) != 1 || fl[0].s("how0,0") != "moved from" || fl[0].s("file0,0") != "//depot/projectA/src/net/buf.c" || fl[0].s("erev0,0") != "#2" {
		t.Errorf("filelog of a moved file: %v", fl)
	}
}

func TestLoginIssuesATicket(t *testing.T) {
	port := copyDepot(t)
	os.WriteFile(filepath.Join(port, "server.json"), []byte(`{"password":"pw-1"}`), 0o644)
	tickets := filepath.Join(t.TempDir(), "tickets")
	env := map[string]string{"P4PORT": port, "P4USER": "criticizer", "P4TICKETS": tickets}
	if _, _, _, exit := p4env(t, env, "", "-ztag", "-Mj", "describe", "-s", "12345"); exit != 1 {
		t.Fatalf("describe without a ticket: exit %d", exit)
	}
	if lines, _, _, exit := p4env(t, env, "wrong\n", "-ztag", "-Mj", "login"); exit != 1 || !strings.Contains(lines[0].s("data"), "Password invalid.") {
		t.Fatalf("login with a wrong password: exit %d, %v", exit, lines)
	}
	if _, _, stderr, exit := p4env(t, env, "pw-1\n", "-ztag", "-Mj", "login"); exit != 0 {
		t.Fatalf("login: exit %d %s", exit, stderr)
	}
	if lines, _, _, exit := p4env(t, env, "", "-ztag", "-Mj", "describe", "-s", "12345"); exit != 0 || lines[0].s("change") != "12345" {
		t.Fatalf("describe with a ticket: exit %d", exit)
	}
	os.RemoveAll(filepath.Join(port, ".state", "tickets")) // the server forgets it: expiry
	if _, _, _, exit := p4env(t, env, "", "-ztag", "-Mj", "describe", "-s", "12345"); exit != 1 {
		t.Fatalf("describe with an expired ticket: exit %d", exit)
	}
}
