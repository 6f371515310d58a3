package interp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"stepwise/asl"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

func mustParse(tb testing.TB, def string) *asl.StateMachine {
	tb.Helper()
	m, diags := asl.Parse([]byte(def))
	if m == nil {
		tb.Fatalf("invalid definition: %v", diags)
	}
	return m
}

var benchInfo = interp.Info{
	ExecutionArn: "arn:aws:states:us-east-1:123456789012:execution:bench:x", Name: "x",
	StateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:bench", StateMachineName: "bench",
	Region: "us-east-1", Account: "123456789012",
}

// chainDefinition is a loop of Pass and Choice states that runs n times
// around: 3 transitions per round.
func chainDefinition() string {
	return `{
  "StartAt": "Init",
  "States": {
    "Init": {"Type": "Pass", "Result": 0, "ResultPath": "$.i", "Next": "Step"},
    "Step": {"Type": "Pass", "Parameters": {"i.$": "States.MathAdd($.i, 1)", "order.$": "$.order", "n.$": "$.n"}, "Next": "More"},
    "More": {"Type": "Choice", "Choices": [{"Variable": "$.i", "NumericLessThanPath": "$.n", "Next": "Step"}], "Default": "Done"},
    "Done": {"Type": "Succeed"}
  }
}`
}

// BenchmarkChain measures state transitions per second through a Pass /
// Choice loop on a ~200-byte input, with the history recorded.
func BenchmarkChain(b *testing.B) {
	benchChain(b, chainDefinition())
}

// benchChain runs a loop definition of 1,000 rounds over a ~200-byte
// input and reports transitions per second.
func benchChain(b *testing.B, def string) {
	m := mustParse(b, def)
	const rounds = 1000
	input, _ := jsonvalue.ParseString(fmt.Sprintf(`{"n": %d, "order": {"id": "o-12345", "customer": "Ada Lovelace", "items": [{"sku": "A1", "qty": 2, "price": 9.99}, {"sku": "B7", "qty": 1, "price": 120.5}], "note": "leave at the door, please"}}`, rounds))
	start := time.Unix(1700000000, 0)
	transitions := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		x := interp.New(m, benchInfo, input, interp.Options{})
		events, _, _ := x.Start(start)
		if x.Status != "SUCCEEDED" {
			b.Fatalf("status %s: %v", x.Status, x.Failure)
		}
		transitions += len(events) / 2
	}
	b.ReportMetric(float64(transitions)/b.Elapsed().Seconds(), "transitions/s")
}

// BenchmarkMap measures an inline Map of 1,000 items with 3 states each.
func BenchmarkMap(b *testing.B) {
	m := mustParse(b, `{
  "StartAt": "Fan",
  "States": {
    "Fan": {
      "Type": "Map",
      "ItemsPath": "$.items",
      "ItemProcessor": {
        "StartAt": "A",
        "States": {
          "A": {"Type": "Pass", "Parameters": {"v.$": "$.v", "twice.$": "States.MathAdd($.v, $.v)"}, "Next": "B"},
          "B": {"Type": "Choice", "Choices": [{"Variable": "$.twice", "NumericGreaterThan": 1000, "Next": "Big"}], "Default": "Small"},
          "Big": {"Type": "Pass", "Result": "big", "ResultPath": "$.size", "End": true},
          "Small": {"Type": "Pass", "Result": "small", "ResultPath": "$.size", "End": true}
        }
      },
      "End": true
    }
  }
}`)
	var sb strings.Builder
	sb.WriteString(`{"items": [`)
	for i := 0; i < 1000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"v": %d}`, i)
	}
	sb.WriteString(`]}`)
	input, _ := jsonvalue.ParseString(sb.String())
	start := time.Unix(1700000000, 0)
	transitions := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		x := interp.New(m, benchInfo, input, interp.Options{})
		x.Start(start)
		if x.Status != "SUCCEEDED" {
			b.Fatalf("status %s: %v", x.Status, x.Failure)
		}
		transitions += 1000*3 + 1
	}
	b.ReportMetric(float64(transitions)/b.Elapsed().Seconds(), "transitions/s")
}

// BenchmarkChainJSONata is BenchmarkChain written in JSONata with an Assign
// counter: each round evaluates an Assign, an Output and a Condition.
func BenchmarkChainJSONata(b *testing.B) {
	benchChain(b, `{
  "QueryLanguage": "JSONata",
  "StartAt": "Init",
  "States": {
    "Init": {"Type": "Pass", "Assign": {"i": 0}, "Next": "Step"},
    "Step": {"Type": "Pass", "Assign": {"i": "{% $i + 1 %}"}, "Output": {"order": "{% $states.input.order %}", "n": "{% $states.input.n %}"}, "Next": "More"},
    "More": {"Type": "Choice", "Choices": [{"Condition": "{% $i < $states.input.n %}", "Next": "Step"}], "Default": "Done"},
    "Done": {"Type": "Succeed"}
  }
}`)
}

// BenchmarkShort runs whole executions of the 10-state Pass/Choice machine
// of "stepwise bench" (a StartSyncExecution's work in the interpreter):
// the cost of an execution's setup and end as much as of its states.
func BenchmarkShort(b *testing.B) {
	var states []string
	for i := 1; i <= 5; i++ {
		next := fmt.Sprintf("P%d", i+1)
		if i == 5 {
			next = "Done"
		}
		states = append(states,
			fmt.Sprintf(`"P%d": {"Type": "Pass", "Parameters": {"order.$": "$.order", "step": %d}, "Next": "C%d"}`, i, i, i),
			fmt.Sprintf(`"C%d": {"Type": "Choice", "Choices": [{"Variable": "$.step", "NumericEquals": %d, "Next": %q}], "Default": %q}`, i, i, next, next))
	}
	m := mustParse(b, `{"StartAt": "P1", "States": {`+strings.Join(states, ",")+`, "Done": {"Type": "Succeed"}}}`)
	const text = `{"order": {"id": "o-12345", "customer": "Ada Lovelace", "items": [{"sku": "A1", "qty": 2}, {"sku": "B7", "qty": 1}], "note": "leave at the door"}}`
	input, _ := jsonvalue.ParseString(text)
	start := time.Unix(1700000000, 0)
	b.ReportAllocs()
	for b.Loop() {
		x := interp.New(m, benchInfo, input, interp.Options{})
		x.InputText = text
		if _, _, err := x.Start(start); err != nil || x.Status != "SUCCEEDED" {
			b.Fatalf("status %s: %v %v", x.Status, x.Failure, err)
		}
		x.Release() // as the engine does once a sync execution ended
	}
}
