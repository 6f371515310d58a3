package budget_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/asl/budget"
)

// run counts steps one at a time until the meter fails, and returns the
// error and how many steps it counted.
func run(m *budget.Meter, most int) (error, int) {
	for i := 1; i <= most; i++ {
		if err := m.Step(); err != nil {
			return err, i
		}
	}
	return nil, most
}

func TestStepLimit(t *testing.T) {
	t.Parallel()
	m := budget.New(budget.Limits{Steps: 5000, Time: -1}, nil, nil)
	err, n := run(m, 10000)
	require.EqualError(t, err, "the evaluation took more than its limit of 5000 steps")
	require.Equal(t, 5001, n, "the step past the limit fails, not one later")
	require.Equal(t, err, m.Step(), "a meter past its limit stays failed")
	how, _ := m.End()
	require.Equal(t, budget.NotEnded, how, "a step limit is not an outside end")
}

func TestStepsInBulk(t *testing.T) {
	t.Parallel()
	m := budget.New(budget.Limits{Steps: 100, Time: -1}, nil, nil)
	require.NoError(t, m.Steps(100))
	require.Error(t, m.Steps(1))
}

func TestByteLimit(t *testing.T) {
	t.Parallel()
	m := budget.New(budget.Limits{Bytes: 1000}, nil, nil)
	require.NoError(t, m.Bytes(600))
	require.Equal(t, 400, m.Remaining())
	require.NoError(t, m.Bytes(400))
	err := m.Bytes(1)
	var be *budget.Error
	require.ErrorAs(t, err, &be)
	require.Equal(t, "bytes", be.Limit)
	require.EqualError(t, err, "the evaluation built values larger than its limit of 1000 bytes")
	require.Error(t, m.Bytes(-1<<62), "an overflowing count fails too")
}

func TestNoLimits(t *testing.T) {
	t.Parallel()
	m := budget.New(budget.Limits{Steps: -1, Bytes: -1, Time: -1}, time.Now, nil)
	err, _ := run(m, 3*budget.CheckEvery)
	require.NoError(t, err)
	require.NoError(t, m.Bytes(1<<40))
	var nilMeter *budget.Meter
	require.NoError(t, nilMeter.Step())
	require.NoError(t, nilMeter.Bytes(1<<40))
	how, _ := nilMeter.End()
	require.Equal(t, budget.NotEnded, how)
}

// fakeClock advances by step every time it is read.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time {
	c.t = c.t.Add(c.step)
	return c.t
}

func TestDeadline(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Unix(0, 0), step: time.Second}
	m := budget.New(budget.Limits{Steps: -1, Time: 3 * time.Second}, clock.now, nil)
	err, n := run(m, 100*budget.CheckEvery)
	require.EqualError(t, err, "the evaluation ran longer than its time limit of 3s")
	how, at := m.End()
	require.Equal(t, budget.TimedOut, how)
	require.Equal(t, int64(n), at)
	require.Equal(t, 4*budget.CheckEvery, n, "the clock is read every CheckEvery steps, from the first check")

	// A replay without a clock ends at the same step with the same error.
	r := budget.New(budget.Limits{Steps: -1, Time: 3 * time.Second}, nil, nil)
	r.Replay(how, at)
	rerr, rn := run(r, 100*budget.CheckEvery)
	require.Equal(t, err.Error(), rerr.Error())
	require.Equal(t, n, rn)
}

func TestReplayAfterBulkSteps(t *testing.T) {
	t.Parallel()
	// The original run ended at a count reached by a bulk count: the
	// replay, checking at other counts, ends on the same call.
	clock := &fakeClock{t: time.Unix(0, 0), step: time.Second}
	m := budget.New(budget.Limits{Steps: -1, Time: time.Second}, clock.now, nil)
	calls := 0
	var err error
	for err == nil {
		calls++
		err = m.Steps(777)
	}
	how, at := m.End()
	r := budget.New(budget.Limits{Steps: -1}, nil, nil)
	r.Replay(how, at)
	rcalls := 0
	var rerr error
	for rerr == nil {
		rcalls++
		rerr = r.Steps(777)
	}
	require.Equal(t, calls, rcalls)
}

func TestInterrupt(t *testing.T) {
	t.Parallel()
	stop := false
	m := budget.New(budget.Limits{Steps: -1, Time: -1}, nil, func() bool { return stop })
	err, _ := run(m, 2*budget.CheckEvery)
	require.NoError(t, err)
	stop = true
	r := func() (r any) {
		defer func() { r = recover() }()
		run(m, 2*budget.CheckEvery)
		return nil
	}()
	require.True(t, budget.IsInterrupt(r), "an interrupt unwinds the evaluation: %v", r)
	how, at := m.End()
	require.Equal(t, budget.Interrupted, how)
	require.Equal(t, int64(3*budget.CheckEvery), at)

	// Replayed, the interrupt comes at the same step without being asked.
	rm := budget.New(budget.Limits{Steps: -1, Time: -1}, nil, nil)
	rm.Replay(how, at)
	n := 0
	r = func() (r any) {
		defer func() { r = recover() }()
		for {
			n++
			rm.Step()
		}
	}()
	require.True(t, budget.IsInterrupt(r))
	require.Equal(t, 3*budget.CheckEvery, n)
}

func TestLimitsValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, budget.Limits{}.Validate())
	require.EqualError(t, budget.Limits{Time: time.Microsecond}.Validate(), "evaluation time limit 1µs is below 1ms")
	d := budget.Limits{}.WithDefaults()
	require.Equal(t, budget.Limits{Steps: budget.DefaultSteps, Bytes: budget.DefaultBytes, Time: budget.DefaultTime}, d)
}
