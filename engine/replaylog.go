package engine

import (
	"fmt"
	"strconv"

	"stepwise/interp"
	"stepwise/jsonvalue"
)

// The replay log
//
// Each committed step stores one entry of its execution's replay log: the
// outside event the step consumed (kind 0 for a start's entry), the
// evaluations it cut short (interp.Mark) and the activities it found
// missing. Replaying the entries in order rebuilds the execution as it
// was. An entry is a JSON object:
//
//	{"kind":3,"id":"t1","output":"{\"a\":1}","error":"E","cause":"C",
//	 "worker":"w","state":"S","by":"ops","marks":[{"eval":2,"steps":5120,"stop":true,"error":"E","cause":"C"}],
//	 "missing":["arn:aws:states:us-east-1:123456789012:activity:gone"]}
//
// with the empty members left out. A task's output is its JSON text, as a
// string. A step that scheduled an activity task a worker was polling for
// handed it out at once: "started" lists those tasks and their workers,
// replayed as TaskStarted steps after the entry's event.
//
//	"started":[{"id":"t2","worker":"w"}]

// entry is one entry of the replay log.
type entry struct {
	Event   interp.Event
	Marks   []interp.Mark
	Missing []string // activities found missing
	// Started are the activity tasks the step scheduled and handed out
	// in the same step, in order.
	Started []handedOut
}

// handedOut is an activity task handed out in the step that scheduled it:
// its id and the worker that took it.
type handedOut struct {
	ID     string
	Worker string
}

// startedEvent is the TaskStarted step of a task handed out in its
// scheduling step.
func (h handedOut) startedEvent() interp.Event {
	return interp.Event{Kind: interp.TaskStarted, ID: h.ID, WorkerName: h.Worker}
}

// stepEntry is the replay log entry of the step x just made, on event ev
// (nil for the start).
func stepEntry(x *interp.Execution, ev *interp.Event) *entry {
	e := &entry{Marks: x.Marks(), Missing: x.MissingActivities()}
	if ev != nil {
		e.Event = *ev
	}
	return e
}

// replay makes x's next step answer as the step of this entry did.
func (e *entry) replay(x *interp.Execution) {
	x.ReplayMarks(e.Marks)
	x.ReplayMissingActivities(e.Missing)
}

// encodeEntry writes a replay log entry.
func encodeEntry(e *entry) []byte {
	ev, marks := &e.Event, e.Marks
	var out string
	n := 64 + len(ev.ID) + len(ev.Error) + len(ev.Cause) + len(ev.WorkerName) + len(ev.State) + len(ev.By)
	withOutput := ev.Kind == interp.TaskSucceeded || ev.Kind == interp.TaskSubmitted || ev.Kind == interp.Skip
	if withOutput {
		out = jsonvalue.String(ev.Output)
		n += len(out) + len(out)/8
	}
	b := make([]byte, 0, n)
	b = append(b, `{"kind":`...)
	b = strconv.AppendInt(b, int64(ev.Kind), 10)
	b = appendMember(b, "id", ev.ID)
	if withOutput {
		b = append(b, `,"output":`...)
		b = jsonvalue.AppendString(b, out)
	}
	b = appendMember(b, "error", ev.Error)
	b = appendMember(b, "cause", ev.Cause)
	b = appendMember(b, "worker", ev.WorkerName)
	b = appendMember(b, "state", ev.State)
	b = appendMember(b, "by", ev.By)
	if r := ev.Rerun; r != nil {
		b = append(b, `,"rerun":{"mode":`...)
		b = jsonvalue.AppendString(b, string(r.Mode))
		b = appendMember(b, "state", r.State)
		if r.Mode == interp.RerunNext {
			b = append(b, `,"output":`...)
			b = jsonvalue.AppendString(b, jsonvalue.String(r.Output))
		}
		b = appendMember(b, "definition", r.Definition)
		if len(r.Warned) > 0 {
			b = append(b, `,"warned":[`...)
			for i, w := range r.Warned {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"name":`...)
				b = jsonvalue.AppendString(b, w.Name)
				b = append(b, `,"input":`...)
				b = jsonvalue.AppendString(b, jsonvalue.String(w.Input))
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	if len(marks) > 0 {
		b = append(b, `,"marks":[`...)
		for i, m := range marks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"eval":`...)
			b = strconv.AppendInt(b, int64(m.Eval), 10)
			b = append(b, `,"steps":`...)
			b = strconv.AppendInt(b, m.Steps, 10)
			if m.Stop {
				b = append(b, `,"stop":true`...)
			}
			b = appendMember(b, "error", m.Error)
			b = appendMember(b, "cause", m.Cause)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(e.Missing) > 0 {
		b = append(b, `,"missing":[`...)
		for i, arn := range e.Missing {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonvalue.AppendString(b, arn)
		}
		b = append(b, ']')
	}
	if len(e.Started) > 0 {
		b = append(b, `,"started":[`...)
		for i, h := range e.Started {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = jsonvalue.AppendString(b, h.ID)
			b = appendMember(b, "worker", h.Worker)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendMember appends the string member name: s, unless s is empty.
func appendMember(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return jsonvalue.AppendString(b, s)
}

// decodeEntry reads an entry of the replay log.
func decodeEntry(b []byte) (*entry, error) {
	v, err := jsonvalue.Parse(b)
	if err != nil {
		return nil, err
	}
	e := entryReader{}
	o := e.object(v)
	ev := interp.Event{
		Kind:       interp.EventKind(e.int(o, "kind")),
		ID:         e.string(o, "id"),
		Error:      e.string(o, "error"),
		Cause:      e.string(o, "cause"),
		WorkerName: e.string(o, "worker"),
		State:      e.string(o, "state"),
		By:         e.string(o, "by"),
	}
	if o.Has("output") {
		if text := e.string(o, "output"); e.err == nil {
			ev.Output, e.err = jsonvalue.ParseString(text)
		}
	}
	if rv, ok := o.Get("rerun"); ok {
		ro := e.object(rv)
		r := &interp.Rerun{Mode: interp.RerunMode(e.string(ro, "mode")), State: e.string(ro, "state"), Definition: e.string(ro, "definition")}
		if ro.Has("output") {
			if text := e.string(ro, "output"); e.err == nil {
				r.Output, e.err = jsonvalue.ParseString(text)
			}
		}
		if ws, ok := ro.Get("warned"); ok {
			list, isList := ws.([]any)
			if !isList {
				e.fail("warned", ws)
			}
			for _, wv := range list {
				wo := e.object(wv)
				w := interp.WarnedState{Name: e.string(wo, "name")}
				if text := e.string(wo, "input"); e.err == nil {
					w.Input, e.err = jsonvalue.ParseString(text)
				}
				r.Warned = append(r.Warned, w)
			}
		}
		ev.Rerun = r
	}
	var marks []interp.Mark
	if ms, ok := o.Get("marks"); ok {
		list, isList := ms.([]any)
		if !isList {
			e.fail("marks", ms)
		}
		for _, mv := range list {
			m := e.object(mv)
			marks = append(marks, interp.Mark{
				Eval:  int(e.int(m, "eval")),
				Steps: e.int(m, "steps"),
				Stop:  e.bool(m, "stop"),
				Error: e.string(m, "error"),
				Cause: e.string(m, "cause"),
			})
		}
	}
	var missing []string
	if ms, ok := o.Get("missing"); ok {
		list, isList := ms.([]any)
		if !isList {
			e.fail("missing", ms)
		}
		for _, a := range list {
			s, ok := a.(string)
			if !ok {
				e.fail("missing", a)
			}
			missing = append(missing, s)
		}
	}
	var started []handedOut
	if ss, ok := o.Get("started"); ok {
		list, isList := ss.([]any)
		if !isList {
			e.fail("started", ss)
		}
		for _, sv := range list {
			so := e.object(sv)
			started = append(started, handedOut{ID: e.string(so, "id"), Worker: e.string(so, "worker")})
		}
	}
	if e.err != nil {
		return nil, e.err
	}
	return &entry{Event: ev, Marks: marks, Missing: missing, Started: started}, nil
}

func decodeEvent(b []byte) (interp.Event, error) {
	en, err := decodeEntry(b)
	if err != nil {
		return interp.Event{}, err
	}
	return en.Event, nil
}

// entryReader reads the members of an entry, keeping the first error.
type entryReader struct{ err error }

func (e *entryReader) fail(name string, v any) {
	switch {
	case e.err != nil:
	case name == "":
		e.err = fmt.Errorf("replay log entry: %s, not an object", jsonvalue.TypeName(v))
	default:
		e.err = fmt.Errorf("replay log entry: member %q is %s", name, jsonvalue.TypeName(v))
	}
}

func (e *entryReader) object(v any) *jsonvalue.Object {
	o, ok := v.(*jsonvalue.Object)
	if !ok {
		e.fail("", v)
		return jsonvalue.NewObject(0)
	}
	return o
}

func (e *entryReader) string(o *jsonvalue.Object, name string) string {
	v, ok := o.Get(name)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		e.fail(name, v)
	}
	return s
}

func (e *entryReader) int(o *jsonvalue.Object, name string) int64 {
	v, ok := o.Get(name)
	if !ok {
		return 0
	}
	n, isNumber := v.(jsonvalue.Number)
	i, isInt := n.Int64()
	if !isNumber || !isInt {
		e.fail(name, v)
	}
	return i
}

func (e *entryReader) bool(o *jsonvalue.Object, name string) bool {
	v, ok := o.Get(name)
	if !ok {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		e.fail(name, v)
	}
	return b
}
