package interp

import (
	"sync"

	"stepwise/asl"
	"stepwise/asl/jsonpath"
	"stepwise/history"
)

// newEvent is emit for the events written at every transition: it makes
// the event of type typ in place, linked to frame f's last event and made
// f's last event, and returns it for the caller to fill in its details.
// (Copying a whole Event, most of it pointers, costs more than the event.)
func (x *Execution) newEvent(f *frame, typ history.EventType) *history.Event {
	if len(x.slab) == cap(x.slab) {
		x.newEventBlock()
	}
	if x.events == nil {
		x.events = make([]*history.Event, 0, x.block(slabEventList, 64))
	}
	x.slab = x.slab[:len(x.slab)+1]
	ev := &x.slab[len(x.slab)-1]
	ev.Type = typ
	ev.ID = x.nextEventID
	x.nextEventID++
	ev.Timestamp = x.now
	ev.PreviousEventID = f.last
	f.last = ev.ID
	x.events = append(x.events, ev)
	return ev
}

// Slabs, for block.
const (
	slabEvents uint8 = 1 << iota
	slabEventList
	slabEntered
	slabExited
	slabEnv
)

// block is the size of a new block of slab, of at most most values. The
// first block is sized for a run through each of the machine's states
// once (two events and two environments for each state, and the start's
// and end's events; an entered and an exited detail for each state), so
// that a short execution does not make and clear blocks it does not
// fill; the next blocks are of the largest size.
func (x *Execution) block(slab uint8, most int) int {
	if x.grown&slab != 0 {
		return most
	}
	x.grown |= slab
	n := len(x.Machine.States)
	if slab == slabEvents || slab == slabEventList || slab == slabEnv {
		n = 2*n + 2
	}
	return min(most, max(8, n))
}

// stateEventTypes holds each state type's entered and exited event types,
// so writing them makes no string.
var stateEventTypes = func() map[asl.StateType][2]history.EventType {
	m := map[asl.StateType][2]history.EventType{}
	for _, t := range []asl.StateType{asl.TypeTask, asl.TypePass, asl.TypeChoice, asl.TypeWait,
		asl.TypeSucceed, asl.TypeFail, asl.TypeParallel, asl.TypeMap} {
		m[t] = [2]history.EventType{history.StateEnteredType(string(t)), history.StateExitedType(string(t))}
	}
	return m
}()

// enteredType returns "<Type>StateEntered" for state type t.
func enteredType(t asl.StateType) history.EventType {
	if e, ok := stateEventTypes[t]; ok {
		return e[0]
	}
	return history.StateEnteredType(string(t))
}

// exitedType returns "<Type>StateExited" for state type t.
func exitedType(t asl.StateType) history.EventType {
	if e, ok := stateEventTypes[t]; ok {
		return e[1]
	}
	return history.StateExitedType(string(t))
}

// The first blocks of events, of entered and exited details and of
// evaluation environments of executions that let them go (Release),
// cleared, for the next ones: an execution's events are most of what it
// allocates.
var (
	eventBlocks   = sync.Pool{New: func() any { return new([]history.Event) }}
	enteredBlocks = sync.Pool{New: func() any { return new([]history.StateEnteredEventDetails) }}
	exitedBlocks  = sync.Pool{New: func() any { return new([]history.StateExitedEventDetails) }}
	envBlocks     = sync.Pool{New: func() any { return new([]jsonpath.Env) }}
)

// firstBlocks are the first blocks an execution took, to let go.
type firstBlocks struct {
	events  *[]history.Event
	entered *[]history.StateEnteredEventDetails
	exited  *[]history.StateExitedEventDetails
	env     *[]jsonpath.Env
}

// takeBlock is a block of n values for slab: its first from pool (a
// cleared block let go of, when large enough), kept in *first; the
// others new.
func takeBlock[T any](x *Execution, slab uint8, most int, pool *sync.Pool, first **[]T) []T {
	firstBlock := x.grown&slab == 0
	n := x.block(slab, most)
	if !firstBlock {
		return make([]T, n)
	}
	p := pool.Get().(*[]T)
	if cap(*p) < n {
		*p = make([]T, n)
	}
	*first = p
	return (*p)[:cap(*p)]
}

// newEventBlock makes x.slab a new, empty block of events.
func (x *Execution) newEventBlock() {
	x.slab = takeBlock(x, slabEvents, 64, &eventBlocks, &x.first.events)[:0]
}

// Release lets the execution's first blocks of events, details and
// environments go to the next executions. Nothing of the events the execution returned, nor
// the execution, may be used after: the engine calls it once an execution
// kept in memory alone (a synchronous one) has ended and its observers
// were told of its steps.
func (x *Execution) Release() {
	releaseBlock(&eventBlocks, &x.first.events)
	releaseBlock(&enteredBlocks, &x.first.entered)
	releaseBlock(&exitedBlocks, &x.first.exited)
	releaseBlock(&envBlocks, &x.first.env)
	x.slab, x.events, x.enteredSlab, x.exitedSlab, x.envSlab = nil, nil, nil, nil, nil
}

func releaseBlock[T any](pool *sync.Pool, first **[]T) {
	p := *first
	if p == nil {
		return
	}
	*first = nil
	clear((*p)[:cap(*p)])
	pool.Put(p)
}
