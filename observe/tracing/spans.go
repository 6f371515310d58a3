package tracing

import (
	"strings"
	"time"

	"stepwise/history"
)

// event is what a span needs of a history event, copied off the step.
type event struct {
	typ        history.EventType
	id, prev   int64
	at         time.Time
	name       string // the state's (entered, exited), the iteration's Map
	index      int    // a Map iteration's
	resource   string // a task's
	resType    string
	errName    string
	cause      string
	hasFailure bool
	mapRunArn  string
}

// copyEvent keeps what a span needs of ev. Only an event whose type says
// it failed (…Failed, …TimedOut, …Aborted) has a failure's details.
func copyEvent(ev *history.Event) event {
	e := event{typ: ev.Type, id: ev.ID, prev: ev.PreviousEventID, at: ev.Timestamp}
	switch {
	case ev.StateEnteredEventDetails != nil:
		e.name = ev.StateEnteredEventDetails.Name
	case ev.StateExitedEventDetails != nil:
		e.name = ev.StateExitedEventDetails.Name
	case ev.TaskScheduledEventDetails != nil:
		e.resType, e.resource = ev.TaskScheduledEventDetails.ResourceType, ev.TaskScheduledEventDetails.Resource
	case ev.LambdaFunctionScheduledEventDetails != nil:
		e.resType, e.resource = "lambda", ev.LambdaFunctionScheduledEventDetails.Resource
	case ev.ActivityScheduledEventDetails != nil:
		e.resType, e.resource = "activity", ev.ActivityScheduledEventDetails.Resource
	case ev.MapIterationStartedEventDetails != nil:
		e.name, e.index = ev.MapIterationStartedEventDetails.Name, ev.MapIterationStartedEventDetails.Index
	case ev.MapRunStartedEventDetails != nil:
		e.mapRunArn = ev.MapRunStartedEventDetails.MapRunArn
	}
	t := string(ev.Type)
	if !strings.HasSuffix(t, "Failed") && !strings.HasSuffix(t, "TimedOut") && !strings.HasSuffix(t, "Aborted") {
		return e
	}
	e.hasFailure = true
	if d := ev.EvaluationFailedEventDetails; d != nil {
		e.setFailure(d.Error, d.Cause)
	}
	for _, d := range [...]*history.TaskEventDetails{ev.TaskFailedEventDetails, ev.TaskTimedOutEventDetails} {
		if d != nil {
			e.resType, e.resource = d.ResourceType, d.Resource
			e.setFailure(d.Error, d.Cause)
		}
	}
	for _, f := range [...]*history.FailureEventDetails{
		ev.ExecutionFailedEventDetails, ev.ExecutionAbortedEventDetails, ev.ExecutionTimedOutEventDetails,
		ev.MapRunFailedEventDetails, ev.ActivityFailedEventDetails, ev.ActivityTimedOutEventDetails,
		ev.LambdaFunctionFailedEventDetails, ev.LambdaFunctionTimedOutEventDetails,
	} {
		if f != nil {
			e.setFailure(f.Error, f.Cause)
		}
	}
	return e
}

// setFailure keeps a failure's error and cause.
func (e *event) setFailure(errName, cause *string) {
	if errName != nil {
		e.errName = *errName
	}
	if cause != nil {
		e.cause = *cause
	}
}

type nodeKind uint8

const (
	kindExecution nodeKind = iota
	kindRedrive
	kindState
	kindTask
	kindIteration
	kindMapRun
)

// node is an open span.
type node struct {
	kind     nodeKind
	id       SpanID
	parent   *node
	name     string
	start    time.Time
	attrs    []attr
	events   []spanEvent
	links    []spanLink
	state    string // a state's name, the Map of an iteration
	stype    string // a state's type
	attempts int    // a state's tasks scheduled in this entry
	errName  string
	cause    string
	failed   bool
	spanKind spanKind
	ended    bool
	slot     int     // its index in execTrace.open
	ids      []int64 // the latest events whose ctx is it (at most maxCtxPerNode)
	idBuf    [2]int64
	attrBuf  [3]attr
	// refs counts what points to it: its children not let go, and the
	// events whose ctx it is. Once it has ended and refs is 0, nothing
	// does: the builder uses it again (see release).
	refs int32
}

// maxCtxPerNode bounds the events a span is remembered as the context of:
// an event links to the last event of its branch (or to the Map or
// Parallel state's started event, or a sibling's failure), so only a
// span's latest events are linked to later; an older one, forgotten,
// falls back to the execution's span.
const maxCtxPerNode = 32

// execTrace is the spans of one execution being built.
type execTrace struct {
	arn       string
	traceID   TraceID
	eventBase uint64 // the ARN's hash in the ids of events' spans
	root      *node
	ctx       ctxMap  // event id → the span the events after it belong to (none: the root)
	open      []*node // the spans not ended yet
	openBuf   [4]*node
	// ending is set while the execution's end closes its spans: their
	// contexts are kept, for a redrive links to them.
	ending  bool
	invoked map[string]int // tasks scheduled per state name
	remote  SpanContext
	// pending is the spans ended, or no longer an event's ctx, since the
	// last sweep: those nothing points to any more are let go then.
	pending []*node
}

// builder makes the spans of executions' events.
type builder struct {
	// ended is given each span as it ends (to encode: it is not kept).
	ended func(*span)
	// scratch is the open spans an execution's end closes.
	scratch []*node
	// sp and attrs are the span being ended.
	sp    span
	attrs []attr
	// free is the spans' records let go, and freeX the executions'
	// traces, to use again: most of what tracing allocates otherwise.
	free  []*node
	freeX []*execTrace
}

// The most records kept for the next spans and executions.
const (
	maxFreeNodes  = 4096
	maxFreeTraces = 1024
	maxKeptEvents = 64
)

// open starts a span under parent.
func (b *builder) open(x *execTrace, kind nodeKind, id SpanID, parent *node, name string, at time.Time) *node {
	var n *node
	if k := len(b.free); k > 0 {
		n, b.free[k-1] = b.free[k-1], nil
		b.free = b.free[:k-1]
	} else {
		n = new(node)
	}
	n.kind, n.id, n.parent, n.name, n.start = kind, id, parent, name, at
	if parent != nil {
		parent.refs++
	}
	return x.openNode(n)
}

// sweep lets go of the pending spans nothing points to any more (and of
// their ancestors, in turn). It runs between steps, when no walk of the
// spans is under way.
func (b *builder) sweep(x *execTrace) {
	for i, n := range x.pending {
		x.pending[i] = nil
		for n != nil && n != x.root && n.ended && n.refs == 0 {
			p := n.parent
			b.release(n)
			if p == nil {
				break
			}
			p.refs--
			n = p
		}
	}
	x.pending = x.pending[:0]
}

// release keeps a span's record, which nothing points to, for the next.
func (b *builder) release(n *node) {
	events := n.events
	clear(events)
	if cap(events) > maxKeptEvents {
		events = nil
	}
	*n = node{events: events[:0]}
	if len(b.free) < maxFreeNodes {
		b.free = append(b.free, n)
	}
}

// drop lets go of an ended execution's trace, which nothing points to
// any more, and of its spans.
func (b *builder) drop(x *execTrace) {
	x.ctx.unrefAll(x)
	b.sweep(x)
	if r := x.root; r.ended && r.refs == 0 {
		b.release(r)
	}
	// A span never ended (a history the builder did not follow) is left
	// to the garbage collector, with its descendants.
	invoked, pending := x.invoked, x.pending[:0]
	clear(invoked)
	clear(x.openBuf[:])
	*x = execTrace{invoked: invoked, pending: pending}
	if len(b.freeX) < maxFreeTraces {
		b.freeX = append(b.freeX, x)
	}
}

// unref says an event's ctx is no longer n.
func (x *execTrace) unref(n *node) {
	if n == nil {
		return
	}
	n.refs--
	if n.refs == 0 && n.ended {
		x.pending = append(x.pending, n)
	}
}

// newExecTrace starts the spans of an execution: its trace header, when it
// names one, is the remote parent of its root span.
func (b *builder) newExecTrace(arn, stateMachineArn, traceHeader string) *execTrace {
	remote := Parent(arn, traceHeader)
	var x *execTrace
	if k := len(b.freeX); k > 0 {
		x, b.freeX[k-1] = b.freeX[k-1], nil
		b.freeX = b.freeX[:k-1]
	} else {
		x = new(execTrace)
	}
	x.arn, x.traceID, x.eventBase, x.remote = arn, remote.TraceID(), arnHash(seedEvent, arn), remote
	smName := stateMachineArn[strings.LastIndexByte(stateMachineArn, ':')+1:]
	r := b.open(x, kindExecution, ExecutionSpanID(arn), nil, smName, time.Time{})
	r.attrBuf[0], r.attrBuf[1] = strAttr("stepwise.execution.arn", arn), strAttr("stepwise.state_machine.arn", stateMachineArn)
	r.attrs = r.attrBuf[:2]
	x.root = r
	return x
}

// setCtx says which span the events after id belong to. Only what may
// still be linked to is kept: the root is the default, a span's older
// events are forgotten past maxCtxPerNode and all of them when it ends.
func (x *execTrace) setCtx(id int64, n *node) {
	if id < 0 || n == x.root || n == nil {
		return
	}
	if len(n.ids) == maxCtxPerNode {
		x.forget(n, n.ids[0])
		n.ids = append(n.ids[:0], n.ids[1:]...)
	}
	if n.ids == nil {
		n.ids = n.idBuf[:0]
	}
	n.refs++
	x.unref(x.ctx.set(id, n))
	n.ids = append(n.ids, id)
}

// forget drops the context of event id if it is still n.
func (x *execTrace) forget(n *node, id int64) {
	if x.ctx.get(id) == n {
		x.unref(x.ctx.del(id))
	}
}

func stateType(t history.EventType, suffix string) string {
	return strings.TrimSuffix(string(t), suffix)
}

// parentOf is the open span events after id belong to.
func (x *execTrace) parentOf(id int64) *node {
	if n := x.ctx.get(id); n != nil {
		return n
	}
	return x.root
}

func (x *execTrace) openNode(n *node) *node {
	if x.open == nil {
		x.open = x.openBuf[:0]
	}
	n.slot = len(x.open)
	x.open = append(x.open, n)
	return n
}

// closeNode lets an ended span go, exported: the events whose span it was
// are the context of its nearest open ancestor from then on (an iteration
// of a Map starts after the last event of the one before it, and belongs
// to the Map). An ending execution's are kept, for a redrive links to
// them.
func (x *execTrace) closeNode(n *node) {
	if i := n.slot; i < len(x.open) && x.open[i] == n {
		last := x.open[len(x.open)-1]
		x.open[i], last.slot = last, i
		x.open[len(x.open)-1] = nil
		x.open = x.open[:len(x.open)-1]
	}
	if x.ending {
		return
	}
	p := n.parent
	for p != nil && p.ended {
		p = p.parent
	}
	ids := n.ids
	n.ids = nil
	for _, id := range ids {
		if x.ctx.get(id) != n {
			continue
		}
		if p == nil || p == x.root {
			x.unref(x.ctx.del(id))
		} else {
			x.setCtx(id, p)
		}
	}
}

// up walks from n to the nearest node of the kind (and name, when given).
func up(n *node, kind nodeKind, name string) *node {
	for ; n != nil; n = n.parent {
		if n.kind == kind && (name == "" || n.state == name) {
			return n
		}
	}
	return nil
}

// canHold says whether a state's span holds other states' spans.
func canHold(n *node) bool {
	return n.kind != kindState || n.stype == "Map" || n.stype == "Parallel"
}

// apply adds an event to the execution's spans.
func (b *builder) apply(x *execTrace, e *event) {
	cur := x.parentOf(e.prev)
	t := string(e.typ)
	switch {
	case e.typ == history.EventExecutionStarted:
		x.root.start = e.at
		x.setCtx(e.id, x.root)
	case e.typ == history.EventExecutionRedriven:
		n := b.open(x, kindRedrive, eventSpanID(x.eventBase, e.id), x.root, "Redrive", e.at)
		x.ending = false
		x.setCtx(e.id, n)
	case e.typ == history.EventExecutionSucceeded || e.typ == history.EventExecutionFailed ||
		e.typ == history.EventExecutionAborted || e.typ == history.EventExecutionTimedOut:
		x.ending = true
		open := append(b.scratch[:0], x.open...)
		for _, n := range open {
			if n.kind != kindRedrive && n != x.root {
				b.end(x, n, e.at)
			}
		}
		for _, n := range open {
			if n != x.root {
				b.end(x, n, e.at)
			}
		}
		clear(open)
		b.scratch = open[:0]
		x.root.attrs = append(x.root.attrs, strAttr("stepwise.execution.status", statusOf(e.typ)))
		if e.hasFailure {
			b.fail(x.root, e)
		}
		b.end(x, x.root, e.at)
	case strings.HasSuffix(t, "StateEntered"):
		for !canHold(cur) {
			// A state left through a Catch, or its failure, has no
			// StateExited: the next state closes it.
			b.end(x, cur, e.at)
			cur = cur.parent
		}
		st := stateType(e.typ, "StateEntered")
		n := b.open(x, kindState, eventSpanID(x.eventBase, e.id), cur, e.name, e.at)
		n.state, n.stype = e.name, st
		n.attrBuf[0], n.attrBuf[1] = strAttr("stepwise.state.name", e.name), strAttr("stepwise.state.type", st)
		n.attrs = n.attrBuf[:2]
		x.setCtx(e.id, n)
	case strings.HasSuffix(t, "StateExited"):
		n := up(cur, kindState, e.name)
		if n == nil {
			x.setCtx(e.id, cur)
			return
		}
		// Spans opened inside it and never closed (a task's failure
		// caught) end with it.
		for c := cur; c != nil && c != n; c = c.parent {
			b.end(x, c, e.at)
		}
		b.end(x, n, e.at)
		x.setCtx(e.id, n.parent)
	case e.typ == history.EventTaskScheduled || e.typ == history.EventLambdaFunctionScheduled || e.typ == history.EventActivityScheduled:
		st := up(cur, kindState, "")
		name, attempt := "", 0
		if st != nil {
			name, attempt = st.state, st.attempts
			st.attempts++
		}
		spanName := e.resource
		if e.typ == history.EventTaskScheduled {
			// An integration's resource: "lambda:invoke", "states:startExecution.sync:2".
			spanName = e.resType + ":" + e.resource
		}
		if x.invoked == nil {
			x.invoked = map[string]int{}
		}
		inv := x.invoked[name]
		x.invoked[name] = inv + 1
		n := b.open(x, kindTask, TaskSpanID(x.arn, name, inv), cur, spanName, e.at)
		n.state, n.spanKind = name, kindClient
		n.attrs = []attr{
			strAttr("stepwise.task.resource", e.resource), strAttr("stepwise.task.resource_type", e.resType),
			intAttr("stepwise.task.attempt", attempt), intAttr("stepwise.task.invocation", inv),
			strAttr("stepwise.state.name", name),
		}
		if e.typ == history.EventLambdaFunctionScheduled {
			// OpenTelemetry's conventions for a call of a function.
			fn := e.resource[strings.LastIndexByte(e.resource, ':')+1:]
			if parts := strings.Split(e.resource, ":"); len(parts) >= 7 && parts[5] == "function" {
				fn = parts[6]
			}
			n.attrs = append(n.attrs, strAttr("faas.invoked_provider", "aws"), strAttr("faas.invoked_name", fn))
		}
		x.setCtx(e.id, n)
	case e.typ == history.EventTaskStarted || e.typ == history.EventTaskSubmitted ||
		e.typ == history.EventLambdaFunctionStarted || e.typ == history.EventActivityStarted:
		cur.events = append(cur.events, spanEvent{name: t, at: unixNano(e.at)})
		x.setCtx(e.id, cur)
	case e.typ == history.EventTaskSucceeded || e.typ == history.EventTaskFailed || e.typ == history.EventTaskTimedOut ||
		e.typ == history.EventTaskStartFailed || e.typ == history.EventTaskSubmitFailed ||
		e.typ == history.EventLambdaFunctionSucceeded || e.typ == history.EventLambdaFunctionFailed || e.typ == history.EventLambdaFunctionTimedOut ||
		t == "LambdaFunctionStartFailed" || t == "LambdaFunctionScheduleFailed" || t == "ActivityScheduleFailed" ||
		e.typ == history.EventActivitySucceeded || e.typ == history.EventActivityFailed || e.typ == history.EventActivityTimedOut:
		n := up(cur, kindTask, "")
		if n == nil {
			x.setCtx(e.id, cur)
			return
		}
		if e.hasFailure {
			b.fail(n, e)
			if st := up(n, kindState, ""); st != nil {
				b.fail(st, e)
			}
		}
		b.end(x, n, e.at)
		x.setCtx(e.id, n.parent)
	case e.typ == history.EventMapIterationStarted:
		parent := up(cur, kindState, "")
		if parent == nil {
			parent = cur
		}
		n := b.open(x, kindIteration, eventSpanID(x.eventBase, e.id), parent, "Map iteration", e.at)
		n.state = e.name
		n.attrBuf[0], n.attrBuf[1] = strAttr("stepwise.state.name", e.name), intAttr("stepwise.map.iteration.index", e.index)
		n.attrs = n.attrBuf[:2]
		x.setCtx(e.id, n)
	case e.typ == history.EventMapIterationSucceeded || e.typ == history.EventMapIterationFailed || e.typ == history.EventMapIterationAborted:
		n := up(cur, kindIteration, "")
		if n == nil {
			x.setCtx(e.id, cur)
			return
		}
		for c := cur; c != nil && c != n; c = c.parent {
			b.end(x, c, e.at)
		}
		if e.hasFailure {
			b.fail(n, e)
		}
		b.end(x, n, e.at)
		x.setCtx(e.id, n.parent)
	case e.typ == history.EventMapRunStarted:
		n := b.open(x, kindMapRun, MapRunSpanID(e.mapRunArn), cur, "Map run", e.at)
		n.attrBuf[0] = strAttr("stepwise.map_run.arn", e.mapRunArn)
		n.attrs = n.attrBuf[:1]
		x.setCtx(e.id, n)
	case e.typ == history.EventMapRunSucceeded || e.typ == history.EventMapRunFailed || e.typ == history.EventMapRunAborted:
		n := up(cur, kindMapRun, "")
		if n == nil {
			x.setCtx(e.id, cur)
			return
		}
		if e.hasFailure {
			b.fail(n, e)
		}
		b.end(x, n, e.at)
		x.setCtx(e.id, n.parent)
	case strings.HasSuffix(t, "StateFailed") || strings.HasSuffix(t, "StateAborted") || e.typ == history.EventEvaluationFailed:
		// A state that failed (its Catch, or the execution's end, comes
		// next).
		n := up(cur, kindState, "")
		if n != nil {
			for c := cur; c != nil && c != n; c = c.parent {
				b.end(x, c, e.at)
			}
			b.fail(n, e)
			b.end(x, n, e.at)
			x.setCtx(e.id, n.parent)
			return
		}
		x.setCtx(e.id, cur)
	default:
		// MapStateStarted, ParallelStateStarted, their successes, and the
		// rest belong to the state they are in.
		cur.events = append(cur.events, spanEvent{name: t, at: unixNano(e.at)})
		x.setCtx(e.id, cur)
	}
}

func statusOf(t history.EventType) string {
	switch t {
	case history.EventExecutionSucceeded:
		return string(history.StatusSucceeded)
	case history.EventExecutionFailed:
		return string(history.StatusFailed)
	case history.EventExecutionAborted:
		return string(history.StatusAborted)
	}
	return string(history.StatusTimedOut)
}

// fail marks a span failed with the event's error and cause.
func (b *builder) fail(n *node, e *event) {
	n.failed = true
	if e.errName != "" || e.cause != "" || n.errName == "" {
		n.errName, n.cause = e.errName, e.cause
	}
}

// end closes a span (once) and hands it on.
func (b *builder) end(x *execTrace, n *node, at time.Time) {
	if n.ended {
		return
	}
	n.ended = true
	x.closeNode(n)
	if n.refs == 0 {
		x.pending = append(x.pending, n)
	}
	attrs := n.attrs
	if n.kind == kindState && n.attempts > 0 || n.failed {
		attrs = append(b.attrs[:0], n.attrs...)
	}
	if n.kind == kindState && n.attempts > 0 {
		attrs = append(attrs, intAttr("stepwise.state.attempts", n.attempts), intAttr("stepwise.state.retries", n.attempts-1))
	}
	s := &b.sp
	*s = span{}
	if n.failed {
		errName := n.errName
		if errName == "" {
			errName = "States.Failed"
		}
		attrs = append(attrs, strAttr("error.type", errName), strAttr("stepwise.error", n.errName))
		if n.cause != "" {
			attrs = append(attrs, strAttr("stepwise.cause", n.cause))
		}
		s.failed, s.message = true, errName
	}
	if n.parent != nil {
		s.parent = n.parent.id
	} else if n == x.root {
		s.parent = x.remote.SpanID()
	}
	if at.Before(n.start) {
		at = n.start
	}
	kind := n.spanKind
	if kind == kindUnspecified {
		kind = kindInternal
	}
	s.traceID, s.spanID, s.name, s.kind = x.traceID, n.id, n.name, kind
	s.start, s.end = unixNano(n.start), unixNano(at)
	s.attrs, s.events, s.links = attrs, n.events, n.links
	b.ended(s)
	if cap(attrs) <= 64 && len(attrs) > len(n.attrs) {
		b.attrs = attrs[:0]
	}
	*s = span{}
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}
