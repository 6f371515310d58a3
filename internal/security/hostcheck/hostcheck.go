// Package hostcheck keeps a server that authenticates no one from
// answering requests sent to a name that is not its own: the defence
// against DNS rebinding.
//
// # The attack
//
// A page at http://rebind.attacker.test:8083 has its name re-resolve to
// 127.0.0.1: the browser then sends the page's requests to a server on
// the victim's machine, and takes them for the page's own (same origin).
// Origin and Sec-Fetch-Site say same-origin; the socket is loopback.
// Only Host still says where the browser thinks it is: the attacker's
// name.
//
// # The rule
//
// A server answers a request only when its Host (port aside) is one of:
//
//	localhost, and names under .localhost    (resolved to loopback by browsers)
//	an IP address, 127.0.0.1 or [::1] or any other (an address cannot be rebound)
//	the names it is given (Names)             (its --addr host, --allowed-host)
//	in a container, a name without a dot      (a compose or CI service name: stepwise, sfn)
//
// or when it has no Host (HTTP/1.0: no browser sends such a request).
// The port is not looked at: a rebinding page controls only the name,
// and a port forwarded (docker run -p 9000:8083, kubectl port-forward)
// reaches the server with a Host of another port. A given name ".example"
// stands for example and every name under it; "*" for any name (the
// check is off).
//
// # The guard
//
// Guard applies the rule to every request before any route sees it,
// except those open names (the probes) it is told to let through. The
// refusal is written by the caller, in the words of the route's protocol,
// with Message.
package hostcheck

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Names are the host names a server answers besides localhost and IP
// addresses.
type Names struct {
	exact   map[string]bool
	domains []string // ".example.com": the name and those under it
	any     bool
	single  bool // every name of one label (AllowSingleLabel)
}

// NewNames returns the names, each a host name, ".domain" (the domain and
// the names under it) or "*" (any); a name that is not valid (ParseName)
// is an error.
func NewNames(names ...string) (*Names, error) {
	n := &Names{exact: map[string]bool{}}
	for _, name := range names {
		p, err := ParseName(name)
		if err != nil {
			return nil, err
		}
		switch {
		case p == "*":
			n.any = true
		case strings.HasPrefix(p, "."):
			n.domains = append(n.domains, p)
		default:
			n.exact[p] = true
		}
	}
	return n, nil
}

// AllowSingleLabel makes n allow every name of one label, without a dot
// (stepwise, sfn): in a container, the names other containers of its
// network reach it by (a compose file's or a CI job's service names). No
// site's page is served from such a name, so none can rebind it; a name
// with a dot still needs to be given.
func (n *Names) AllowSingleLabel() { n.single = true }

// singleLabel says whether a Host's name is a name of one label: letters,
// digits, '-' and '_', a letter among them (a number is an IPv4 address
// to a browser, which writes it as such).
func singleLabel(name string) bool {
	if name == "" || len(name) > 63 || !strings.ContainsFunc(name, func(c rune) bool { return c >= 'a' && c <= 'z' }) {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ParseName checks a name given to the server and returns it as it is
// compared (lower case, without a final dot): a host name (letters,
// digits, '-', '_' and '.'), an IP address, ".domain" or "*".
func ParseName(name string) (string, error) {
	if name == "*" {
		return name, nil
	}
	p := strings.ToLower(strings.TrimSuffix(name, "."))
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(p, "["), "]")); err == nil {
		return a.String(), nil
	}
	body := strings.TrimPrefix(p, ".")
	ok := body != "" && len(body) <= 253
	for _, label := range strings.Split(body, ".") {
		if label == "" || len(label) > 63 {
			ok = false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				ok = false
			}
		}
	}
	if !ok {
		return "", fmt.Errorf("%q: not a host name such as stepwise.internal (without a port), .example.com for a domain and the names under it, or * for any", name)
	}
	return p, nil
}

// Allows reports whether a request whose Host is host (r.Host, with or
// without a port) may be answered.
func (n *Names) Allows(host string) bool {
	if host == "" {
		return true
	}
	name := Hostname(host)
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	if n == nil {
		return false
	}
	if n.any || n.exact[name] {
		return true
	}
	if n.single && singleLabel(name) {
		return true
	}
	for _, d := range n.domains {
		if name == d[1:] || strings.HasSuffix(name, d) {
			return true
		}
	}
	return false
}

// Hostname is a Host's name: without its port or an IPv6 address's
// brackets, in lower case, without a final dot.
func Hostname(host string) string {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		name = host[1 : len(host)-1]
	}
	return strings.ToLower(strings.TrimSuffix(name, "."))
}

// Message is the text of the refusal of a request to host.
func Message(host string) string {
	name := Hostname(host)
	return fmt.Sprintf("Host %q is not a name of this server: without --credentials it answers requests to localhost, "+
		"to its IP addresses and to the names it is given (DNS rebinding cannot then make another site's pages its own). "+
		"To answer this name, serve with --allowed-host %s", host, name)
}

// Guard returns next behind the rule: a request whose Host names allows
// not, unless open says it is for everyone, is answered by refuse (with
// 403 and Message, in the route's words) and never reaches next.
func Guard(next http.Handler, names *Names, open func(*http.Request) bool, refuse func(w http.ResponseWriter, r *http.Request, message string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !names.Allows(r.Host) && (open == nil || !open(r)) {
			refuse(w, r, Message(r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}
