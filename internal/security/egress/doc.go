// Package egress decides where HTTP Tasks (arn:aws:states:::http:invoke)
// may connect. AWS calls public HTTPS endpoints only; so does Stepwise,
// unless the operator allows more (stepwise serve --http-task-allow).
//
// # Rules
//
// A request passes two checks, each of which names the flag when it
// refuses:
//
//	URL (before the request, and on every redirect)
//	    https://      ──► on to the dial
//	    http://       ──► only to a host the allow list names: a host
//	                      name as written, or an IP literal inside an
//	                      allowed address or network
//	    anything else ──► refused
//	dial (the address actually connected to, after DNS resolution)
//	    a host name the allow list names      ──► dialled as it resolves
//	    else every address tried must be public, or inside an allowed
//	    address or network (net.Dialer's Control hook, so a name that
//	    resolves differently at dial time, DNS rebinding, cannot slip by)
//
// Not public: loopback, private (RFC 1918, fc00::/7), link-local,
// unspecified, multicast, shared (100.64.0.0/10), and the other
// special-purpose ranges of the IANA registries (documentation,
// benchmarking, reserved, 6to4, Teredo, NAT64 of a non-public address...).
//
// # The allow list
//
// Entries are separated by commas (the flag is repeatable too):
//
//	localhost, stub.internal          a host name: any address it resolves to
//	localhost:8443                    ... on that port only
//	127.0.0.1, ::1, [::1]             an address
//	127.0.0.1:9000, [::1]:9000        ... on that port only
//	10.0.0.0/8, fd00::/8              a network
//
// An allowed host, address or network may also be called over plain
// http://. The package never logs; it returns a *RefusedError.
package egress
