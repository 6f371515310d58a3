package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"stepwise/internal/boundedfile"
)

// HTTPClient sends spans over OTLP/HTTP in protobuf
// (http/protobuf): a POST of each ExportTraceServiceRequest to the
// collector's /v1/traces, gzipped when OTEL_EXPORTER_OTLP_COMPRESSION
// says so, retried as OTLP says when the collector is busy (429, 502,
// 503, 504: after its Retry-After, else with a growing delay) until the
// export's timeout.
type HTTPClient struct {
	url     string
	headers http.Header
	gzip    bool
	timeout time.Duration
	http    *http.Client
	zips    sync.Pool
}

// The environment's settings of OTLP, the traces' own first.
func otlpEnv(name string) string {
	if v := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_" + name); v != "" {
		return v
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_" + name)
}

// defaultTimeout is OTLP's default timeout of an export.
const defaultTimeout = 10 * time.Second

// maxTLSFile bounds a certificate or key file.
const maxTLSFile = 1 << 20

// NewHTTPClient is the OTLP/HTTP client of endpoint (the collector's base
// URL: traces go to its /v1/traces) or, when empty, of the standard
// variables: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL),
// OTEL_EXPORTER_OTLP_ENDPOINT (a base URL), else http://localhost:4318.
// The variables _HEADERS, _COMPRESSION (gzip or none), _TIMEOUT
// (milliseconds), _CERTIFICATE, _CLIENT_CERTIFICATE and _CLIENT_KEY, in
// their OTEL_EXPORTER_OTLP_TRACES_ and OTEL_EXPORTER_OTLP_ forms, apply
// either way.
func NewHTTPClient(endpoint string) (*HTTPClient, error) {
	target, err := tracesURL(endpoint)
	if err != nil {
		return nil, err
	}
	c := &HTTPClient{url: target, headers: http.Header{}, timeout: defaultTimeout}
	if h := otlpEnv("HEADERS"); h != "" {
		for _, kv := range strings.Split(h, ",") {
			k, v, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			dk, err1 := url.PathUnescape(k)
			dv, err2 := url.PathUnescape(strings.TrimSpace(v))
			if !ok || k == "" || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_HEADERS: %q is not key=value (percent-encoded)", kv)
			}
			c.headers.Add(dk, dv)
		}
	}
	switch z := strings.TrimSpace(otlpEnv("COMPRESSION")); z {
	case "", "none":
	case "gzip":
		c.gzip = true
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION %q: supported are gzip and none", z)
	}
	if v := strings.TrimSpace(otlpEnv("TIMEOUT")); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT %q: a number of milliseconds above 0 is expected", v)
		}
		c.timeout = time.Duration(ms) * time.Millisecond
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2
	if cfg, err := tlsFromEnv(); err != nil {
		return nil, err
	} else if cfg != nil {
		tr.TLSClientConfig = cfg
	}
	c.http = &http.Client{Transport: tr}
	return c, nil
}

// tracesURL is where the spans are posted.
func tracesURL(endpoint string) (string, error) {
	full := false
	name := "otel-endpoint"
	if endpoint == "" {
		if endpoint = os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); endpoint != "" {
			full, name = true, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
		} else if endpoint = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); endpoint != "" {
			name = "OTEL_EXPORTER_OTLP_ENDPOINT"
		} else {
			endpoint = "http://localhost:4318"
		}
	}
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s %q: not an http or https URL", name, endpoint)
	}
	if !full {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

// tlsFromEnv is the TLS configuration the variables name (nil: the
// system's).
func tlsFromEnv() (*tls.Config, error) {
	ca, cert, key := otlpEnv("CERTIFICATE"), otlpEnv("CLIENT_CERTIFICATE"), otlpEnv("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	ctx := context.Background()
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := boundedfile.Read(ctx, ca, maxTLSFile)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE %s: no PEM certificate in it", ca)
		}
	}
	if (cert == "") != (key == "") {
		return nil, errors.New("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together")
	}
	if cert != "" {
		certPEM, err := boundedfile.Read(ctx, cert, maxTLSFile)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: %w", err)
		}
		keyPEM, err := boundedfile.Read(ctx, key, maxTLSFile)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CLIENT_KEY: %w", err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _KEY: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// URL is where the client posts the spans.
func (c *HTTPClient) URL() string { return c.url }

// Retry delays when the collector gives no Retry-After.
const (
	retryFirst = 500 * time.Millisecond
	retryMax   = 5 * time.Second
)

// Export posts request, retrying while the collector is busy, until the
// client's timeout (or ctx) ends.
func (c *HTTPClient) Export(ctx context.Context, request []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	body := request
	if c.gzip {
		var err error
		if body, err = c.compress(request); err != nil {
			return err
		}
	}
	delay := retryFirst
	for {
		wait, err := c.post(ctx, body)
		if err == nil {
			return nil
		}
		if wait < 0 {
			return err
		}
		if wait == 0 {
			// Full jitter, as OTLP's exporters do.
			wait = delay/2 + rand.N(delay/2+1)
			delay = min(2*delay, retryMax)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("%w (not retried: the export's timeout ends before the retry)", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (retry given up: %w)", err, ctx.Err())
		}
	}
}

// post sends body once. wait, on an error, is < 0 when it is not to be
// retried, 0 for a retry after the client's own delay, or the
// collector's Retry-After.
func (c *HTTPClient) post(ctx context.Context, body []byte) (wait time.Duration, _ error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	for k, v := range c.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if c.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return -1, err
		}
		// The collector not reached (or the connection lost): tried again.
		return 0, err
	}
	defer resp.Body.Close()
	// The ExportTraceServiceResponse (a partial success's count of
	// spans rejected) or the error's Status: read to reuse the
	// connection, told in the error.
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 == 2 {
		return 0, nil
	}
	err = fmt.Errorf("OTLP export to %s: %s%s", c.url, resp.Status, errorText(resp.Header.Get("Content-Type"), msg))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return retryAfter(resp.Header.Get("Retry-After")), err
	}
	return -1, err
}

// errorText is a failed export's body, when it is text, for its error.
func errorText(contentType string, body []byte) string {
	if len(body) == 0 || !strings.HasPrefix(contentType, "text/") && !strings.HasPrefix(contentType, "application/json") {
		return ""
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return ": " + s
}

// retryAfter reads a Retry-After header: seconds or an HTTP date (0: none,
// or unreadable).
func retryAfter(h string) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, 3600)) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := time.Until(t); d > 0 {
			return min(d, time.Hour)
		}
	}
	return 0
}

type zipper struct {
	buf bytes.Buffer
	w   *gzip.Writer
}

// compress gzips request, with a writer of the client's pool.
func (c *HTTPClient) compress(request []byte) ([]byte, error) {
	z, _ := c.zips.Get().(*zipper)
	if z == nil {
		z = &zipper{}
		z.w = gzip.NewWriter(&z.buf)
	}
	defer c.zips.Put(z)
	z.buf.Reset()
	z.w.Reset(&z.buf)
	if _, err := z.w.Write(request); err != nil {
		return nil, err
	}
	if err := z.w.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(z.buf.Bytes()), nil
}

// Stop closes the client's idle connections.
func (c *HTTPClient) Stop(context.Context) error {
	c.http.CloseIdleConnections()
	return nil
}
