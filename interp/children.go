package interp

import (
	"errors"
	"strings"

	"stepwise/asl"
	"stepwise/asl/dataflow"
	"stepwise/asl/jsonpath"
	"stepwise/asl/payload"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/interp/maprun"
	"stepwise/jsonvalue"
)

// execChildren starts a Parallel or Map state: it works out the children's
// inputs and starts as many as it may.
func (f *frame) execChildren(x *Execution, env *jsonpath.Env) {
	s := f.state
	if env != nil {
		env.Input = f.effInput
	}
	f.children, f.results, f.items = nil, nil, nil
	f.nextChild, f.running, f.failed, f.childFail = 0, 0, 0, nil
	f.maxConc, f.tol = 0, maprun.None
	f.mapRun = false
	f.mapReq, f.liveSel = nil, nil

	var jenv *payload.JSONataEnv
	if env == nil {
		jenv = x.jenv(f, nil, "", nil)
	}
	if s.Type == asl.TypeParallel {
		in := f.effInput
		if jenv != nil && s.JSONata.Arguments != nil {
			var err error
			if in, err = s.JSONata.Arguments.Eval(jenv, "Arguments"); err != nil {
				f.startFailedJSONata(x, err)
				return
			}
		} else if jenv == nil && s.Parameters != nil {
			var err error
			if in, err = s.Parameters.Eval(env); err != nil {
				f.stateFailed(x, asFailure(err, s, f.enteredID))
				return
			}
		}
		if (jenv != nil && s.JSONata.Arguments != nil) || (jenv == nil && s.Parameters != nil) {
			if _, ok := x.textLimit(in, x.Opts.PayloadLimit); !ok {
				f.stateFailed(x, dataLimit(s))
				return
			}
		}
		f.startedID = x.emit(f, history.Event{Type: history.EventParallelStateStarted})
		f.items = make([]any, len(s.Branches))
		for i := range f.items {
			f.items[i] = in
		}
		f.results = make([]any, len(s.Branches))
		if f.standInChildren(x) {
			return
		}
		f.wait = waitChildren
		x.push(func() { f.pump(x) })
		return
	}

	reading := s.ItemReader != nil && x.Opts.Inspect == nil
	if reading && !f.readDone {
		// A distributed Map reads its items first: the map run starts,
		// and the items come back as the answer of a reader task.
		f.mapRun = true
		f.startedID = x.emit(f, history.Event{Type: history.EventMapStateStarted,
			MapStateStartedEventDetails: &history.MapStateStartedEventDetails{Length: 0}})
		f.mapRunArn = x.mapRunArn(s)
		x.emit(f, history.Event{Type: history.EventMapRunStarted,
			MapRunStartedEventDetails: &history.MapRunStartedEventDetails{MapRunArn: f.mapRunArn}})
		req, fl := f.readerRequest(x, env, jenv)
		if fl != nil {
			f.readerFailed(x, fl)
			return
		}
		id := x.newID("item-reader")
		f.block(x, waitReader, id)
		req.Invocation = x.invoke(s.Name)
		x.cmds = append(x.cmds, Command{Kind: RunTask, ID: id, Task: req})
		return
	}
	// A failure after the items were read ends the map run first.
	failed := func(fl *failure.Failure) {
		if reading {
			x.emit(f, history.Event{Type: history.EventMapRunFailed, MapRunFailedEventDetails: failureDetails(fl)})
		}
		f.stateFailed(x, fl)
	}
	arr, mc, err := f.mapItems(x, env, jenv)
	var bare *itemsNotArray
	switch {
	case errors.As(err, &bare):
		failed(bare.Failure)
		return
	case err != nil && jenv != nil:
		f.startFailedJSONata(x, err)
		return
	case err != nil:
		failed(asFailure(err, s, f.enteredID))
		return
	}
	f.maxConc = int(mc)
	f.items = arr
	f.results = make([]any, len(arr))
	f.mapRun = s.ProcessorMode == "DISTRIBUTED" || reading
	if !reading {
		f.startedID = x.emit(f, history.Event{Type: history.EventMapStateStarted,
			MapStateStartedEventDetails: &history.MapStateStartedEventDetails{Length: len(arr)}})
	}
	if s.ToleratedCount != nil {
		var n int64
		var err error
		if jenv != nil {
			n, _, err = jsonataInt(s.ToleratedCount, s.JSONata.ToleratedCount, "ToleratedFailureCount", 0, jenv)
		} else {
			n, _, err = intField(&IntFieldSpec{s.ToleratedCount, "ToleratedFailureCountPath"}, env)
		}
		if err != nil {
			failed(asFailure(err, s, f.enteredID))
			return
		}
		if n < 0 {
			failed(asFailure(failure.New(failure.Runtime, "ToleratedFailureCount cannot be negative."), s, f.enteredID))
			return
		}
		f.tol.Count = n
	}
	if s.TolerancePercent != nil {
		n, err := percentField(s.TolerancePercent, env, jenv, s.JSONata)
		if err != nil {
			failed(asFailure(err, s, f.enteredID))
			return
		}
		f.tol.Percent = n
	}
	if ins := x.inspector(); ins != nil {
		if err := f.inspectItems(x); err != nil {
			f.stateFailed(x, asFailure(err, s, f.enteredID))
			return
		}
		ins.Note(s, MaxConcurrency, jsonvalue.NumberFromInt(mc))
		if s.ToleratedCount != nil {
			ins.Note(s, ToleratedFailureCount, jsonvalue.NumberFromInt(f.tol.Count))
		}
		if f.tol.Percent >= 0 {
			ins.Note(s, ToleratedFailurePercentage, jsonvalue.NumberFromFloat(f.tol.Percent))
		}
		f.standInChildren(x)
		return
	}
	if f.mapRun {
		if !reading {
			f.mapRunArn = x.mapRunArn(s)
			x.emit(f, history.Event{Type: history.EventMapRunStarted,
				MapRunStartedEventDetails: &history.MapRunStartedEventDetails{MapRunArn: f.mapRunArn}})
		}
		f.startMapRun(x, env, jenv)
		return
	}
	f.wait = waitChildren
	x.push(func() { f.pump(x) })
}

func percentField(fld *asl.IntField, env *jsonpath.Env, jenv *payload.JSONataEnv, j *asl.JSONataFields) (float64, error) {
	var v any
	var path string
	switch {
	case jenv != nil && j.TolerancePercent != nil:
		var err error
		if v, err = j.TolerancePercent.Eval(jenv, "ToleratedFailurePercentage"); err != nil {
			return 0, err
		}
		if _, ok := v.(jsonvalue.Number); !ok {
			return 0, unexpectedType(j.TolerancePercent, "ToleratedFailurePercentage", "number", v)
		}
	case fld.Number != nil:
		v = jsonvalue.NumberFromFloat(*fld.Number)
	case fld.Value != nil:
		v = jsonvalue.NumberFromInt(*fld.Value)
	case fld.Path != nil:
		var err error
		if v, err = fld.Path.Eval(env); err != nil {
			return 0, dataflow.InvalidPath(fld.Path, err)
		}
		path = fld.Path.String()
	default:
		return -1, nil
	}
	n, ok := numberValue(v)
	if !ok {
		return 0, failure.Newf(failure.Runtime,
			"The ToleratedFailurePercentagePath field refers to value %q which is not a valid float: %s", scalarText(v), path)
	}
	p := n.Float64()
	if p < 0 || p > 100 {
		return 0, failure.New(failure.Runtime, "ToleratedFailurePercentage must be between 0 and 100.")
	}
	return p, nil
}

// mapItems works out a Map state's items and MaxConcurrency: from ItemsPath
// and MaxConcurrencyPath in JSONPath (env), from Items and expressions in
// JSONata (jenv). Under an Inspection, the items an ItemReader reads are
// the ones given (nil when not known).
func (f *frame) mapItems(x *Execution, env *jsonpath.Env, jenv *payload.JSONataEnv) ([]any, int64, error) {
	s := f.state
	items := f.effInput
	reader := s.ItemReader != nil && x.Opts.Inspect != nil
	if f.readDone {
		// Items read by an ItemReader are the items: ItemsPath and Items
		// do not apply to them.
		if jenv != nil {
			mc, _, err := jsonataInt(s.MaxConcurrency, s.JSONata.MaxConcurrency, "MaxConcurrency", 0, jenv)
			return f.readItems, mc, err
		}
		mc, _, err := intField(&IntFieldSpec{s.MaxConcurrency, "MaxConcurrencyPath"}, env)
		if err == nil && mc < 0 {
			err = failure.Newf(failure.Runtime, "Expected non-negative integer for MaxConcurrency, got '%d' instead.", mc)
		}
		return f.readItems, mc, err
	}
	if jenv != nil {
		if t := s.JSONata.Items; t != nil && !reader {
			v, err := t.Eval(jenv, "Items")
			if err != nil {
				return nil, 0, err
			}
			arr, ok := v.([]any)
			if !ok {
				return nil, 0, unexpectedType(t, "Items", "array", v)
			}
			items = arr
		}
		if reader {
			items = x.Opts.Inspect.ReaderItems
		} else if arr, ok := items.([]any); ok {
			items = arr
		} else {
			return nil, 0, failure.Newf(failure.QueryEvaluationError,
				"Map state input must be an array but was: %s", jsonvalue.String(items))
		}
		mc, _, err := jsonataInt(s.MaxConcurrency, s.JSONata.MaxConcurrency, "MaxConcurrency", 0, jenv)
		arr, _ := items.([]any)
		return arr, mc, err
	}
	var arr []any
	switch {
	case reader:
		arr = x.Opts.Inspect.ReaderItems
	default:
		path := "$"
		if s.ItemsPath != nil {
			v, err := s.ItemsPath.Eval(env)
			if err != nil {
				return nil, 0, dataflow.InvalidPath(s.ItemsPath, err)
			}
			// AWS names a context path with one "$".
			items, path = v, s.ItemsPath.String()
			if strings.HasPrefix(path, "$$") {
				path = path[1:]
			}
		}
		var ok bool
		if arr, ok = items.([]any); !ok {
			return nil, 0, &itemsNotArray{failure.Newf(failure.Runtime,
				"Reference path \"%s\" must point to array.", path)}
		}
	}
	mc, _, err := intField(&IntFieldSpec{s.MaxConcurrency, "MaxConcurrencyPath"}, env)
	if err == nil && mc < 0 {
		err = failure.Newf(failure.Runtime, "Expected non-negative integer for MaxConcurrency, got '%d' instead.", mc)
	}
	return arr, mc, err
}

// itemsNotArray is the failure of a JSONPath Map state whose items are not
// an array. AWS reports it as it is, without naming the state.
type itemsNotArray struct{ *failure.Failure }

// pump starts children while the concurrency limit allows, and completes
// the state once every child has ended.
func (f *frame) pump(x *Execution) {
	if f.done || f.aborted || f.wait != waitChildren || x.Status != history.StatusRunning {
		return
	}
	s := f.state
	if f.childFail != nil && f.running > 0 && x.Opts.Policies.Has(s.Name, PolicyFinishRunning) {
		return // the children running end first; none starts
	}
	if f.childFail != nil {
		fl := f.childFail
		f.childFail = nil
		f.abortChildren(x, f.failedAt)
		f.running = 0
		f.wait = waitNone
		if f.retrier(fl) < 0 {
			typ := history.EventParallelStateFailed
			if s.Type == asl.TypeMap {
				typ = history.EventMapStateFailed
			}
			x.emit(f, history.Event{Type: typ})
		}
		f.stateFailed(x, fl)
		x.push(func() { f.run(x) })
		return
	}
	n := len(f.items)
	if f.nextChild < n && (f.maxConc <= 0 || f.running < f.maxConc) {
		i := f.nextChild
		f.nextChild++
		c, err := f.newChild(x, i)
		if err != nil {
			f.wait = waitNone
			f.stateFailed(x, asFailure(err, s, f.enteredID))
			x.push(func() { f.run(x) })
			return
		}
		f.running++
		f.children = append(f.children, c)
		x.push(func() { f.pump(x) })
		x.push(func() { c.run(x) })
		return
	}
	if f.nextChild == n && f.running == 0 {
		f.wait = waitNone
		f.childrenDone(x)
		x.push(func() { f.run(x) })
	}
}

// newChild creates the frame for branch or item i and announces it.
func (f *frame) newChild(x *Execution, i int) (*frame, error) {
	s := f.state
	c := &frame{parent: f, index: i, vars: &scope{parent: f.vars}}
	if s.Type == asl.TypeParallel {
		c.kind = branchFrame
		c.machine = s.Branches[i]
		c.last = f.startedID
		c.next, c.nextInput = c.machine.StartAt, f.items[i]
		return c, nil
	}
	c.kind = iterationFrame
	c.machine = s.ItemProcessor
	in, text, err := f.itemInput(x, i)
	if err != nil {
		return nil, err
	}
	c.inputText = text
	c.last = x.emit(f, history.Event{Type: history.EventMapIterationStarted,
		MapIterationStartedEventDetails: &history.MapIterationEventDetails{Name: s.Name, Index: i}})
	c.next, c.nextInput = c.machine.StartAt, in
	return c, nil
}

// itemInput is the input of item i of an inline Map state: the item,
// shaped by the ItemSelector when the state has one (then text is its
// JSON text), evaluated on the execution's step (frame.selector).
func (f *frame) itemInput(x *Execution, i int) (in any, text string, err error) {
	s := f.state
	if s.ItemSelector == nil && (s.JSONata == nil || s.JSONata.ItemSelector == nil) {
		return f.items[i], "", nil
	}
	if in, err = f.selector(x).eval(int64(i), f.items[i], &x.buf); err != nil {
		return nil, "", err
	}
	return in, string(x.buf), nil
}

// childDone records the end of child c.
func (f *frame) childDone(x *Execution, c *frame) {
	if f.done || f.aborted || c.aborted {
		return
	}
	s := f.state
	f.running--
	isMap := s.Type == asl.TypeMap
	if c.failure != nil {
		if isMap {
			x.emitLinked(f, history.Event{Type: history.EventMapIterationFailed, PreviousEventID: c.last,
				MapIterationFailedEventDetails: &history.MapIterationEventDetails{Name: s.Name, Index: c.index}})
		}
		f.last = c.last
		f.failed++
		if s.Type == asl.TypeMap && !f.tol.Exceeded(f.failed, len(f.items)) {
			f.results[c.index] = nil
		} else {
			// AWS tears down the branch or iteration that failed the
			// state: a Task state that failed it is aborted as well.
			if c.state != nil && c.state.Type == asl.TypeTask {
				x.emitLinked(f, history.Event{Type: history.EventTaskStateAborted, PreviousEventID: c.last})
			}
			if f.childFail == nil {
				f.childFail, f.failedAt = c.failure, c.last
			}
		}
		x.push(func() { f.pump(x) })
		return
	}
	f.results[c.index] = c.output
	f.last = c.last
	if isMap {
		id := x.emitLinked(f, history.Event{Type: history.EventMapIterationSucceeded, PreviousEventID: c.last,
			MapIterationSucceededEventDetails: &history.MapIterationEventDetails{Name: s.Name, Index: c.index}})
		if f.nextChild == len(f.items) && f.running == 0 {
			f.last = id
		}
	}
	x.push(func() { f.pump(x) })
}

// childrenDone completes a Parallel or Map state whose children all ended.
func (f *frame) childrenDone(x *Execution) {
	s := f.state
	typ := history.EventParallelStateSucceeded
	if s.Type == asl.TypeMap {
		typ = history.EventMapStateSucceeded
	}
	x.emitLinked(f, history.Event{Type: typ, PreviousEventID: f.last})
	results := f.results
	f.children, f.items, f.results = nil, nil, nil
	f.exit(x, results, true)
}

// readerRequest evaluates a Map state's ItemReader: its Parameters (or
// Arguments) and ReaderConfig, MaxItems or MaxItemsPath included.
func (f *frame) readerRequest(x *Execution, env *jsonpath.Env, jenv *payload.JSONataEnv) (*TaskRequest, *failure.Failure) {
	s := f.state
	raw, _ := s.ItemReader.(*jsonvalue.Object)
	req := &TaskRequest{StateName: s.Name, Reader: &ReaderConfig{InputType: "JSON", CSVHeaderLocation: "FIRST_ROW", CSVDelimiter: "COMMA",
		Spool: f.mapRunArn}}
	if v, ok := raw.Get("Resource"); ok {
		req.Resource, _ = v.(string)
	}
	fail := func(err error) *failure.Failure { return asFailure(err, s, f.enteredID) }
	if jenv != nil {
		if v, ok := raw.Get("Arguments"); ok {
			t, errs := payload.CompileJSONata(v)
			if len(errs) > 0 {
				return nil, fail(errs[0])
			}
			args, err := t.Eval(jenv, "Arguments")
			if err != nil {
				return nil, fail(err)
			}
			req.Parameters = args
		}
	} else if v, ok := raw.Get("Parameters"); ok {
		t, errs := payload.Compile(v)
		if len(errs) > 0 {
			return nil, fail(errs[0])
		}
		params, err := dataflow.Template(t, f.effInput, env)
		if err != nil {
			return nil, fail(err)
		}
		req.Parameters = params
	}
	cfgV, _ := raw.Get("ReaderConfig")
	cfg, _ := cfgV.(*jsonvalue.Object)
	if cfg == nil {
		return req, nil
	}
	rc := req.Reader
	str := func(name string, into *string) {
		if v, ok := cfg.Get(name); ok {
			if t, ok := v.(string); ok {
				*into = t
			}
		}
	}
	str("InputType", &rc.InputType)
	str("CSVHeaderLocation", &rc.CSVHeaderLocation)
	str("CSVDelimiter", &rc.CSVDelimiter)
	str("ManifestType", &rc.ManifestType)
	str("ItemsPointer", &rc.ItemsPointer)
	str("Transformation", &rc.Transformation)
	if v, ok := cfg.Get("CSVHeaders"); ok {
		arr, _ := v.([]any)
		for _, h := range arr {
			t, _ := h.(string)
			rc.CSVHeaders = append(rc.CSVHeaders, t)
		}
	}
	var max any
	if v, ok := cfg.Get("MaxItems"); ok {
		max = v
		if t, isText := v.(string); isText && jenv != nil {
			tmpl, errs := payload.CompileJSONata(t)
			if len(errs) > 0 {
				return nil, fail(errs[0])
			}
			var err error
			if max, err = tmpl.Eval(jenv, "MaxItems"); err != nil {
				return nil, fail(err)
			}
		}
	} else if v, ok := cfg.Get("MaxItemsPath"); ok && env != nil {
		path, _ := v.(string)
		p, err := jsonpath.Compile(path)
		if err != nil {
			return nil, fail(err)
		}
		e := *env
		e.Input = f.effInput
		if max, err = p.Eval(&e); err != nil {
			return nil, fail(dataflow.InvalidPath(p, err))
		}
	}
	if max != nil {
		n, ok := numberValue(max)
		if !ok || n.Float64() != float64(int64(n.Float64())) {
			return nil, failure.New(failure.ItemReaderFailed, "field MaxItems must be a positive integer")
		}
		if n.Float64() < 0 {
			return nil, failure.New(failure.ItemReaderFailed, "field MaxItems must be positive")
		}
		rc.MaxItems = int64(n.Float64())
	}
	return req, nil
}

// readerDone goes on with a Map state once its ItemReader answered: the
// state runs again from its start with the items read, or fails.
func (f *frame) readerDone(x *Execution, ev Event) {
	if ev.Kind == TaskFailed {
		f.readerFailed(x, &failure.Failure{Name: ev.Error, Cause: ev.Cause, HasCause: ev.Cause != ""})
		return
	}
	if n, ok := SpooledCount(ev.Output); ok {
		f.readItems, f.readDone, f.readSpooled, f.readCount = nil, true, true, n
		f.exec(x)
		return
	}
	items, ok := ev.Output.([]any)
	if !ok {
		f.readerFailed(x, failure.New(failure.ItemReaderFailed, "The item reader did not read an array of items."))
		return
	}
	f.readItems, f.readDone = items, true
	f.exec(x)
}

// readerFailed fails a Map state whose ItemReader failed: its map run
// fails, then the state.
func (f *frame) readerFailed(x *Execution, fl *failure.Failure) {
	f.wait = waitNone
	x.emit(f, history.Event{Type: history.EventMapRunFailed, MapRunFailedEventDetails: failureDetails(fl)})
	if f.retrier(fl) < 0 {
		x.emit(f, history.Event{Type: history.EventMapStateFailed})
	}
	f.stateFailed(x, fl)
}
