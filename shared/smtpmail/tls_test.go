package smtpmail

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"log/slog"
	"math/big"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/criticizer/criticizer/internal/standin/smtp"
	"github.com/criticizer/criticizer/shared/failure"
)

// selfSigned returns a server certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "smtp standin"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

func TestSMTPSenderStartTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	user, pass := "criticizer", randomSecret(t)
	srv := smtp.NewServer(smtp.Options{Username: user, Password: pass, Logger: slog.New(slog.DiscardHandler),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}})
	addr, err := srv.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	host, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)

	tests := []struct {
		name  string
		roots *x509.CertPool
		class failure.Class // "" for success
	}{
		{"trusted certificate", pool, ""},
		{"untrusted certificate is configuration", x509.NewCertPool(), failure.InternalBug},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(Config{Host: host, Port: port, TLS: TLSStartTLS, Username: user, Password: pass,
				Timeout: 5 * time.Second, TLSConfig: &tls.Config{RootCAs: tt.roots, MinVersion: tls.VersionTLS12}}, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Send(context.Background(), testKey, composeTest(t))
			if got := failure.Classify(err); got != tt.class {
				t.Errorf("class = %q, want %q (err: %v)", got, tt.class, err)
			}
		})
	}
	if n := len(srv.Messages()); n != 1 {
		t.Errorf("server stored %d messages, want 1", n)
	}
}
