package maprun_test

import (
	"testing"

	"stepwise/interp/maprun"
)

// The one tolerance rule, as AWS documents it: a bound set to 0 tolerates
// nothing, neither bound set tolerates nothing, a bound not set does not
// apply, the bounds are exclusive (failing exactly the count or the
// percentage is tolerated), and with both set either one fails the run.
func TestToleranceExceeded(t *testing.T) {
	const u = maprun.Unset
	cases := []struct {
		name          string
		tol           maprun.Tolerance
		failed, total int
		want          bool
	}{
		{"unset, no failure", maprun.None, 0, 10, false},
		{"unset, one failure", maprun.None, 1, 10, true},
		{"unset, no items", maprun.None, 0, 0, false},
		{"count 0, no failure", maprun.Tolerance{Count: 0, Percent: u}, 0, 10, false},
		{"count 0, one failure", maprun.Tolerance{Count: 0, Percent: u}, 1, 10, true},
		{"percent 0, no failure", maprun.Tolerance{Count: u, Percent: 0}, 0, 10, false},
		{"percent 0, one failure", maprun.Tolerance{Count: u, Percent: 0}, 1, 10, true},
		{"count at its bound", maprun.Tolerance{Count: 2, Percent: u}, 2, 10, false},
		{"count past its bound", maprun.Tolerance{Count: 2, Percent: u}, 3, 10, true},
		{"count alone, the default percentage does not apply", maprun.Tolerance{Count: 5, Percent: u}, 5, 5, false},
		{"percent at its bound", maprun.Tolerance{Count: u, Percent: 20}, 2, 10, false},
		{"percent past its bound", maprun.Tolerance{Count: u, Percent: 20}, 3, 10, true},
		{"percent fractional", maprun.Tolerance{Count: u, Percent: 33.3}, 1, 3, true},
		{"percent 100", maprun.Tolerance{Count: u, Percent: 100}, 10, 10, false},
		{"both, count exceeded", maprun.Tolerance{Count: 1, Percent: 50}, 2, 10, true},
		{"both, percent exceeded", maprun.Tolerance{Count: 8, Percent: 10}, 2, 10, true},
		{"both within", maprun.Tolerance{Count: 2, Percent: 20}, 2, 10, false},
		{"both, percent 0 set with a count", maprun.Tolerance{Count: 5, Percent: 0}, 1, 10, true},
	}
	for _, c := range cases {
		if got := c.tol.Exceeded(c.failed, c.total); got != c.want {
			t.Errorf("%s: Exceeded(%d, %d) with %+v = %v, want %v", c.name, c.failed, c.total, c.tol, got, c.want)
		}
	}
}
