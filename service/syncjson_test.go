package service

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/history"
)

// A StartSyncExecution answer written by hand is what encoding/json
// writes, byte for byte, whatever its strings hold and whichever members
// are left out.
func TestStartSyncExecutionOutputAppendJSON(t *testing.T) {
	t.Parallel()
	tricky := "a\"b\\c\b\f\n\r\t\x00\x1f\x7f <>& é 😀 \u2028\u2029 \xff\xfe end"
	at := history.EpochTime(time.UnixMilli(1700000000123).UTC())
	whole := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, o := range []*StartSyncExecutionOutput{
		{ExecutionArn: "arn:x", StartDate: at, StopDate: at, Status: "SUCCEEDED"},
		{ExecutionArn: tricky, StateMachineArn: "sm" + tricky, Name: tricky, StartDate: history.EpochTime(whole), StopDate: at,
			Status: "FAILED", Error: &tricky, Cause: &tricky, Input: &tricky, InputDetails: &DataDetails{Included: true},
			Output: &tricky, OutputDetails: &DataDetails{}, TraceHeader: &tricky,
			BillingDetails: &BillingDetails{BilledMemoryUsedInMB: 64, BilledDurationInMilliseconds: 100}},
		{ExecutionArn: "", StartDate: history.EpochTime(time.UnixMilli(-1500)), Status: "", Output: new(string), BillingDetails: &BillingDetails{}},
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(o))
		require.Equal(t, string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), string(o.AppendJSON(nil)))
	}
}
