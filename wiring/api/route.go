package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"stepwise/wiring"
)

// Route is one route of a deployed API, a wire's Source: a method and
// a path of an API, and what answers it.
type Route struct {
	// API is the logical id of the API the route is of
	// (ServerlessRestApi, MyApi), APIID its id.
	API   string `json:"api"`
	APIID string `json:"apiId,omitempty"`
	// Type is "rest" (API Gateway's REST APIs: AWS::Serverless::Api,
	// AWS::ApiGateway::*) or "http" (HTTP APIs: AWS::Serverless::HttpApi,
	// AWS::ApiGatewayV2::*).
	Type string `json:"type"`
	// Stage is the API's stage: a request's path may start with it
	// (/Prod/orders as /orders). "$default" has no prefix.
	Stage string `json:"stage,omitempty"`
	// Method is an HTTP method or ANY; Path the route's path, with
	// {param} and {param+} (greedy) segments, or "$default" (an HTTP
	// API's catch-all route).
	Method string `json:"method"`
	Path   string `json:"path"`
	// Integration is "lambda" (a Lambda proxy integration of the
	// target function) or "states" (a Step Functions action).
	Integration string `json:"integration"`
	// PayloadFormat is a Lambda proxy's event format, "1.0" or "2.0".
	PayloadFormat string `json:"payloadFormat,omitempty"`
	// Action is the Step Functions action: StartExecution or
	// StartSyncExecution.
	Action string `json:"action,omitempty"`
	// Template is a REST API's request mapping template (its
	// application/json one): the action's input.
	Template string `json:"template,omitempty"`
	// Parameters are an HTTP API's Step Functions integration's request
	// parameters (Input, StateMachineArn, Name).
	Parameters map[string]string `json:"parameters,omitempty"`
}

// IDOf is the id of the API a wire of kind api is a route of; "" for
// another wire.
func IDOf(w wiring.Wire) string {
	if w.Kind != "api" {
		return ""
	}
	var r Route
	if json.Unmarshal(w.Source, &r) != nil {
		return ""
	}
	return r.APIID
}

// Route types and integrations.
const (
	REST    = "rest"
	HTTP    = "http"
	Lambda  = "lambda"
	States  = "states"
	Default = "$default"
)

// check says what is wrong with a route, if anything.
func (r *Route) check() error {
	if r.Type != REST && r.Type != HTTP {
		return fmt.Errorf("route type %q: want %q or %q", r.Type, REST, HTTP)
	}
	if r.Path == Default {
		if r.Type != HTTP {
			return fmt.Errorf("route %s: only an HTTP API has a $default route", r.Path)
		}
	} else {
		if !strings.HasPrefix(r.Path, "/") {
			return fmt.Errorf("route path %q: must start with /", r.Path)
		}
		segs := splitPath(r.Path)
		for i, s := range segs {
			if !strings.HasPrefix(s, "{") {
				if strings.ContainsAny(s, "{}") {
					return fmt.Errorf("route path %q: segment %q: a parameter is a whole segment, {name} or {name+}", r.Path, s)
				}
				continue
			}
			if !strings.HasSuffix(s, "}") || len(s) < 3 {
				return fmt.Errorf("route path %q: segment %q: a parameter is {name} or {name+}", r.Path, s)
			}
			if strings.HasSuffix(s, "+}") && i != len(segs)-1 {
				return fmt.Errorf("route path %q: a greedy parameter %s must be the last segment", r.Path, s)
			}
		}
	}
	switch strings.ToUpper(r.Method) {
	case "ANY", http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodHead, http.MethodOptions:
	default:
		return fmt.Errorf("route %s %s: method %q: want GET, POST, PUT, DELETE, PATCH, HEAD, OPTIONS or ANY", r.Method, r.Path, r.Method)
	}
	switch r.Integration {
	case Lambda:
		if r.PayloadFormat != "1.0" && r.PayloadFormat != "2.0" {
			return fmt.Errorf("route %s %s: payload format %q: want 1.0 or 2.0", r.Method, r.Path, r.PayloadFormat)
		}
	case States:
		if r.Action != "StartExecution" && r.Action != "StartSyncExecution" {
			return fmt.Errorf("route %s %s: Step Functions action %q is not served here (StartExecution or StartSyncExecution)", r.Method, r.Path, r.Action)
		}
		if r.Template != "" {
			if _, err := parseTemplate(r.Template); err != nil {
				return fmt.Errorf("route %s %s: request template: %w", r.Method, r.Path, err)
			}
		} else if r.Parameters == nil {
			return fmt.Errorf("route %s %s: a Step Functions integration needs a request template or request parameters", r.Method, r.Path)
		}
	default:
		return fmt.Errorf("route %s %s: integration %q is not served here (a Lambda proxy or Step Functions)", r.Method, r.Path, r.Integration)
	}
	return nil
}

// Key is the route as API Gateway names it: "GET /orders/{id}".
func (r *Route) Key() string {
	if r.Path == Default {
		return Default
	}
	return strings.ToUpper(r.Method) + " " + r.Path
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// match says whether the route answers method and path (the path
// without its stage) and gives its parameters and a rank: of two routes
// that match, the greater rank is the more specific (literal segments
// before parameters before a greedy one, a method before ANY).
func (r *Route) match(method, path string) (params map[string]string, rank []int, ok bool) {
	if r.Path == Default {
		return nil, []int{-1}, true
	}
	m := strings.ToUpper(r.Method)
	if m != "ANY" && m != method {
		return nil, nil, false
	}
	route, got := splitPath(r.Path), splitPath(path)
	for i, seg := range route {
		switch {
		case strings.HasSuffix(seg, "+}"):
			if i >= len(got) {
				return nil, nil, false
			}
			if params == nil {
				params = map[string]string{}
			}
			params[seg[1:len(seg)-2]] = strings.Join(got[i:], "/")
			rank = append(rank, 1)
			return params, append(rank, methodRank(m)), true
		case strings.HasPrefix(seg, "{"):
			if i >= len(got) || got[i] == "" {
				return nil, nil, false
			}
			if params == nil {
				params = map[string]string{}
			}
			params[seg[1:len(seg)-1]] = got[i]
			rank = append(rank, 2)
		default:
			if i >= len(got) || got[i] != seg {
				return nil, nil, false
			}
			rank = append(rank, 3)
		}
	}
	if len(got) != len(route) {
		return nil, nil, false
	}
	return params, append(rank, methodRank(m)), true
}

func methodRank(m string) int {
	if m == "ANY" {
		return 0
	}
	return 1
}

// better says whether rank a is more specific than b.
func better(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return len(a) > len(b)
}

// found is the route a request goes to.
type found struct {
	entry  *entry
	params map[string]string
	// staged: the request's path started with the route's stage.
	staged bool
	path   string // the path without the stage
}

// find picks the route of method and path among routes: a route
// matches the path as it is, or without its first segment when that is
// the route's stage (and then only without it); the most specific
// match wins (of two as
// specific, the one that matches the path as it is).
func find(entries []*entry, method, path string) *found {
	var best *found
	var bestRank []int
	stage, rest := "", ""
	if segs := splitPath(path); len(segs) > 0 {
		stage = segs[0]
		rest = "/" + strings.Join(segs[1:], "/")
		if strings.HasSuffix(path, "/") && len(segs) > 1 {
			rest += "/"
		}
	}
	for _, e := range entries {
		if s := e.route.Stage; s != "" && s != Default && s == stage {
			if params, rank, ok := e.route.match(method, rest); ok {
				rank = append(rank, 0)
				if best == nil || better(rank, bestRank) {
					best, bestRank = &found{entry: e, params: params, staged: true, path: rest}, rank
				}
			}
			// A path that starts with the route's stage is of that
			// stage (a greedy parameter would take the stage in).
			continue
		}
		if params, rank, ok := e.route.match(method, path); ok {
			rank = append(rank, 1)
			if best == nil || better(rank, bestRank) {
				best, bestRank = &found{entry: e, params: params, path: path}, rank
			}
		}
	}
	return best
}
