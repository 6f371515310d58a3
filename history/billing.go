package history

import (
	"math"
	"strings"
)

// StateTransitions counts the state transitions in history events (a
// step's, or a whole history: events with consecutive ids) as AWS counts
// them for ExecutionThrottled and for billing a STANDARD execution: every
// state entered, and every retry of a task (a task scheduled again, not
// right after its state was entered).
func StateTransitions(events []*Event) int {
	n := 0
	for i, ev := range events {
		switch ev.Type {
		case EventTaskScheduled, EventActivityScheduled, EventLambdaFunctionScheduled:
			if prev := previousIn(events, i); prev == nil || !isStateEntered(prev.Type) {
				n++
			}
		default:
			if isStateEntered(ev.Type) {
				n++
			}
		}
	}
	return n
}

// previousIn returns the event events[i] follows (PreviousEventID), when
// it is in events.
func previousIn(events []*Event, i int) *Event {
	j := int(events[i].PreviousEventID - events[0].ID)
	if j >= 0 && j < i && events[j].ID == events[i].PreviousEventID {
		return events[j]
	}
	return nil
}

func isStateEntered(t EventType) bool { return strings.HasSuffix(string(t), "StateEntered") }

// Prices are what AWS charges for Step Functions, in US dollars; the
// defaults are its list prices in us-east-1 (without the free tier).
type Prices struct {
	// Transition is the price of a state transition of a STANDARD
	// execution ($0.025 per 1,000).
	Transition float64
	// ExpressRequest is the price of an EXPRESS execution ($1.00 per
	// million), and ExpressGBSecond that of a GB-second of its billed
	// duration and memory ($0.00001667).
	ExpressRequest  float64
	ExpressGBSecond float64
}

// DefaultPrices are AWS's list prices in us-east-1.
var DefaultPrices = Prices{Transition: 0.000025, ExpressRequest: 0.000001, ExpressGBSecond: 0.00001667}

// Standard is what a STANDARD execution of that many state transitions
// costs on AWS.
func (p Prices) Standard(transitions int) float64 {
	return dollars(float64(transitions) * p.Transition)
}

// Express is what an EXPRESS execution costs on AWS for its billed
// duration (in 100 ms steps) and memory (in 64 MB steps).
func (p Prices) Express(billedMillis, billedMB int64) float64 {
	gbSeconds := float64(billedMillis) / 1000 * float64(billedMB) / 1024
	return dollars(p.ExpressRequest + gbSeconds*p.ExpressGBSecond)
}

// dollars rounds a price to a ten-billionth of a dollar, below which
// floating point only adds noise.
func dollars(v float64) float64 { return math.Round(v*1e10) / 1e10 }

// BilledDuration rounds an EXPRESS execution's duration up to AWS's
// 100 ms billing step (at least 100 ms).
func BilledDuration(millis int64) int64 {
	return max(100, int64(math.Ceil(float64(millis)/100))*100)
}
