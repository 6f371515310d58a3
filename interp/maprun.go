package interp

import (
	"fmt"

	"stepwise/asl"
	"stepwise/asl/dataflow"
	"stepwise/asl/jsonpath"
	"stepwise/asl/payload"
	"stepwise/awsarn"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp/maprun"
	"stepwise/jsonvalue"
)

// A distributed Map runs its items as child executions of a map run. The
// interpreter works out the children's inputs (ItemSelector, then
// ItemBatcher) and the run's settings, and hands the run over as a task
// (TaskRequest.MapRun) to whoever runs the execution: the engine starts
// real executions, a Driver runs them in-process, both on the map run's
// rules in package maprun. The task's answer is the Map's result (one
// output per child, in order, or what the ResultWriter answered), or the
// map run's failure.

// MapRunRequest is a distributed Map's map run.
type MapRunRequest struct {
	Arn   string // the map run's ARN
	Label string // the Map's Label, or its state name
	// Processor is the children's state machine (the ItemProcessor).
	Processor     *asl.StateMachine
	ExecutionType string // STANDARD or EXPRESS
	// Items are the Map's items when they are at hand; nil when its
	// ItemReader spooled them (Spooled): Count of them, read through an
	// ItemSource. Planner makes the children's inputs of them.
	Items   []any
	Count   int64
	Spooled bool
	// MaxConcurrency bounds the children running at once (0: no bound).
	MaxConcurrency int64
	// Tolerance bounds the items that may fail without failing the run.
	Tolerance maprun.Tolerance
	// Writer is the ResultWriter, evaluated; nil when the state has none.
	Writer *maprun.Writer
	// Redrive is set when the map run is redriven with its execution: the
	// children that did not succeed run again.
	Redrive bool
	// FinishRunning: past its tolerance the run lets its running children
	// end (and starts none) before it fails (PolicyFinishRunning).
	FinishRunning bool

	selector     *itemSelector // nil without an ItemSelector
	batch        *batchConfig  // nil without an ItemBatcher
	payloadLimit int
}

// BatchSize says whether the run batches its items, and how many a batch
// holds when that alone bounds them (0 when bytes do too: the batches are
// known as they are planned).
func (r *MapRunRequest) BatchSize() (batched bool, per int64) {
	if r.batch == nil {
		return false, 0
	}
	if r.batch.maxBytes > 0 {
		return true, 0
	}
	return true, r.batch.maxItems
}

// mapRunArn is the ARN of the map run a Map state starts now:
// arn:…:mapRun:<state machine>/<label>:<id>, the id derived from the
// execution so that a replay finds the same one.
func (x *Execution) mapRunArn(s *asl.State) string {
	x.nextID++
	id := awsarn.DerivedID(fmt.Appendf(nil, "%s\x00map-run\x00%d", x.Info.ExecutionArn, x.nextID))
	return awsarn.Prefix{Region: x.Info.Region, Account: x.Info.Account}.MapRun(x.Info.StateMachineName, mapLabel(s), id)
}

// mapLabel is a Map state's Label, or its name.
func mapLabel(s *asl.State) string {
	if s.Label != "" {
		return s.Label
	}
	return s.Name
}

// startMapRun hands a distributed Map's items to its map run.
// A failure here ends the map run (started already) first.
func (f *frame) startMapRun(x *Execution, env *jsonpath.Env, jenv *payload.JSONataEnv) {
	s := f.state
	fail := func(err error) {
		fl := asFailure(err, s, f.enteredID)
		x.emit(f, history.Event{Type: history.EventMapRunFailed, MapRunFailedEventDetails: failureDetails(fl)})
		f.stateFailed(x, fl)
	}
	req := &MapRunRequest{Arn: f.mapRunArn, Label: mapLabel(s), Processor: s.ItemProcessor, ExecutionType: s.ExecutionType,
		Items: f.items, Count: int64(len(f.items)), MaxConcurrency: int64(f.maxConc), Tolerance: f.tol,
		payloadLimit: x.Opts.PayloadLimit, FinishRunning: x.Opts.Policies.Has(s.Name, PolicyFinishRunning)}
	if f.readSpooled {
		req.Items, req.Count, req.Spooled = nil, f.readCount, true
	}
	if req.ExecutionType == "" {
		req.ExecutionType = asl.TypeStandard
	}
	if s.ItemSelector != nil || (s.JSONata != nil && s.JSONata.ItemSelector != nil) {
		req.selector = f.selectorSnapshot(x, jenv != nil)
	}
	if s.ItemBatcher != nil {
		b, err := f.batcher(env, jenv)
		if err != nil {
			fail(err)
			return
		}
		req.batch = b
	}
	if s.ResultWriter != nil {
		w, err := f.resultWriter(env, jenv)
		if err != nil {
			fail(err)
			return
		}
		req.Writer = w
	}
	f.items = nil
	f.mapReq = req
	f.issueMapRun(x)
}

// issueMapRun asks for the frame's map run (again, on a redrive).
func (f *frame) issueMapRun(x *Execution) {
	id := x.newID("map-run")
	f.block(x, waitMapRun, id)
	x.cmds = append(x.cmds, Command{Kind: RunTask, ID: id, Task: &TaskRequest{StateName: f.state.Name, MapRun: f.mapReq}})
}

// mapRunDone goes on with a distributed Map once its map run answered.
func (f *frame) mapRunDone(x *Execution, ev Event) {
	if ev.Kind == TaskFailed {
		fl := &failure.Failure{Name: ev.Error, Cause: ev.Cause, HasCause: ev.Cause != ""}
		x.emit(f, history.Event{Type: history.EventMapRunFailed, MapRunFailedEventDetails: failureDetails(fl)})
		if f.retrier(fl) < 0 {
			x.emit(f, history.Event{Type: history.EventMapStateFailed})
		}
		f.stateFailed(x, fl)
		return
	}
	x.emit(f, history.Event{Type: history.EventMapRunSucceeded})
	x.emitLinked(f, history.Event{Type: history.EventMapStateSucceeded, PreviousEventID: f.last})
	f.mapReq = nil
	f.exit(x, ev.Output, true)
}

// reviveMapRun redrives a distributed Map whose map run failed: the map
// run runs again, its children that did not succeed only.
func (f *frame) reviveMapRun(x *Execution) {
	x.emit(f, history.Event{Type: history.EventMapRunRedriven,
		MapRunRedrivenEventDetails: &history.MapRunRedrivenEventDetails{MapRunArn: f.mapReq.Arn, RedriveCount: x.Info.RedriveCount}})
	req := *f.mapReq
	req.Redrive = true
	f.mapReq = &req
	f.issueMapRun(x)
}

// batchConfig is a Map state's ItemBatcher, evaluated: a batch holds at
// most maxItems items and maxBytes bytes of items (0: no bound), each
// child's input {"BatchInput": ..., "Items": [...]}.
type batchConfig struct {
	maxItems, maxBytes int64
	input              any // nil without a BatchInput
}

// batcher evaluates a Map state's ItemBatcher.
func (f *frame) batcher(env *jsonpath.Env, jenv *payload.JSONataEnv) (*batchConfig, error) {
	raw, _ := f.state.ItemBatcher.(*jsonvalue.Object)
	count := func(name string) (int64, error) {
		v, ok := raw.Get(name)
		if !ok {
			if p, ok := raw.Get(name + "Path"); ok && env != nil {
				path, _ := p.(string)
				cp, err := jsonpath.Compile(path)
				if err != nil {
					return 0, err
				}
				e := *env
				e.Input = f.effInput
				if v, err = cp.Eval(&e); err != nil {
					return 0, dataflow.InvalidPath(cp, err)
				}
			} else {
				return 0, nil
			}
		} else if t, isText := v.(string); isText && jenv != nil {
			tmpl, errs := payload.CompileJSONata(t)
			if len(errs) > 0 {
				return 0, errs[0]
			}
			var err error
			if v, err = tmpl.Eval(jenv, name); err != nil {
				return 0, err
			}
		}
		n, ok := numberValue(v)
		if !ok || n.Float64() != float64(int64(n.Float64())) || n.Float64() < 0 {
			return 0, failure.Newf(failure.Runtime, "The %s field must be a positive integer, got %s.", name, jsonvalue.String(v))
		}
		return int64(n.Float64()), nil
	}
	b := &batchConfig{}
	var err error
	if b.maxItems, err = count("MaxItemsPerBatch"); err != nil {
		return nil, err
	}
	if b.maxBytes, err = count("MaxInputBytesPerBatch"); err != nil {
		return nil, err
	}
	if b.maxBytes > 256*1024 {
		b.maxBytes = 256 * 1024
	}
	if v, ok := raw.Get("BatchInput"); ok {
		if jenv != nil {
			t, errs := payload.CompileJSONata(v)
			if len(errs) > 0 {
				return nil, errs[0]
			}
			if b.input, err = t.Eval(jenv, "BatchInput"); err != nil {
				return nil, err
			}
		} else {
			t, errs := payload.Compile(v)
			if len(errs) > 0 {
				return nil, errs[0]
			}
			if b.input, err = dataflow.Template(t, f.effInput, env); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// ItemSource reads a map run's spooled items: up to limit of them, in
// order, from index from.
type ItemSource func(from int64, limit int) ([]any, error)

// Planner makes a map run's children, in order: each child's input (an
// item after the ItemSelector, or a batch of them) and its number of
// items. It reads the items as it goes (from the request, or a page at a
// time from an ItemSource when they were spooled), so it holds no more
// than a page and a batch.
type Planner struct {
	r       *MapRunRequest
	src     ItemSource
	next    int64 // the next item to plan
	page    []any
	pageAt  int64
	carry   any // an item (selected) that did not fit its batch
	carried bool
	carryN  int
	buf     []byte
}

// plannerPage is how many spooled items a Planner reads at a time.
const plannerPage = 1000

// Planner returns the planner of the run's children; src reads spooled
// items (unused when the items are at hand).
func (r *MapRunRequest) Planner(src ItemSource) *Planner { return &Planner{r: r, src: src} }

// item returns item i (after the ItemSelector) and its JSON size.
func (p *Planner) item(i int64) (any, int, error) {
	var v any
	if p.r.Spooled {
		if i < p.pageAt || i >= p.pageAt+int64(len(p.page)) {
			page, err := p.src(i, plannerPage)
			if err != nil {
				return nil, 0, err
			}
			if len(page) == 0 {
				return nil, 0, fmt.Errorf("item %d of the map run is missing", i)
			}
			p.page, p.pageAt = page, i
		}
		v = p.page[i-p.pageAt]
	} else {
		v = p.r.Items[i]
	}
	if sel := p.r.selector; sel != nil {
		in, err := sel.eval(i, v, &p.buf)
		if err != nil {
			return nil, 0, asFailure(err, sel.state, sel.enteredID)
		}
		return in, len(p.buf), nil
	}
	if p.r.batch != nil && p.r.batch.maxBytes > 0 {
		p.buf = jsonvalue.Append(p.buf[:0], v)
		return v, len(p.buf), nil
	}
	return v, 0, nil
}

// Next returns the next child's input and its number of items; ok is
// false once every item is planned. A failure (of the ItemSelector) is a
// *failure.Failure.
func (p *Planner) Next() (input any, items int, ok bool, err error) {
	b := p.r.batch
	if b == nil {
		if p.next >= p.r.Count {
			return nil, 0, false, nil
		}
		in, _, err := p.item(p.next)
		if err != nil {
			return nil, 0, false, err
		}
		p.next++
		return in, 1, true, nil
	}
	var batch []any
	size := 0
	if p.carried {
		batch, size, p.carried = append(batch, p.carry), p.carryN, false
	}
	for p.next < p.r.Count {
		in, n, err := p.item(p.next)
		if err != nil {
			return nil, 0, false, err
		}
		p.next++
		n++ // the comma
		if len(batch) > 0 && ((b.maxItems > 0 && int64(len(batch)) >= b.maxItems) || (b.maxBytes > 0 && int64(size+n) > b.maxBytes)) {
			p.carry, p.carryN, p.carried = in, n, true
			break
		}
		batch = append(batch, in)
		size += n
		if b.maxItems > 0 && int64(len(batch)) >= b.maxItems && b.maxBytes == 0 {
			break
		}
	}
	if len(batch) == 0 {
		return nil, 0, false, nil
	}
	in := jsonvalue.NewObject(2)
	if b.input != nil {
		in.Set("BatchInput", b.input)
	}
	in.Set("Items", batch)
	return in, len(batch), true, nil
}

// resultWriter evaluates a Map state's ResultWriter.
func (f *frame) resultWriter(env *jsonpath.Env, jenv *payload.JSONataEnv) (*maprun.Writer, error) {
	raw, _ := f.state.ResultWriter.(*jsonvalue.Object)
	w := &maprun.Writer{OutputType: "JSON", Transformation: "NONE"}
	if v, ok := raw.Get("Resource"); ok {
		w.Resource, _ = v.(string)
	}
	if c, ok := raw.Get("WriterConfig"); ok {
		if obj, ok := c.(*jsonvalue.Object); ok {
			if v, ok := obj.Get("OutputType"); ok {
				w.OutputType, _ = v.(string)
			}
			if v, ok := obj.Get("Transformation"); ok {
				w.Transformation, _ = v.(string)
			}
		}
	}
	var params any
	if jenv != nil {
		if v, ok := raw.Get("Arguments"); ok {
			t, errs := payload.CompileJSONata(v)
			if len(errs) > 0 {
				return nil, errs[0]
			}
			var err error
			if params, err = t.Eval(jenv, "Arguments"); err != nil {
				return nil, err
			}
		}
	} else if v, ok := raw.Get("Parameters"); ok {
		t, errs := payload.Compile(v)
		if len(errs) > 0 {
			return nil, errs[0]
		}
		var err error
		if params, err = dataflow.Template(t, f.effInput, env); err != nil {
			return nil, err
		}
	}
	if obj, ok := params.(*jsonvalue.Object); ok {
		if v, ok := obj.Get("Bucket"); ok {
			w.Bucket, _ = v.(string)
		}
		if v, ok := obj.Get("Prefix"); ok {
			w.Prefix, _ = v.(string)
		}
	}
	if w.Resource != "" && w.Bucket == "" {
		return nil, failure.New(failure.ResultWriterFailed, "The ResultWriter needs a Bucket.")
	}
	return w, nil
}

// spooledMember is the member of an ItemReader's answer that says it
// spooled its items instead of answering with them: {"SpooledItems": n}.
// A reader's own answer is always an array, so nothing else has it.
const spooledMember = "SpooledItems"

// SpooledItems is an ItemReader's answer when it spooled n items for the
// map run (the task's result in the replay log, in place of the items).
func SpooledItems(n int64) any {
	o := jsonvalue.NewObject(1)
	o.Set(spooledMember, jsonvalue.NumberFromInt(n))
	return o
}

// SpooledCount reads an answer made by SpooledItems.
func SpooledCount(v any) (int64, bool) {
	o, ok := v.(*jsonvalue.Object)
	if !ok || o.Len() != 1 {
		return 0, false
	}
	n, ok := o.Get(spooledMember)
	num, isNum := n.(jsonvalue.Number)
	if !ok || !isNum {
		return 0, false
	}
	return num.Int64()
}
