package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"stepwise/deploy/cfn"
	"stepwise/internal/boundedfile"
	"stepwise/wiring"
)

// APIs
//
// An API's routes are wires of kind "api" (package wiring/api serves
// them on one local listener, Deployer.APIAddr): a function's or a SAM
// state machine's Api and HttpApi events, and the paths of an
// AWS::Serverless::Api's or AWS::Serverless::HttpApi's OpenAPI
// definition (DefinitionBody, or the local file DefinitionUri names).
// An event's RestApiId (ApiId) names the API it is of; without it the
// route is of SAM's implicit ServerlessRestApi (stage Prod) or
// ServerlessHttpApi (stage $default). The APIs keep the Ref and
// Fn::GetAtt of a type named only (other.go).

// apiRoute is a route as wiring/api reads it (wiring/api.Route).
type apiRoute struct {
	API           string            `json:"api"`
	APIID         string            `json:"apiId,omitempty"`
	Type          string            `json:"type"`
	Stage         string            `json:"stage,omitempty"`
	Method        string            `json:"method"`
	Path          string            `json:"path"`
	Integration   string            `json:"integration"`
	PayloadFormat string            `json:"payloadFormat,omitempty"`
	Action        string            `json:"action,omitempty"`
	Template      string            `json:"template,omitempty"`
	Parameters    map[string]string `json:"parameters,omitempty"`
}

const (
	samAPI     = "AWS::Serverless::Api"
	samHTTPAPI = "AWS::Serverless::HttpApi"
)

func init() {
	registerEvent("Api", func(x *run, r *resource, name string, props resProps, target wiring.Target) (wiring.Wire, error) {
		return x.apiEvent(r, name, props, target, false)
	})
	registerEvent("HttpApi", func(x *run, r *resource, name string, props resProps, target wiring.Target) (wiring.Wire, error) {
		return x.apiEvent(r, name, props, target, true)
	})
	register(samAPIKind{}, samAPI, samHTTPAPI)
}

// samStartTemplate is the request template SAM gives a state machine's
// Api event: the body is the execution's input.
func samStartTemplate(arn string, unescape bool) string {
	input := `$util.escapeJavaScript($input.json('$'))`
	if unescape {
		input += `.replaceAll("\\'", "'")`
	}
	return `{"input": "` + input + `", "stateMachineArn": "` + arn + `"}`
}

// apiEvent reads an Api (http: HttpApi) event into a route to target.
func (x *run) apiEvent(r *resource, name string, props resProps, target wiring.Target, http bool) (wiring.Wire, error) {
	route := apiRoute{Type: "rest", Method: "ANY"}
	idKey, implicit := "RestApiId", "ServerlessRestApi"
	if http {
		route.Type, idKey, implicit = "http", "ApiId", "ServerlessHttpApi"
	}
	path, err := props.str("Path")
	if err != nil {
		return wiring.Wire{}, err
	}
	method, err := props.str("Method")
	if err != nil {
		return wiring.Wire{}, err
	}
	switch {
	case path == "" && method == "" && http:
		route.Path = "$default"
	case path == "" || method == "":
		return wiring.Wire{}, props.errorf("Path", "an %s event needs Path and Method", map[bool]string{false: "Api", true: "HttpApi"}[http])
	default:
		route.Path, route.Method = path, strings.ToUpper(method)
	}
	if route.Method == "X-AMAZON-APIGATEWAY-ANY-METHOD" {
		route.Method = "ANY"
	}
	if route.API, route.APIID, route.Stage, err = x.apiOf(r, name, props, idKey, implicit); err != nil {
		return wiring.Wire{}, err
	}
	used := []string{"Path", "Method", idKey}
	switch {
	case target.Type == wiring.ToFunction:
		route.Integration, route.PayloadFormat = "lambda", "1.0"
		if http {
			if route.PayloadFormat, err = props.str("PayloadFormatVersion"); err != nil {
				return wiring.Wire{}, err
			}
			route.PayloadFormat = cmpOr(route.PayloadFormat, "2.0")
			used = append(used, "PayloadFormatVersion", "TimeoutInMillis")
		}
	case http:
		route.Integration, route.Action = "states", "StartExecution"
		route.Parameters = map[string]string{"Input": "$request.body", "StateMachineArn": target.ARN}
	default:
		unescape, err := props.flag("UnescapeMappingTemplate", false)
		if err != nil {
			return wiring.Wire{}, err
		}
		route.Integration, route.Action = "states", "StartExecution"
		route.Template = samStartTemplate(target.ARN, unescape)
		used = append(used, "UnescapeMappingTemplate")
	}
	if rest := props.ignored(used...); rest != "" {
		x.warn("%s (%s): event %s: %s not applied here", r.ID, r.Type, name, rest)
	}
	src, err := json.Marshal(route)
	if err != nil {
		return wiring.Wire{}, err
	}
	return wiring.Wire{Kind: "api", Source: src, Target: target}, nil
}

// apiOf finds the API an event's idKey (RestApiId, ApiId) names: a Ref
// to the template's API, or the id of one the stack made; without
// idKey, SAM's implicit API. It gives the API's logical id, its id and
// its stage.
func (x *run) apiOf(r *resource, event string, props resProps, idKey, implicit string) (logical, id, stage string, err error) {
	if !props.has(idKey) {
		stage = "Prod"
		if implicit == "ServerlessHttpApi" {
			stage = "$default"
		}
		return implicit, idHash(x.opts.StackName+"/"+implicit, 10), stage, nil
	}
	// The template's own words: {"Ref": "MyApi"}.
	if evs, ok := r.Def.Properties["Events"].(map[string]any); ok {
		if ev, ok := evs[event].(map[string]any); ok {
			if p, ok := ev["Properties"].(map[string]any); ok {
				if ref, ok := p[idKey].(map[string]any); ok {
					if s, ok := ref["Ref"].(string); ok {
						logical = s
					}
				}
			}
		}
	}
	value, _ := props.m[idKey].(string)
	if logical == "" {
		for lid, rec := range x.rec.Resources {
			if rec != nil && value != "" && rec.Physical == value {
				logical = lid
				break
			}
		}
	}
	rec := x.rec.Resources[logical]
	if rec == nil {
		return "", "", "", props.errorf(idKey, "%v is not an API of this stack (an AWS::Serverless::Api or HttpApi made before it)", props.m[idKey])
	}
	var spec apiSpec
	if rec.Type == samAPI || rec.Type == samHTTPAPI {
		_ = json.Unmarshal(rec.Spec, &spec)
	}
	return logical, cmpOr(value, rec.Physical), cmpOr(spec.Stage, "$default"), nil
}

// samAPIKind is AWS::Serverless::Api and AWS::Serverless::HttpApi: named
// as a type not made here is (their Ref and attributes), and their
// OpenAPI definition's routes served.
type samAPIKind struct{}

// apiSpec is what a SAM API applied.
type apiSpec struct {
	Stage  string        `json:"stage"`
	Routes []wiring.Wire `json:"routes,omitempty"`
}

func (samAPIKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	rec, _, err := otherKind{}.apply(ctx, x, r, prev)
	if err != nil {
		return nil, "", err
	}
	rec.Skipped = false
	http := r.Type == samHTTPAPI
	p := propsOf(r)
	stage, err := p.str("StageName")
	if err != nil {
		return nil, "", err
	}
	if stage == "" {
		if !http {
			return nil, "", p.errorf("StageName", "an AWS::Serverless::Api needs a StageName")
		}
		stage = "$default"
	}
	doc, err := x.openAPIOf(ctx, r, p)
	if err != nil {
		return nil, "", err
	}
	if doc != nil {
		typ := "rest"
		if http {
			typ = "http"
		}
		if rec.Wires, err = x.openAPIRoutes(r, doc, apiRoute{API: r.ID, APIID: rec.Physical, Type: typ, Stage: stage}); err != nil {
			return nil, "", err
		}
	}
	rec.Spec = specOf(apiSpec{Stage: stage, Routes: rec.Wires})
	switch {
	case prev == nil || prev.Skipped:
		return rec, Created, nil
	case sameSpec(prev, rec.Spec):
		return rec, Unchanged, nil
	}
	return rec, Updated, nil
}

func (samAPIKind) remove(context.Context, *run, string, *Record) error { return nil }

// maxOpenAPIFile is the largest DefinitionUri file read.
const maxOpenAPIFile = 4 << 20

// openAPIOf is a SAM API's OpenAPI document: DefinitionBody, or the
// local file DefinitionUri names; nil for none.
func (x *run) openAPIOf(ctx context.Context, r *resource, p resProps) (map[string]any, error) {
	if body, ok, err := p.obj("DefinitionBody"); err != nil {
		return nil, err
	} else if ok {
		return body.m, nil
	}
	if !p.has("DefinitionUri") {
		return nil, nil
	}
	uri, err := p.str("DefinitionUri")
	if err != nil {
		return nil, p.errorf("DefinitionUri", "only a local file's path is read here (not an S3 location)")
	}
	if strings.HasPrefix(uri, "s3://") {
		return nil, p.errorf("DefinitionUri", "%s: only a local file's path is read here", uri)
	}
	full := uri
	if !filepath.IsAbs(full) {
		full = filepath.Join(x.opts.BaseDir, uri)
	}
	data, err := boundedfile.Read(ctx, full, maxOpenAPIFile)
	var tooLarge *boundedfile.TooLargeError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, p.errorf("DefinitionUri", "the OpenAPI file %s does not exist", full)
	case errors.As(err, &tooLarge):
		return nil, p.errorf("DefinitionUri", "%s: larger than %d bytes", full, maxOpenAPIFile)
	case err != nil:
		return nil, p.errorf("DefinitionUri", "the OpenAPI file: %v", err)
	}
	v, err := cfn.Decode(data)
	if err != nil {
		return nil, p.errorf("DefinitionUri", "%s: %v", full, err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, p.errorf("DefinitionUri", "%s: an OpenAPI document is an object", full)
	}
	return doc, nil
}

var (
	lambdaURI    = regexp.MustCompile(`^arn:[a-z-]+:apigateway:[^:]*:lambda:path/[^/]+/functions/(arn:[^/]+)/invocations$`)
	statesURI    = regexp.MustCompile(`^arn:[a-z-]+:apigateway:[^:]*:states:action/(\w+)$`)
	stateMachine = regexp.MustCompile(`arn:[a-z-]+:states:[^:"']*:[^:"']*:stateMachine:[A-Za-z0-9_.-]+`)
	httpMethods  = []string{"get", "post", "put", "delete", "patch", "head", "options", "x-amazon-apigateway-any-method"}
)

// functionOfARN is the function a Lambda ARN names
// (arn:aws:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER]).
func functionOfARN(arn string) string {
	parts := strings.Split(arn, ":")
	if len(parts) >= 7 && parts[5] == "function" {
		return parts[6]
	}
	return ""
}

// openAPIRoutes reads an OpenAPI document's paths into routes of base's
// API: each operation's x-amazon-apigateway-integration, a Lambda proxy
// or a Step Functions action; other integrations are warned of.
func (x *run) openAPIRoutes(r *resource, doc map[string]any, base apiRoute) ([]wiring.Wire, error) {
	paths, _ := doc["paths"].(map[string]any)
	var wires []wiring.Wire
	for _, path := range sortedKeys(paths) {
		ops, ok := paths[path].(map[string]any)
		if !ok {
			continue
		}
		for _, m := range httpMethods {
			op, ok := ops[m].(map[string]any)
			if !ok {
				continue
			}
			route := base
			route.Path, route.Method = path, strings.ToUpper(m)
			if m == "x-amazon-apigateway-any-method" {
				route.Method = "ANY"
			}
			where := fmt.Sprintf("%s (%s): DefinitionBody %s %s", r.ID, r.Type, route.Method, path)
			integ, ok := op["x-amazon-apigateway-integration"].(map[string]any)
			if !ok {
				x.warn("%s: no x-amazon-apigateway-integration; not served", where)
				continue
			}
			target, ok, err := x.openAPIIntegration(&route, integ, where)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			src, err := json.Marshal(route)
			if err != nil {
				return nil, err
			}
			wires = append(wires, wiring.Wire{ID: r.ID + "/" + route.Method + " " + path, Kind: "api", Source: src, Target: target})
		}
	}
	return wires, nil
}

// openAPIIntegration reads an operation's integration into route; false
// (warned of) for an integration not served here.
func (x *run) openAPIIntegration(route *apiRoute, integ map[string]any, where string) (wiring.Target, bool, error) {
	str := func(k string) string { s, _ := integ[k].(string); return s }
	typ, uri, subtype := strings.ToLower(str("type")), str("uri"), str("integrationSubtype")
	switch {
	case typ == "aws_proxy" && subtype != "":
		action, ok := strings.CutPrefix(subtype, "StepFunctions-")
		if !ok || (action != "StartExecution" && action != "StartSyncExecution") {
			x.warn("%s: integration subtype %s is not served here (StepFunctions-StartExecution, StepFunctions-StartSyncExecution)", where, subtype)
			return wiring.Target{}, false, nil
		}
		params := map[string]string{}
		rp, _ := integ["requestParameters"].(map[string]any)
		for k, v := range rp {
			s, ok := v.(string)
			if !ok {
				return wiring.Target{}, false, fmt.Errorf("%s: request parameter %s is not a string", where, k)
			}
			params[k] = s
		}
		route.Integration, route.Action, route.Parameters, route.PayloadFormat = "states", action, params, ""
		return wiring.Target{Type: wiring.ToStateMachine, ARN: params["StateMachineArn"]}, true, nil
	case typ == "aws_proxy":
		fnArn := uri
		if m := lambdaURI.FindStringSubmatch(uri); m != nil {
			fnArn = m[1]
		}
		name := functionOfARN(fnArn)
		if name == "" {
			x.warn("%s: integration uri %q is not a Lambda function's; not served", where, uri)
			return wiring.Target{}, false, nil
		}
		route.Integration = "lambda"
		route.PayloadFormat = cmpOr(str("payloadFormatVersion"), "1.0")
		if route.Type == "rest" {
			route.PayloadFormat = "1.0"
		}
		return wiring.Target{Type: wiring.ToFunction, Name: name, ARN: fnArn}, true, nil
	case typ == "aws":
		m := statesURI.FindStringSubmatch(uri)
		if m == nil {
			x.warn("%s: AWS integration %q is not served here (only states:action/StartExecution and StartSyncExecution)", where, uri)
			return wiring.Target{}, false, nil
		}
		tmpls, _ := integ["requestTemplates"].(map[string]any)
		tmpl, _ := tmpls["application/json"].(string)
		if tmpl == "" {
			return wiring.Target{}, false, fmt.Errorf("%s: a Step Functions integration needs requestTemplates' application/json template", where)
		}
		route.Integration, route.Action, route.Template = "states", m[1], tmpl
		return wiring.Target{Type: wiring.ToStateMachine, ARN: stateMachine.FindString(tmpl)}, true, nil
	}
	x.warn("%s: integration of type %q is not served here (aws_proxy to a function, aws to Step Functions)", where, typ)
	return wiring.Target{}, false, nil
}

// ServedAPI is where an API of the stack is served locally.
type ServedAPI struct {
	API string `json:"api"`
	// URL is the API's base: http://ADDR/STAGE (no stage for $default);
	// its routes answer at the paths after it, and without the stage.
	URL    string   `json:"url"`
	Routes []string `json:"routes"`
}

// servedAPIs are the stack's APIs and their routes that are served, for
// the report (those that are not are warned of, with why).
func (x *run) servedAPIs(rec *stackRecord) []ServedAPI {
	if x.d.APIAddr == "" || x.d.Wiring == nil {
		return nil
	}
	byAPI := map[string]*ServedAPI{}
	var order []string
	for _, w := range stackWires(rec) {
		if w.Kind != "api" || slices.ContainsFunc(x.report.Warnings, func(warn string) bool {
			return strings.HasPrefix(warn, "event source "+w.ID+" (api): ")
		}) {
			continue // not served: warned of why
		}
		var route apiRoute
		if json.Unmarshal(w.Source, &route) != nil {
			continue
		}
		key := route.API + "\x00" + route.Stage
		s := byAPI[key]
		if s == nil {
			url := "http://" + x.d.APIAddr
			if route.Stage != "" && route.Stage != "$default" {
				url += "/" + route.Stage
			}
			s = &ServedAPI{API: route.API, URL: url}
			byAPI[key] = s
			order = append(order, key)
		}
		rk := route.Method + " " + route.Path
		if route.Path == "$default" {
			rk = "$default"
		}
		s.Routes = append(s.Routes, rk)
	}
	slices.Sort(order)
	var out []ServedAPI
	for _, k := range order {
		slices.Sort(byAPI[k].Routes)
		out = append(out, *byAPI[k])
	}
	return out
}
