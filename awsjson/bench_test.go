package awsjson_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/awsjson"
	"stepwise/service"
	"stepwise/service/servicetest"
	"stepwise/store/sqlitestore"
)

// BenchmarkSendTaskSuccess is the wire's share of an activity round trip:
// a SendTaskSuccess request with a worker-sized token and output, on an
// engine that does nothing.
func BenchmarkSendTaskSuccess(b *testing.B) {
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, sqlitestore.Memory, sqlitestore.Options{})
	require.NoError(b, err)
	defer drv.Close()
	eng := servicetest.StoreEngine(drv, nil)
	eng.SendTaskSuccessFunc = func(ctx context.Context, token, output string) error { return nil }
	svc, err := service.New(drv, eng, service.Config{})
	require.NoError(b, err)
	h := awsjson.New(svc, nil)
	body := `{"output":"{\"Sent\": 1700000000123456789, \"Step\": 3}","taskToken":"` + strings.Repeat("QWxhZGRpbjpvcGVuIHNlc2FtZQ", 8) + `"}`

	b.ReportAllocs()
	for range b.N {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", awsjson.TargetPrefix+"SendTaskSuccess")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code, w.Body.String())
		}
		_, _ = io.Copy(io.Discard, w.Body)
	}
}
