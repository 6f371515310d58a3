package interp

import (
	"stepwise/asl"
	"stepwise/history"
)

// newEvent is emit for the events written at every transition: it makes
// the event of type typ in place, linked to frame f's last event and made
// f's last event, and returns it for the caller to fill in its details.
// (Copying a whole Event, most of it pointers, costs more than the event.)
func (x *Execution) newEvent(f *frame, typ history.EventType) *history.Event {
	if len(x.slab) == cap(x.slab) {
		x.slab = make([]history.Event, 0, x.block(slabEvents, 64))
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
