package jsonpath

import (
	"math/rand/v2"

	"stepwise/asl/budget"
)

// Env is what a path is evaluated against: the roots "$", "$$" and "$name".
type Env struct {
	// Input is the value of "$": the state's effective input, or the value
	// being filtered (ResultSelector reads the task result through "$").
	Input any
	// Context is the value of "$$", the context object. When it is nil and
	// ContextFunc is set, ContextValue builds it on first use, so states
	// that never read "$$" never pay for it.
	Context     any
	ContextFunc func() any
	// Vars returns the value of the variable "$name". Nil means no variable
	// is in scope.
	Vars func(name string) (any, bool)
	// Rand returns the random source of States.UUID and States.MathRandom.
	// An interpreter that replays executions seeds it from the execution so
	// a replay draws the same numbers; nil means a fresh random source.
	Rand func() *rand.Rand
	// Budget bounds the evaluations made in this environment (paths and
	// intrinsic functions); nil bounds nothing. When it is nil and
	// BudgetFunc is set, Meter makes it on first use, so environments
	// that evaluate nothing that counts never pay for one.
	Budget     *budget.Meter
	BudgetFunc func() *budget.Meter
}

// Meter returns the environment's budget, making it on first use.
func (e *Env) Meter() *budget.Meter {
	if e == nil {
		return nil
	}
	if e.Budget == nil && e.BudgetFunc != nil {
		e.Budget = e.BudgetFunc()
	}
	return e.Budget
}

// Root says which value a path starts from.
type Root uint8

const (
	RootInput    Root = iota // $
	RootContext              // $$
	RootVariable             // $name
)

// ContextValue returns the context object, building it on first use.
func (e *Env) ContextValue() any {
	if e.Context == nil && e.ContextFunc != nil {
		e.Context = e.ContextFunc()
	}
	return e.Context
}
