// Package dnstest is a DNS server for tests: every name resolves to one
// IPv4 address, so a test can make a host name point where it likes
// (a name that resolves to a loopback address, say) without touching the
// system's resolver.
package dnstest

import (
	"context"
	"encoding/binary"
	"net"
	"testing"
)

// Resolver starts a DNS server on 127.0.0.1 that answers every A question
// with addr, and every other question (AAAA) with no answer, and returns
// a resolver that asks it only. The server stops when t ends.
func Resolver(t testing.TB, addr [4]byte) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go serve(pc, addr)
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

func serve(pc net.PacketConn, addr [4]byte) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := answer(buf[:n], addr); resp != nil {
			pc.WriteTo(resp, from)
		}
	}
}

// answer builds the response to query q: its ID and question, and for
// an A question one answer with addr. A query it cannot read gets none.
func answer(q []byte, addr [4]byte) []byte {
	end := 12 // past the header: the question's name, label by label
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // the root label, QTYPE, QCLASS
	if len(q) < 12 || end > len(q) {
		return nil
	}
	isA := binary.BigEndian.Uint16(q[end-4:]) == 1
	resp := append([]byte{}, q[:2]...)                      // ID
	resp = append(resp, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0) // a response, recursion available; one question
	resp = append(resp, q[12:end]...)
	if isA {
		resp[7] = 1 // one answer: the name (a pointer to the question's), A, IN, TTL 60, 4 bytes
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
		resp = append(resp, addr[:]...)
	}
	return resp
}
