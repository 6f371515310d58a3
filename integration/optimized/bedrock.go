package optimized

import (
	"stepwise/jsonvalue"
)

// invokeModel is bedrock:invokeModel: bedrock-runtime's InvokeModel, whose
// Body is the model's request as a JSON object (or its text), and whose
// result is {"Body": the model's answer parsed, "ContentType": ...}.
var invokeModel = action{service: "bedrock", name: "invokeModel", model: "bedrock-runtime", op: "invokeModel", token: true,
	in: func(p *jsonvalue.Object) (*jsonvalue.Object, error) {
		o := jsonvalue.NewObject(len(p.Keys()))
		for _, k := range p.Keys() {
			v, _ := p.Get(k)
			if s, ok := v.(string); ok && k == "Body" {
				if parsed, err := jsonvalue.ParseString(s); err == nil {
					v = parsed
				}
			}
			o.Set(k, v)
		}
		if _, ok := o.Get("ContentType"); !ok {
			o.Set("ContentType", "application/json")
		}
		return o, nil
	},
	out: func(_, a *jsonvalue.Object) *jsonvalue.Object {
		body := member(a, "Body")
		if s, ok := body.(string); ok {
			if parsed, err := jsonvalue.ParseString(s); err == nil {
				body = parsed
			}
		}
		return obj("Body", body, "ContentType", member(a, "ContentType"))
	},
}
