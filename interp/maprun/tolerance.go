package maprun

import "stepwise/failure"

// Unset is a Tolerance bound the state does not set.
const Unset = -1

// Tolerance is a Map state's tolerated failures: ToleratedFailureCount
// and ToleratedFailurePercentage, each Unset when the state has none.
type Tolerance struct {
	Count   int64   // items; Unset: not set
	Percent float64 // 0 to 100; Unset: not set
}

// None is the tolerance of a Map state that sets neither bound.
var None = Tolerance{Count: Unset, Percent: Unset}

// IsSet says whether the state sets either bound.
func (t Tolerance) IsSet() bool { return t.Count >= 0 || t.Percent >= 0 }

// Exceeded reports whether failed items out of total go past the
// tolerance. This is AWS's rule ("Tolerated failure threshold for
// Distributed Map state"): the run fails when the failed items exceed
// the count, or their share of all items exceeds the percentage; with
// both set, when either is exceeded. A bound that is set to 0 tolerates
// no failure, and so does a state that sets neither (AWS's default
// percentage, 0). A bound that is not set does not apply: a count alone
// is not undone by the default percentage.
func (t Tolerance) Exceeded(failed, total int) bool {
	if failed <= 0 {
		return false
	}
	if !t.IsSet() {
		return true
	}
	if t.Count >= 0 && int64(failed) > t.Count {
		return true
	}
	return t.Percent >= 0 && total > 0 && float64(failed)*100/float64(total) > t.Percent
}

// Failure is how a map run (or an inline Map) with too many failed items
// fails.
func Failure() *failure.Failure {
	return failure.New(failure.ExceedToleratedFailure,
		"The specified tolerated failure threshold was exceeded")
}
