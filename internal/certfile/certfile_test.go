package certfile_test

import (
	"crypto/tls"
	"net"
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/security/certfile"
	"stepwise/internal/testkit/testcert"
)

func TestHolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	first := ca.Issue(t)
	certFile, keyFile := first.Write(t, dir)
	h, err := certfile.Load(certFile, keyFile)
	require.NoError(t, err)
	require.Equal(t, first.Serial, h.Leaf().SerialNumber)

	// A server with the holder's configuration serves HTTP/2 with it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), TLSConfig: h.Config()}
	go srv.ServeTLS(ln, "", "")
	defer srv.Close()
	served := func() *tls.ConnectionState {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}, ForceAttemptHTTP2: true}}
		defer client.CloseIdleConnections()
		resp, err := client.Get("https://" + ln.Addr().String())
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 2, resp.ProtoMajor)
		return resp.TLS
	}
	require.Equal(t, first.Serial, served().PeerCertificates[0].SerialNumber)

	second := ca.Issue(t)
	second.Write(t, dir)
	require.NoError(t, h.Reload())
	require.Equal(t, second.Serial, served().PeerCertificates[0].SerialNumber)

	// A broken pair keeps the certificate held.
	require.NoError(t, os.WriteFile(certFile, []byte("not a certificate"), 0o600))
	require.ErrorContains(t, h.Reload(), "tls certificate "+certFile)
	require.Equal(t, second.Serial, served().PeerCertificates[0].SerialNumber)
	third := ca.Issue(t)
	require.NoError(t, os.WriteFile(certFile, third.CertPEM, 0o600)) // the new certificate, the old key
	require.ErrorContains(t, h.Reload(), "private key does not match public key")
	require.Equal(t, second.Serial, h.Leaf().SerialNumber)

	_, err = certfile.Load(certFile+".missing", keyFile)
	require.ErrorContains(t, err, "no such file")
}
