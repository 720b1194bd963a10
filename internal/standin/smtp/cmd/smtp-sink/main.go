// Command smtp-sink runs the SMTP stand-in on the loopback interface for the
// local demo and out-of-process tests. It prints one JSON line with the SMTP
// and control addresses once both listen, then serves until SIGINT/SIGTERM.
//
//	smtp-sink -port 2525 -control-port 8025 -user criticizer -eml-dir ./mail
//
// The AUTH password is read from the environment variable named by
// -password-env (default SMTP_SINK_PASSWORD), never from a flag: flags show up
// in process listings.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/criticizer/criticizer/internal/standin/smtp"
)

func main() {
	var (
		port        = flag.Int("port", 2525, "SMTP port on 127.0.0.1 (0 = random)")
		controlPort = flag.Int("control-port", 8025, "HTTP control API port on 127.0.0.1 (0 = random)")
		noControl   = flag.Bool("no-control", false, "disable the HTTP control API")
		user        = flag.String("user", "", "require AUTH PLAIN with this username")
		passwordEnv = flag.String("password-env", "SMTP_SINK_PASSWORD", "environment variable holding the AUTH password")
		emlDir      = flag.String("eml-dir", "", "write each accepted message to this directory as <seq>.eml")
		mbox        = flag.String("mbox", "", "append each accepted message to this mbox file")
		domain      = flag.String("domain", "", "name in the SMTP greeting")
	)
	flag.Parse()
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))

	pass := os.Getenv(*passwordEnv)
	if *user != "" && pass == "" {
		fmt.Fprintf(os.Stderr, "smtp-sink: -user needs a password in $%s\n", *passwordEnv)
		os.Exit(2)
	}
	srv := smtp.NewServer(smtp.Options{
		Port: *port, Domain: *domain,
		Username: *user, Password: pass,
		EMLDir: *emlDir, MboxPath: *mbox,
		Control: !*noControl, ControlPort: *controlPort,
		Logger: log,
	})
	addr, err := srv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "smtp-sink:", err)
		os.Exit(1)
	}
	defer srv.Close()
	_ = json.NewEncoder(os.Stdout).Encode(map[string]string{"smtp": addr, "control": srv.ControlAddr()})

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	log.Info("shutting down")
}
