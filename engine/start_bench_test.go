package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"stepwise/jsonvalue"
)

// BenchmarkStartExecution starts executions of a one-state machine with a
// 64 KiB input: parsed by the caller (as the service does, having
// validated it) or by the engine.
func BenchmarkStartExecution(b *testing.B) {
	input := `{"items": [` + strings.TrimSuffix(strings.Repeat(`{"id": 12345, "name": "an item of the batch"},`, 1400), ",") + `]}`
	value, err := jsonvalue.ParseString(input)
	if err != nil {
		b.Fatal(err)
	}
	for _, parsed := range []bool{true, false} {
		b.Run(fmt.Sprintf("parsed=%v", parsed), func(b *testing.B) {
			bb := setup(b, 0)
			defer bb.close()
			sm, m := bb.machine(b, "one", `{"StartAt": "S", "States": {"S": {"Type": "Succeed"}}}`)
			b.SetBytes(int64(len(input)))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p := startParams(sm, m, fmt.Sprintf("e%d", i))
				p.Input, p.InputValue, p.InputParsed = input, value, parsed
				if _, err := bb.engine.StartExecution(context.Background(), p); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
