// Package certfile holds a TLS certificate read from PEM files, reloadable
// while a server uses it: the server's tls.Config asks GetCertificate for
// the certificate of each handshake, so a reload (on SIGHUP) changes it
// for new connections without a restart. A reload that fails keeps the
// certificate the holder had.
package certfile

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"sync/atomic"
	"time"
)

// Holder holds the certificate of a certificate file and a key file.
type Holder struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
}

// Load reads the certificate (chain) and the private key.
func Load(certFile, keyFile string) (*Holder, error) {
	h := &Holder{certFile: certFile, keyFile: keyFile}
	if err := h.Reload(); err != nil {
		return nil, err
	}
	return h, nil
}

// Reload reads the files again. On an error the certificate held so far
// stays.
func (h *Holder) Reload() error {
	cert, err := tls.LoadX509KeyPair(h.certFile, h.keyFile)
	if err != nil {
		return fmt.Errorf("tls certificate %s, key %s: %w", h.certFile, h.keyFile, err)
	}
	if cert.Leaf == nil && len(cert.Certificate) > 0 {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return fmt.Errorf("tls certificate %s: %w", h.certFile, err)
		}
	}
	h.cert.Store(&cert)
	return nil
}

// GetCertificate is a tls.Config's GetCertificate: the certificate held.
func (h *Holder) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return h.cert.Load(), nil
}

// Leaf is the certificate held (its subject, names and validity, for
// logging).
func (h *Holder) Leaf() *x509.Certificate { return h.cert.Load().Leaf }

// Config returns a server's TLS configuration serving the certificate
// held: TLS 1.2 and up, HTTP/2 and HTTP/1.1 (http.Server adds the
// protocols when it serves TLS).
func (h *Holder) Config() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: h.GetCertificate}
}

// Describe words the certificate held for a log line: its subject and
// when it expires.
func (h *Holder) Describe(now time.Time) string {
	leaf := h.Leaf()
	if leaf == nil {
		return "certificate"
	}
	names := leaf.DNSNames
	for _, ip := range leaf.IPAddresses {
		names = append(names, ip.String())
	}
	s := fmt.Sprintf("certificate %q (serial %s, names %v) valid until %s", leaf.Subject.String(), leaf.SerialNumber, names, leaf.NotAfter.UTC().Format(time.RFC3339))
	if now.After(leaf.NotAfter) {
		s += ", EXPIRED"
	}
	return s
}
