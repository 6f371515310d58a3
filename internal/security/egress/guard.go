package egress

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"
)

// RefusedError is a connection the rules refuse: plain HTTP to a host
// the allow list does not name, or an address that is not public.
type RefusedError struct {
	// Target is what was refused: "http://host:port" for plain HTTP,
	// "host:port" for an address.
	Target string
	// Addr is the address refused; the zero Addr for plain HTTP.
	Addr netip.Addr
	// Reason says why: "plain HTTP", "a loopback address", ...
	Reason string
	// Entry is the allow list entry that would let it through.
	Entry string
}

func (e *RefusedError) Error() string {
	target := e.Target
	if e.Addr.IsValid() {
		if host, _, err := net.SplitHostPort(e.Target); err != nil || host != e.Addr.String() {
			target += " (" + e.Addr.String() + ")"
		}
	}
	return fmt.Sprintf("%s is %s, and HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with %s %s",
		target, e.Reason, Flag, e.Entry)
}

// Guard applies the rules to the requests and connections of HTTP Tasks.
type Guard struct {
	// Allow is the allow list; nil allows public HTTPS endpoints only.
	Allow *Allow
	// Resolver resolves host names when dialling; nil is the default
	// resolver.
	Resolver *net.Resolver
}

// CheckURL checks a request's URL before it is sent (and each redirect's):
// https, or http to a host the allow list names.
func (g *Guard) CheckURL(u *url.URL) error {
	if u.Scheme == "https" {
		return nil
	}
	host := normalizeHost(u.Hostname())
	if u.Scheme != "http" {
		return &RefusedError{Target: u.Scheme + "://" + u.Host, Reason: "not HTTPS", Entry: entryFor(host)}
	}
	port := portOf(u.Port(), 80)
	if g.Allow.allowsName(host, port) {
		return nil
	}
	if addr, err := netip.ParseAddr(host); err == nil && g.Allow.allowsAddr(addr, port) {
		return nil
	}
	return &RefusedError{Target: "http://" + u.Host, Reason: "plain HTTP", Entry: entryFor(host)}
}

// DialContext connects to address ("host:port") as net.Dialer does,
// refusing every address that is neither public nor allowed, after DNS
// resolution: the check is made on each socket before it connects. A
// host name the allow list names is dialled without the check.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: g.Resolver}
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if g.Allow.allowsName(normalizeHost(host), portOf(portText, 0)) {
		return d.DialContext(ctx, network, address)
	}
	d.ControlContext = func(_ context.Context, _, dialed string, _ syscall.RawConn) error {
		return g.checkDial(host, portText, dialed)
	}
	return d.DialContext(ctx, network, address)
}

// checkDial checks the address a socket is about to connect to, dialled
// for host.
func (g *Guard) checkDial(host, port, dialed string) error {
	ap, err := netip.ParseAddrPort(dialed)
	if err != nil {
		return &RefusedError{Target: net.JoinHostPort(host, port), Reason: "not an IP address (" + dialed + ")", Entry: entryFor(host)}
	}
	addr := ap.Addr().WithZone("").Unmap()
	if g.Allow.allowsAddr(addr, ap.Port()) {
		return nil
	}
	what := NonPublic(addr)
	if what == "" {
		return nil
	}
	return &RefusedError{Target: net.JoinHostPort(host, port), Addr: addr, Reason: what, Entry: entryFor(host)}
}

// Transport returns an HTTP transport that dials through the guard and
// through no proxy (a proxy would connect on the guard's behalf).
// The other settings are http.DefaultTransport's.
func (g *Guard) Transport() *http.Transport {
	return &http.Transport{
		DialContext:           g.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
	}
}

// entryFor is the allow list entry to suggest for a host: the name, or
// the address without a zone.
func entryFor(host string) string {
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.WithZone("").Unmap().String()
	}
	return normalizeHost(host)
}

// portOf reads a port; "" is def, a bad port 0.
func portOf(text string, def uint16) uint16 {
	if text == "" {
		return def
	}
	n, err := strconv.ParseUint(text, 10, 16)
	if err != nil {
		return 0
	}
	return uint16(n)
}
