package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Flag is the option of stepwise serve that sets the allow list.
const Flag = "--http-task-allow"

// entry is one entry of an allow list: a host name, or an address or
// network, on one port or any.
type entry struct {
	host   string       // a host name, lower case; "" for an address or network
	prefix netip.Prefix // an address (/32, /128) or network, when host is ""
	port   uint16       // 0: any port
}

// Allow is an allow list: the hosts, addresses and networks HTTP Tasks
// may call although they are not public, and over plain http://. A nil
// *Allow allows nothing.
type Allow struct {
	entries []entry
}

// ParseAllow reads allow list entries; each spec holds one or more,
// separated by commas. Every bad entry is reported.
func ParseAllow(specs ...string) (*Allow, error) {
	a := &Allow{}
	var errs []error
	for _, spec := range specs {
		for s := range strings.SplitSeq(spec, ",") {
			e, err := parseEntry(strings.TrimSpace(s))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			a.entries = append(a.entries, e)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return a, nil
}

// parseEntry reads HOST[:PORT], ADDRESS, ADDRESS:PORT, [IPV6]:PORT or
// NETWORK/BITS.
func parseEntry(s string) (entry, error) {
	switch {
	case s == "":
		return entry{}, errors.New("an empty entry: give a host name, an address or a network such as 10.0.0.0/8")
	case strings.Contains(s, "://"):
		return entry{}, fmt.Errorf("%q is a URL: give its host, such as localhost or localhost:8080", s)
	case strings.Contains(s, "/"):
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return entry{}, fmt.Errorf("%q is not a network such as 10.0.0.0/8 or fd00::/8", s)
		}
		if p != p.Masked() {
			return entry{}, fmt.Errorf("%q has bits set past its /%d: write the network, %s", s, p.Bits(), p.Masked())
		}
		return entry{prefix: unmapPrefix(p)}, nil
	}
	if addr, err := netip.ParseAddr(s); err == nil {
		return addrEntry(s, addr, 0)
	}
	if strings.HasPrefix(s, "[") {
		if inner, ok := strings.CutSuffix(s[1:], "]"); ok {
			addr, err := netip.ParseAddr(inner)
			if err != nil || !addr.Is6() {
				return entry{}, fmt.Errorf("%q is not an IPv6 address in brackets", s)
			}
			return addrEntry(s, addr, 0)
		}
		ap, err := netip.ParseAddrPort(s)
		if err != nil || ap.Port() == 0 {
			return entry{}, fmt.Errorf("%q is not [IPV6-ADDRESS]:PORT with a port from 1 to 65535", s)
		}
		return addrEntry(s, ap.Addr(), ap.Port())
	}
	host, portText, hasPort := strings.Cut(s, ":")
	if strings.Contains(portText, ":") {
		return entry{}, fmt.Errorf("%q is neither an address nor HOST:PORT (write an IPv6 address with a port as [ADDRESS]:PORT)", s)
	}
	var port uint16
	if hasPort {
		n, err := strconv.ParseUint(portText, 10, 16)
		if err != nil || n == 0 {
			return entry{}, fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
		}
		port = uint16(n)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return addrEntry(s, addr, port)
	}
	name := normalizeHost(host)
	if !validHostName(name) {
		return entry{}, fmt.Errorf("%q is not a host name, an address or a network", s)
	}
	return entry{host: name, port: port}, nil
}

func addrEntry(s string, addr netip.Addr, port uint16) (entry, error) {
	if addr.Zone() != "" {
		return entry{}, fmt.Errorf("%q: an address with a zone is not supported", s)
	}
	addr = addr.Unmap()
	return entry{prefix: netip.PrefixFrom(addr, addr.BitLen()), port: port}, nil
}

// unmapPrefix turns a network of IPv4-mapped IPv6 addresses into the
// IPv4 network, as addresses are compared unmapped.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p
}

// normalizeHost lower-cases a host name and drops a final dot.
func normalizeHost(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// validHostName reports whether name is a DNS name of letters, digits,
// hyphens and underscores whose last label is not all digits (so that
// "10.1" or "300.1.1.1" is not taken for a name).
func validHostName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != ""
}

// String writes the list back, entries separated by commas.
func (a *Allow) String() string {
	if a == nil {
		return ""
	}
	parts := make([]string, len(a.entries))
	for i, e := range a.entries {
		parts[i] = e.String()
	}
	return strings.Join(parts, ",")
}

func (e entry) String() string {
	var s string
	switch {
	case e.host != "":
		s = e.host
	case e.prefix.IsSingleIP():
		s = e.prefix.Addr().String()
		if e.port != 0 && e.prefix.Addr().Is6() {
			s = "[" + s + "]"
		}
	default:
		return e.prefix.String()
	}
	if e.port != 0 {
		s += ":" + strconv.Itoa(int(e.port))
	}
	return s
}

// Len is the number of entries.
func (a *Allow) Len() int {
	if a == nil {
		return 0
	}
	return len(a.entries)
}

// allowsName reports whether a host name (normalized) is listed for the
// port.
func (a *Allow) allowsName(name string, port uint16) bool {
	if a == nil || name == "" {
		return false
	}
	for _, e := range a.entries {
		if e.host == name && (e.port == 0 || e.port == port) {
			return true
		}
	}
	return false
}

// allowsAddr reports whether an address is inside a listed address or
// network, for the port.
func (a *Allow) allowsAddr(addr netip.Addr, port uint16) bool {
	if a == nil {
		return false
	}
	addr = addr.WithZone("").Unmap()
	for _, e := range a.entries {
		if e.host == "" && e.prefix.Contains(addr) && (e.port == 0 || e.port == port) {
			return true
		}
	}
	return false
}
