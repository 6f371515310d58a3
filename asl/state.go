package asl

import (
	"stepwise/asl/payload"
	"stepwise/jsonvalue"
)

// typeSet is a set of state types, one bit each.
type typeSet uint16

const (
	setTask typeSet = 1 << iota
	setPass
	setChoice
	setWait
	setSucceed
	setFail
	setParallel
	setMap

	setAll       = setTask | setPass | setChoice | setWait | setSucceed | setFail | setParallel | setMap
	setNonFail   = setAll &^ setFail
	setNext      = setTask | setPass | setWait | setParallel | setMap // states that take Next/End
	setResult    = setTask | setPass | setParallel | setMap
	setSelector  = setTask | setParallel | setMap
	setRetryable = setTask | setParallel | setMap
	setAssign    = setTask | setPass | setChoice | setWait | setParallel | setMap
)

var typeBits = map[StateType]typeSet{
	TypeTask: setTask, TypePass: setPass, TypeChoice: setChoice, TypeWait: setWait,
	TypeSucceed: setSucceed, TypeFail: setFail, TypeParallel: setParallel, TypeMap: setMap,
}

// fieldLang says which query language a field belongs to; "" for both.
type fieldSpec struct {
	types typeSet
	lang  QueryLanguage
}

// stateFields lists every field a state may have, with the state types that
// take it and the query language it belongs to.
var stateFields = map[string]fieldSpec{
	"Comment":        {setAll, ""},
	"Next":           {setNext, ""},
	"End":            {setNext, ""},
	"InputPath":      {setNonFail, JSONPath},
	"OutputPath":     {setNonFail, JSONPath},
	"Output":         {setNonFail, JSONata},
	"ResultPath":     {setResult, JSONPath},
	"Parameters":     {setResult, JSONPath},
	"ResultSelector": {setSelector, JSONPath},
	"Arguments":      {setTask | setParallel, JSONata},
	"Assign":         {setAssign, ""},
	"Result":         {setPass, JSONPath},

	"Resource":             {setTask, ""},
	"TimeoutSeconds":       {setTask, ""},
	"TimeoutSecondsPath":   {setTask, JSONPath},
	"HeartbeatSeconds":     {setTask, ""},
	"HeartbeatSecondsPath": {setTask, JSONPath},
	"Credentials":          {setTask, ""},
	"Retry":                {setRetryable, ""},
	"Catch":                {setRetryable, ""},

	"Choices": {setChoice, ""},
	"Default": {setChoice, ""},

	"Seconds":       {setWait, ""},
	"SecondsPath":   {setWait, JSONPath},
	"Timestamp":     {setWait, ""},
	"TimestampPath": {setWait, JSONPath},

	"Error":     {setFail, ""},
	"Cause":     {setFail, ""},
	"ErrorPath": {setFail, JSONPath},
	"CausePath": {setFail, JSONPath},

	"Branches": {setParallel, ""},

	"ItemProcessor":                  {setMap, ""},
	"Iterator":                       {setMap, ""},
	"ItemsPath":                      {setMap, JSONPath},
	"Items":                          {setMap, JSONata},
	"ItemSelector":                   {setMap, ""},
	"ItemReader":                     {setMap, ""},
	"ItemBatcher":                    {setMap, ""},
	"ResultWriter":                   {setMap, ""},
	"MaxConcurrency":                 {setMap, ""},
	"MaxConcurrencyPath":             {setMap, JSONPath},
	"ToleratedFailureCount":          {setMap, ""},
	"ToleratedFailureCountPath":      {setMap, JSONPath},
	"ToleratedFailurePercentage":     {setMap, ""},
	"ToleratedFailurePercentagePath": {setMap, JSONPath},
	"Label":                          {setMap, ""},
}

// stateLanguage resolves the language of a state: the machine's when the
// state declares none, JSONPath only for exactly "JSONPath", and JSONata for
// any other value (which is reported separately).
func (p *parser) stateLanguage(obj *jsonvalue.Object) (lang QueryLanguage, declared any, hasDeclared bool) {
	declared, hasDeclared = obj.Get("QueryLanguage")
	switch {
	case !hasDeclared:
		return p.lang, nil, false
	case declared == string(JSONPath):
		return JSONPath, declared, true
	default:
		return JSONata, declared, true
	}
}

// state reads one state at loc.
func (p *parser) state(name string, v any, loc string) *State {
	st := &State{Name: name, QueryLanguage: p.lang}
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		p.add(errType(loc, "OBJECT"))
		return st
	}
	tv, ok := obj.Get("Type")
	if !ok {
		p.add(errRequired(loc, "Type"))
		p.salvageNext(st, obj)
		return st
	}
	ts, _ := tv.(string)
	bits, ok := typeBits[StateType(ts)]
	if !ok {
		p.add(errStateType(loc + "/Type"))
		p.salvageNext(st, obj)
		return st
	}
	st.Type = StateType(ts)

	lang, declared, hasDeclared := p.stateLanguage(obj)
	st.QueryLanguage = lang
	downgraded := p.lang == JSONata && declared == string(JSONPath)
	if downgraded {
		p.add(errDowngrade(loc))
	}

	present := make(map[string]bool, obj.Len())
	for key, fv := range obj.All() {
		if key == "Type" || key == "QueryLanguage" {
			continue
		}
		spec, known := stateFields[key]
		if !known || spec.types&bits == 0 {
			p.add(errNotSupported(loc, key))
			continue
		}
		if spec.lang != "" && spec.lang != lang {
			if !downgraded {
				p.add(errWrongLanguage(loc, lang, key))
			}
			continue
		}
		present[key] = true
		p.stateField(st, key, fv, loc, lang)
		if p.c.full() {
			return st
		}
	}
	if hasDeclared {
		p.checkLanguageValue(declared, loc+"/QueryLanguage")
	}
	p.checkState(st, obj, present, loc)
	return st
}

// salvageNext keeps the transition of a state whose Type is unusable, so
// that the states after it are not also reported as unreachable.
func (p *parser) salvageNext(st *State, obj *jsonvalue.Object) {
	if v, ok := obj.Get("Next"); ok {
		st.Next, _ = v.(string)
	}
	if v, ok := obj.Get("End"); ok {
		st.End, _ = v.(bool)
	}
}

// stateField reads one field of a state. The field is known to belong to
// the state's type and language.
func (p *parser) stateField(st *State, key string, v any, loc string, lang QueryLanguage) {
	floc := loc + "/" + key
	switch key {
	case "Comment":
		st.Comment, _ = p.str(v, floc)
	case "Next":
		st.Next = p.target(v, floc)
	case "End":
		st.End, _ = p.boolean(v, floc)

	case "InputPath":
		st.InputPath = p.pathField(v, floc, key)
	case "OutputPath":
		st.OutputPath = p.pathField(v, floc, key)
	case "ResultPath":
		st.ResultPath = p.pathField(v, floc, key)
	case "Parameters":
		if st.Type == TypeMap {
			st.ItemSelector = p.template(v, floc, key)
		} else {
			st.Parameters = p.template(v, floc, key)
		}
	case "ResultSelector":
		st.ResultSelector = p.template(v, floc, key)
	case "Arguments":
		if p.jsonataPayload(v, floc, key) {
			st.Arguments = v
		}
	case "Output":
		st.Output, st.HasOutput = v, true
	case "Assign":
		st.Assign, st.AssignRaw = p.assign(v, floc, lang)
	case "Result":
		st.Result, st.HasResult = v, true

	case "Resource":
		if s, ok := p.str(v, floc); ok {
			st.Resource = s
			p.checkResource(s, floc)
		}
	case "TimeoutSeconds":
		st.Timeout = p.intField(v, floc, key, lang, 1, maxSeconds)
	case "TimeoutSecondsPath":
		st.Timeout = p.pathIntField(v, floc, key)
	case "HeartbeatSeconds":
		st.Heartbeat = p.intField(v, floc, key, lang, 1, maxSeconds)
	case "HeartbeatSecondsPath":
		st.Heartbeat = p.pathIntField(v, floc, key)
	case "Credentials":
		p.credentials(st, v, floc, lang)
	case "Retry":
		st.Retry = p.retry(v, floc)
	case "Catch":
		st.Catch = p.catch(v, floc, lang)

	case "Choices":
		st.Choices = p.choices(v, floc, lang)
	case "Default":
		st.Default = p.target(v, floc)

	case "Seconds":
		if s, ok := v.(string); ok && lang == JSONata {
			if !isExpr(s) {
				p.add(errJSONataExpr(floc, key))
				return
			}
			st.WaitExpr, st.WaitExprField = s, key
			return
		}
		if n, ok := p.integer(v, floc, 0, maxSeconds); ok {
			st.Seconds = &n
		}
	case "SecondsPath":
		st.SecondsPath = p.path(v, floc, key, true)
	case "Timestamp":
		s, ok := p.str(v, floc)
		if !ok {
			return
		}
		if lang == JSONata && isExpr(s) {
			st.WaitExpr, st.WaitExprField = s, key
			return
		}
		t, ok := parseTimestamp(s)
		if !ok {
			p.add(errTimestamp(floc))
			return
		}
		st.Timestamp, st.TimestampText = &t, s
	case "TimestampPath":
		st.TimestampPath = p.path(v, floc, key, true)

	case "Error":
		st.Error, st.HasError = p.str(v, floc)
	case "Cause":
		st.Cause, st.HasCause = p.str(v, floc)
	case "ErrorPath", "CausePath":
		s, ok := p.str(v, floc)
		if !ok {
			return
		}
		x, err := payload.CompileExpr(s)
		if err != nil {
			p.add(errPayloadExpr(floc, key))
			return
		}
		if key == "ErrorPath" {
			st.ErrorPath = x
		} else {
			st.CausePath = x
		}

	case "Branches":
		p.branches(st, v, floc)

	default:
		p.mapField(st, key, v, floc, lang)
	}
}

// credentials reads a Task's Credentials: an object with the role to
// assume, RoleArn (a string; in JSONata it may be an expression) or, in
// JSONPath, RoleArn.$ (a path or an intrinsic function call).
func (p *parser) credentials(st *State, v any, loc string, lang QueryLanguage) {
	obj, ok := p.object(v, loc)
	if !ok {
		return
	}
	before := len(p.c.diags)
	for key, fv := range obj.All() {
		switch {
		case key == "RoleArn":
			if s, ok := p.str(fv, loc+"/"+key); ok && s == "" {
				p.add(errEmpty(loc+"/"+key, key))
			}
		case key == "RoleArn.$" && lang == JSONPath:
		case key == "RoleArn.$":
			p.add(errWrongLanguage(loc, lang, key))
		default:
			p.add(errNotSupported(loc, key))
		}
	}
	if !obj.Has("RoleArn") && !obj.Has("RoleArn.$") {
		p.add(errRequired(loc, "RoleArn"))
	}
	if len(p.c.diags) > before {
		return
	}
	st.Credentials = v
	if lang == JSONPath {
		st.CredentialsTemplate = p.template(v, loc, "Credentials")
	}
}

// jsonataPayload checks a JSONata payload (Arguments, ItemSelector): an
// object or an expression.
func (p *parser) jsonataPayload(v any, loc, field string) bool {
	switch t := v.(type) {
	case *jsonvalue.Object:
		return true
	case string:
		if isExpr(t) {
			return true
		}
		p.add(errJSONataExpr(loc, field))
		return false
	default:
		p.add(errType(loc, "OBJECT"))
		return false
	}
}

// assign reads Assign: a compiled template in JSONPath, the raw object in
// JSONata.
func (p *parser) assign(v any, loc string, lang QueryLanguage) (*payload.Template, any) {
	if lang == JSONPath {
		return p.template(v, loc, "Assign"), nil
	}
	if _, ok := p.object(v, loc); !ok {
		return nil, nil
	}
	return nil, v
}

// checkState checks what concerns more than one field of a state.
func (p *parser) checkState(st *State, obj *jsonvalue.Object, present map[string]bool, loc string) {
	bits := typeBits[st.Type]
	if bits&setNext != 0 {
		// "End": false counts as no End.
		switch next := obj.Has("Next"); {
		case next && st.End:
			p.add(errExclusive(loc, "Next", "End"))
		case !next && !st.End:
			p.add(errExactlyOne(loc, "Next", "End"))
		}
	}
	exclusive := func(a, b string) {
		if present[a] && present[b] {
			p.add(errExclusive(loc, a, b))
		}
	}
	switch st.Type {
	case TypeTask:
		if !present["Resource"] {
			p.add(errRequired(loc, "Resource"))
		}
		exclusive("TimeoutSeconds", "TimeoutSecondsPath")
		exclusive("HeartbeatSeconds", "HeartbeatSecondsPath")
		if st.Timeout != nil && st.Heartbeat != nil && st.Timeout.Value != nil && st.Heartbeat.Value != nil &&
			*st.Heartbeat.Value >= *st.Timeout.Value {
			p.add(errHeartbeat(loc + "/HeartbeatSeconds"))
		}
	case TypeChoice:
		if !present["Choices"] {
			p.add(errRequired(loc, "Choices"))
		}
	case TypeWait:
		var set []string
		for _, f := range []string{"Seconds", "Timestamp", "SecondsPath", "TimestampPath"} {
			if obj.Has(f) {
				set = append(set, f)
			}
		}
		switch {
		case len(set) == 0:
			p.add(errExactlyOne(loc, "Seconds", "Timestamp", "SecondsPath", "TimestampPath"))
		case len(set) > 1:
			p.add(errExclusive(loc, set...))
		}
	case TypeFail:
		exclusive("Error", "ErrorPath")
		exclusive("Cause", "CausePath")
	case TypeParallel:
		if !present["Branches"] {
			p.add(errRequired(loc, "Branches"))
		}
	case TypeMap:
		p.checkMap(st, obj, present, loc)
	}
}
