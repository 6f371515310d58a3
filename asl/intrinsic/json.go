package intrinsic

import (
	"stepwise/jsonvalue"
)

var jsonFunctions = []*function{
	{name: "States.StringToJson", minArgs: 1, maxArgs: 1, eval: evalStringToJSON},
	{name: "States.JsonToString", minArgs: 1, maxArgs: 1, eval: evalJSONToString},
	{name: "States.JsonMerge", minArgs: 3, maxArgs: 3, eval: evalJSONMerge},
}

// evalStringToJSON parses a string as Jackson's readTree does: a blank
// string is null, content after the first value is ignored, and malformed
// text fails with Jackson's own message.
func evalStringToJSON(c *Call, args []any) (any, error) {
	s, ok := args[0].(string)
	if !ok {
		return nil, invalidArgs(c)
	}
	start, end, msg := jacksonScan(s)
	if msg != "" {
		return nil, &argError{detail: "Cannot convert String to Json in " + c.fn.name + ", caused by: " + msg}
	}
	if start == end {
		return nil, nil
	}
	v, err := jsonvalue.ParseString(s[start:end])
	if err != nil {
		return nil, &argError{detail: "Cannot convert String to Json in " + c.fn.name + ", caused by: " + err.Error()}
	}
	if n, ok := v.(jsonvalue.Number); ok && n == "-0" {
		v = jsonvalue.Number("0") // Jackson reads -0 as the int 0
	}
	return v, nil
}

// evalJSONToString returns the compact JSON text of any value.
func evalJSONToString(_ *Call, args []any) (any, error) {
	return jsonvalue.String(args[0]), nil
}

// evalJSONMerge merges two objects shallowly: members of the second replace
// those of the first, whole. Only a deep flag of true is refused; AWS takes
// any other value, even a string, as a shallow merge.
func evalJSONMerge(c *Call, args []any) (any, error) {
	a, ok1 := args[0].(*jsonvalue.Object)
	b, ok2 := args[1].(*jsonvalue.Object)
	if !ok1 || !ok2 || a == nil || b == nil {
		return nil, invalidArgs(c)
	}
	if deep, _ := args[2].(bool); deep {
		return nil, invalidArgs(c)
	}
	out := jsonvalue.NewObject(a.Len() + b.Len())
	for k, v := range a.All() {
		out.Set(k, v)
	}
	for k, v := range b.All() {
		out.Set(k, v)
	}
	return out, nil
}
