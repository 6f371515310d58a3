package interp

import (
	"hash/fnv"
	"math/rand/v2"

	"stepwise/asl"
	"stepwise/asl/jsonpath"
	"stepwise/jsonvalue"
)

// scope holds the variables of one frame. Inner frames (Parallel branches,
// Map iterations) read the variables of the frames around them and write
// their own.
type scope struct {
	parent *scope
	vars   map[string]any
	sizes  map[string]int // JSON text size of each variable
	bytes  int            // their sum
}

func (s *scope) get(name string) (any, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

// set sets a variable whose JSON text is size bytes long and returns by
// how much the scope grew.
func (s *scope) set(name string, v any, size int) int {
	if s.vars == nil {
		s.vars = map[string]any{}
		s.sizes = map[string]int{}
	}
	s.vars[name] = v
	grow := size - s.sizes[name]
	s.sizes[name] = size
	s.bytes += grow
	return grow
}

// TimestampFormat is how the context object writes times.
const TimestampFormat = "2006-01-02T15:04:05.000Z"

// env returns the evaluation environment of frame f's current state. mapCtx,
// when set, is the context object's "Map" member.
func (x *Execution) env(f *frame, mapCtx *jsonvalue.Object) *jsonpath.Env {
	if len(x.envSlab) == 0 {
		x.envSlab = takeBlock(x, slabEnv, 32, &envBlocks, &x.first.env)
	}
	e := &x.envSlab[0]
	x.envSlab = x.envSlab[1:]
	*e = jsonpath.Env{
		Input:       f.effInput,
		ContextFunc: f.contextFunc(x, mapCtx),
		Vars:        f.varsFunc(),
		Rand:        x.randFunc(),
		BudgetFunc:  x.meterFunc(),
	}
	return e
}

// contextFunc returns the function that builds the context object of
// frame f's state, with mapCtx as its Map member; the one without is made
// once for the frame.
func (f *frame) contextFunc(x *Execution, mapCtx *jsonvalue.Object) func() any {
	if mapCtx != nil {
		return func() any { return x.contextObject(f, mapCtx) }
	}
	if f.ctxFunc == nil {
		f.ctxFunc = func() any { return x.contextObject(f, nil) }
	}
	return f.ctxFunc
}

// varsFunc returns the function that reads the variables in frame f's
// scope, made once for the frame.
func (f *frame) varsFunc() func(string) (any, bool) {
	if f.varsGet == nil {
		f.varsGet = f.vars.get
	}
	return f.varsGet
}

// randFunc returns x.rand as a function value, made once.
func (x *Execution) randFunc() func() *rand.Rand {
	if x.randGet == nil {
		x.randGet = x.rand
	}
	return x.randGet
}

// contextObject builds the context object ("$$") for frame f's state: an
// Inspection's, if it gives one, with mapCtx as its Map member.
func (x *Execution) contextObject(f *frame, mapCtx *jsonvalue.Object) any {
	if in := x.Opts.Inspect; in != nil && in.Context != nil {
		if mapCtx == nil {
			return in.Context
		}
		c := jsonvalue.NewObject(5)
		if obj, ok := in.Context.(*jsonvalue.Object); ok {
			c = obj.Clone()
		}
		c.Set("Map", mapCtx)
		return c
	}
	if x.ctxExecution == nil {
		e := jsonvalue.NewObject(6)
		e.Set("Id", x.Info.ExecutionArn)
		e.Set("Input", x.Input)
		e.Set("StartTime", x.Info.StartTime.UTC().Format(TimestampFormat))
		e.Set("Name", x.Info.Name)
		e.Set("RoleArn", x.Info.RoleArn)
		e.Set("RedriveCount", jsonvalue.NumberFromInt(int64(x.Info.RedriveCount)))
		x.ctxExecution = e
		m := jsonvalue.NewObject(2)
		m.Set("Id", x.Info.StateMachineArn)
		m.Set("Name", x.Info.StateMachineName)
		x.ctxMachine = m
	}
	c := jsonvalue.NewObject(4)
	c.Set("Execution", x.ctxExecution)
	c.Set("StateMachine", x.ctxMachine)
	if f.state != nil {
		st := jsonvalue.NewObject(3)
		st.Set("Name", f.state.Name)
		st.Set("EnteredTime", f.enteredAt.UTC().Format(TimestampFormat))
		switch f.state.Type {
		case asl.TypeTask, asl.TypeParallel, asl.TypeMap:
			st.Set("RetryCount", jsonvalue.NumberFromInt(int64(f.retryCount)))
		}
		c.Set("State", st)
		if f.state.Type == asl.TypeTask && f.token != "" {
			task := jsonvalue.NewObject(1)
			task.Set("Token", f.token)
			c.Set("Task", task)
		}
	}
	if mapCtx != nil {
		c.Set("Map", mapCtx)
	}
	return c
}

// rand returns the random source of the step: seeded from the execution
// and the number of draws so far, so a replay of the same events draws the
// same numbers.
func (x *Execution) rand() *rand.Rand {
	x.draws++
	h := fnv.New64a()
	h.Write([]byte(x.Info.ExecutionArn))
	return rand.New(rand.NewPCG(h.Sum64(), x.draws))
}
