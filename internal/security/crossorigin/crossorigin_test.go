package crossorigin

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

const host = "api.local:8083"

func request(method string, header http.Header) *http.Request {
	r := httptest.NewRequest(method, "http://"+host+"/", nil)
	for k, v := range header {
		r.Header[k] = v
	}
	return r
}

func TestRule(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name             string
		header           http.Header
		refused, sameOne bool
	}{
		{"an AWS client says nothing", nil, false, false},
		{"the console's page", http.Header{"Origin": {"http://" + host}}, false, true},
		{"the console's page, over TLS", http.Header{"Origin": {"https://" + host}}, false, true},
		{"the console's page, with Sec-Fetch-Site", http.Header{"Origin": {"http://" + host}, "Sec-Fetch-Site": {"same-origin"}}, false, true},
		{"Sec-Fetch-Site alone", http.Header{"Sec-Fetch-Site": {"same-origin"}}, false, true},
		{"typed by the user", http.Header{"Sec-Fetch-Site": {"none"}}, false, false},
		{"another site", http.Header{"Origin": {"http://evil.example"}}, true, false},
		{"another port of the host", http.Header{"Origin": {"http://api.local:1"}}, true, false},
		{"the host without its port", http.Header{"Origin": {"http://api.local"}}, true, false},
		{"the host in capitals", http.Header{"Origin": {"http://API.LOCAL:8083"}}, false, true},
		{"an opaque origin", http.Header{"Origin": {"null"}}, true, false},
		{"an origin that is no URL", http.Header{"Origin": {"http://%zz"}}, true, false},
		{"cross-site", http.Header{"Sec-Fetch-Site": {"cross-site"}}, true, false},
		{"same-site", http.Header{"Sec-Fetch-Site": {"same-site"}}, true, false},
		{"same-site, whatever the Origin", http.Header{"Origin": {"http://" + host}, "Sec-Fetch-Site": {"same-site"}}, true, false},
		{"cross-site, whatever the Origin", http.Header{"Origin": {"http://" + host}, "Sec-Fetch-Site": {"cross-site"}}, true, false},
		{"same-origin, but another Origin", http.Header{"Origin": {"http://evil.example"}, "Sec-Fetch-Site": {"same-origin"}}, true, false},
	} {
		r := request(http.MethodPost, tt.header)
		require.Equal(t, tt.refused, Refused(r), tt.name)
		require.Equal(t, tt.sameOne, SameOrigin(r), tt.name)
	}
}

func TestGuard(t *testing.T) {
	t.Parallel()
	var reached, refusals int
	h := Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ }),
		func(w http.ResponseWriter, r *http.Request) {
			refusals++
			http.Error(w, Message, http.StatusForbidden)
		})
	evil := http.Header{"Origin": {"http://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions, "PROPFIND"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request(method, evil))
		require.Equal(t, http.StatusForbidden, w.Code, method)
		require.Zero(t, reached, method)

		w = httptest.NewRecorder()
		h.ServeHTTP(w, request(method, nil))
		require.Equal(t, http.StatusOK, w.Code, method)
		require.Equal(t, 1, reached, method)
		reached = 0
	}
	require.Equal(t, 6, refusals)
	// Reads pass: another site cannot read the answer.
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, request(method, evil))
		require.Equal(t, http.StatusOK, w.Code, method)
	}
	require.Equal(t, 2, reached)
	require.Equal(t, 6, refusals)
}
