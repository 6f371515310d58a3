package asl

import (
	"stepwise/asl/payload"
	"stepwise/jsonvalue"
)

// JSONataFields are the compiled JSONata fields of a state (or of a Catch
// or Choice rule): nil members are absent.
type JSONataFields struct {
	Arguments    *payload.JSONata
	Credentials  *payload.JSONata // the RoleArn of Credentials
	Output       *payload.JSONata
	Assign       *payload.JSONata
	Items        *payload.JSONata
	ItemSelector *payload.JSONata
	Wait         *payload.JSONata // Seconds or Timestamp (see WaitExprField)
	Error        *payload.JSONata
	Cause        *payload.JSONata
	Condition    *payload.JSONata

	Timeout          *payload.JSONata
	Heartbeat        *payload.JSONata
	MaxConcurrency   *payload.JSONata
	ToleratedCount   *payload.JSONata
	TolerancePercent *payload.JSONata
}

// compileJSONata compiles the JSONata fields of every state of sm (at loc)
// and of the machines inside them, reporting expressions that do not
// compile at their location.
func (p *parser) compileJSONata(sm *StateMachine, loc string) {
	if sm == nil {
		return
	}
	for _, name := range sm.Order {
		st := sm.States[name]
		if st == nil {
			continue
		}
		sloc := loc + "/States/" + name
		for i, b := range st.Branches {
			p.compileJSONata(b, index(sloc+"/Branches", i))
		}
		p.compileJSONata(st.ItemProcessor, sloc+"/ItemProcessor")
		if st.QueryLanguage != JSONata {
			continue
		}
		j := &JSONataFields{}
		c := func(v any, present bool, field string) *payload.JSONata {
			if !present {
				return nil
			}
			return p.jsonataValue(v, sloc+"/"+field)
		}
		j.Arguments = c(st.Arguments, st.Arguments != nil, "Arguments")
		if creds, ok := st.Credentials.(*jsonvalue.Object); ok {
			role, _ := creds.Get("RoleArn")
			j.Credentials = c(role, true, "Credentials/RoleArn")
		}
		j.Output = c(st.Output, st.HasOutput, "Output")
		j.Assign = c(st.AssignRaw, st.AssignRaw != nil, "Assign")
		j.Items = c(st.Items, st.Items != nil, "Items")
		j.ItemSelector = c(st.ItemSelectorRaw, st.ItemSelectorRaw != nil, "ItemSelector")
		j.Wait = c(st.WaitExpr, st.WaitExpr != "", st.WaitExprField)
		j.Error = c(st.Error, st.HasError && payload.IsJSONata(st.Error), "Error")
		j.Cause = c(st.Cause, st.HasCause && payload.IsJSONata(st.Cause), "Cause")
		intExpr := func(f *IntField, field string) *payload.JSONata {
			if f == nil || f.Expr == "" {
				return nil
			}
			return p.jsonataValue(f.Expr, sloc+"/"+field)
		}
		j.Timeout = intExpr(st.Timeout, "TimeoutSeconds")
		j.Heartbeat = intExpr(st.Heartbeat, "HeartbeatSeconds")
		j.MaxConcurrency = intExpr(st.MaxConcurrency, "MaxConcurrency")
		j.ToleratedCount = intExpr(st.ToleratedCount, "ToleratedFailureCount")
		j.TolerancePercent = intExpr(st.TolerancePercent, "ToleratedFailurePercentage")
		st.JSONata = j
		for i, ct := range st.Catch {
			cloc := index(sloc+"/Catch", i)
			cj := &JSONataFields{}
			if ct.HasOutput {
				cj.Output = p.jsonataValue(ct.Output, cloc+"/Output")
			}
			if ct.AssignRaw != nil {
				cj.Assign = p.jsonataValue(ct.AssignRaw, cloc+"/Assign")
			}
			ct.JSONata = cj
		}
		for i, r := range st.Choices {
			rloc := index(sloc+"/Choices", i)
			rj := &JSONataFields{}
			if r.Condition != "" {
				rj.Condition = p.jsonataValue(r.Condition, rloc+"/Condition")
			}
			if r.HasOutput {
				rj.Output = p.jsonataValue(r.Output, rloc+"/Output")
			}
			if r.AssignRaw != nil {
				rj.Assign = p.jsonataValue(r.AssignRaw, rloc+"/Assign")
			}
			r.JSONata = rj
		}
	}
}

// jsonataValue compiles one JSONata-mode value, reporting each expression
// that does not compile.
func (p *parser) jsonataValue(v any, loc string) *payload.JSONata {
	t, errs := payload.CompileJSONata(v)
	for _, err := range errs {
		se := err.(*payload.JSONataSyntaxError)
		p.add(errJSONataSyntax(loc+se.Pointer, se))
	}
	return t
}
