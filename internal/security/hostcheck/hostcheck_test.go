package hostcheck

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAllows(t *testing.T) {
	t.Parallel()
	names, err := NewNames("stepwise.internal", ".corp.example", "MyHost.")
	require.NoError(t, err)
	for _, tt := range []struct {
		host string
		ok   bool
	}{
		{"", true}, // HTTP/1.0 without Host
		{"localhost", true},
		{"localhost:8083", true},
		{"LOCALHOST:8083", true},
		{"localhost.:8083", true},
		{"stepwise.localhost:8083", true},
		{"127.0.0.1:8083", true},
		{"127.0.0.1:9000", true}, // a forwarded port
		{"127.0.0.1", true},
		{"[::1]:8083", true},
		{"[::1]", true},
		{"10.0.0.7:8083", true},
		{"[fe80::1%25eth0]:8083", true},
		{"stepwise.internal:8083", true},
		{"Stepwise.Internal", true},
		{"corp.example:443", true},
		{"a.b.corp.example", true},
		{"myhost:8083", true},

		{"rebind.attacker.test:8083", false},
		{"attacker.test", false},
		{"localhost.attacker.test:8083", false},
		{"sync-localhost:8083", false},
		{"127.0.0.1.attacker.test", false},
		{"xcorp.example", false},
		{"stepwise.internal.attacker.test", false},
		{"2130706433:8083", false}, // browsers write 127.0.0.1
	} {
		require.Equal(t, tt.ok, names.Allows(tt.host), tt.host)
	}
	var none *Names
	require.True(t, none.Allows("localhost:1"))
	require.False(t, none.Allows("stepwise.internal:1"))
	anyName, err := NewNames("*")
	require.NoError(t, err)
	require.True(t, anyName.Allows("rebind.attacker.test:8083"))
}

// In a container, the names without a dot are answered too: the service
// names of a compose file or a CI job.
func TestAllowsSingleLabel(t *testing.T) {
	t.Parallel()
	names, err := NewNames("stepwise.internal")
	require.NoError(t, err)
	require.False(t, names.Allows("stepwise:8083"))
	names.AllowSingleLabel()
	for _, tt := range []struct {
		host string
		ok   bool
	}{
		{"stepwise:8083", true},
		{"sfn", true},
		{"Step_Functions-1:8083", true},
		{"stepwise.internal:8083", true},
		{"localhost:8083", true},

		{"evil.example.com", false},
		{"rebind.attacker.test:8083", false},
		{"stepwise.:8083", true},   // a final dot is dropped
		{"2130706433:8083", false}, // browsers write 127.0.0.1
		{":8083", false},
		{"a%2fb:8083", false},
	} {
		require.Equal(t, tt.ok, names.Allows(tt.host), tt.host)
	}
}

func TestParseName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Stepwise.Internal": "stepwise.internal", "host.": "host", ".corp.example": ".corp.example", "*": "*",
		"10.0.0.1": "10.0.0.1", "[::1]": "::1", "under_score": "under_score",
	} {
		got, err := ParseName(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", ".", "host:8083", "http://host", "a..b", "*.example.com", "a b", "héllo", "host/"} {
		_, err := ParseName(bad)
		require.ErrorContains(t, err, "not a host name such as stepwise.internal", bad)
	}
	_, err := NewNames("ok", "bad:1")
	require.ErrorContains(t, err, `"bad:1"`)
}

func TestGuard(t *testing.T) {
	t.Parallel()
	names, err := NewNames("given.example")
	require.NoError(t, err)
	reached := 0
	h := Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ }), names,
		func(r *http.Request) bool { return r.URL.Path == "/healthz" },
		func(w http.ResponseWriter, r *http.Request, message string) {
			http.Error(w, message, http.StatusForbidden)
		})
	serve := func(host, path string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	rec := serve("rebind.attacker.test:8083", "/")
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, `Host "rebind.attacker.test:8083" is not a name of this server: without --credentials it answers requests to localhost, `+
		`to its IP addresses and to the names it is given (DNS rebinding cannot then make another site's pages its own). `+
		"To answer this name, serve with --allowed-host rebind.attacker.test\n", rec.Body.String())
	require.Zero(t, reached)
	require.Equal(t, http.StatusOK, serve("rebind.attacker.test:8083", "/healthz").Code, "an open path")
	require.Equal(t, http.StatusOK, serve("given.example:8083", "/").Code)
	require.Equal(t, http.StatusOK, serve("127.0.0.1:8083", "/").Code)
	require.Equal(t, 3, reached)
}
