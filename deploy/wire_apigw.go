package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"stepwise/wiring"
)

// APIs of raw CloudFormation
//
// An API declared with API Gateway's own types, as CDK synthesizes them,
// is served as a SAM API is (wire_api.go): each AWS::ApiGateway::Method
// of an AWS::ApiGateway::RestApi, its path made of the PathParts of the
// AWS::ApiGateway::Resources from the API's root down, and each
// AWS::ApiGatewayV2::Route of an AWS::ApiGatewayV2::Api of protocol HTTP,
// its target an AWS::ApiGatewayV2::Integration, become api wires on the
// Method's or the Route's record. The API's stages are those the
// template's AWS::ApiGateway::Stage and Deployment (StageName), or
// AWS::ApiGatewayV2::Stage, name for it. The APIs, resources,
// integrations, deployments and stages keep the named-only records of a
// type not made here (other.go), with their Ref and Fn::GetAtt.

const (
	gwRestAPI     = "AWS::ApiGateway::RestApi"
	gwResource    = "AWS::ApiGateway::Resource"
	gwMethod      = "AWS::ApiGateway::Method"
	gwStage       = "AWS::ApiGateway::Stage"
	gwDeployment  = "AWS::ApiGateway::Deployment"
	gwV2API       = "AWS::ApiGatewayV2::Api"
	gwV2Route     = "AWS::ApiGatewayV2::Route"
	gwV2Integ     = "AWS::ApiGatewayV2::Integration"
	gwV2Stage     = "AWS::ApiGatewayV2::Stage"
	gwMaxResDepth = 64
)

func init() {
	register(gwRouteKind{}, gwMethod, gwV2Route)
	// What these say is served through the routes that read them.
	for _, t := range []string{gwResource, gwStage, gwDeployment, gwV2Integ, gwV2Stage} {
		quiet[t] = true
	}
}

// gwRouteKind is AWS::ApiGateway::Method and AWS::ApiGatewayV2::Route:
// named as a type not made here is, and their route served.
type gwRouteKind struct{}

func (gwRouteKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	rec, _, err := otherKind{}.apply(ctx, x, r, prev)
	if err != nil {
		return nil, "", err
	}
	if r.Type == gwMethod {
		rec.Wires, err = x.methodRoutes(r)
	} else {
		rec.Wires, err = x.v2Routes(r)
	}
	if err != nil {
		return nil, "", err
	}
	if len(rec.Wires) == 0 {
		return rec, Skipped, nil // warned of why
	}
	rec.Skipped = false
	rec.Spec = specOf(apiSpec{Routes: rec.Wires})
	switch {
	case prev == nil || prev.Skipped:
		return rec, Created, nil
	case sameSpec(prev, rec.Spec):
		return rec, Unchanged, nil
	}
	return rec, Updated, nil
}

func (gwRouteKind) remove(context.Context, *run, string, *Record) error { return nil }

// recordOf is the logical id of the resource of type typ this run made
// whose Ref is physical (or, with attr, whose attribute attr is it).
func (x *run) recordOf(typ, attr, physical string) string {
	for _, id := range x.rec.Order {
		rec := x.rec.Resources[id]
		if rec == nil || rec.Type != typ {
			continue
		}
		v := rec.Physical
		if attr != "" {
			v, _ = rec.Attrs[attr].(string)
		}
		if v != "" && v == physical {
			return id
		}
	}
	return ""
}

// stagesOf are the stage names the template's resources of types give
// the API apiID (its logical id) in their property key: a StageName
// written out, or a parameter's.
func (x *run) stagesOf(api, key string, types ...string) []string {
	t := x.stack.Template()
	var stages []string
	for _, id := range x.stack.Order {
		def := t.Resources[id]
		if !slices.Contains(types, def.Type) {
			continue
		}
		ref, _ := def.Properties[key].(map[string]any)
		if s, _ := ref["Ref"].(string); s != api {
			continue
		}
		var name string
		switch v := def.Properties["StageName"].(type) {
		case string:
			name = v
		case map[string]any:
			if p, ok := v["Ref"].(string); ok {
				name, _ = x.stack.Parameters()[p].(string)
			}
		}
		if name != "" && !slices.Contains(stages, name) {
			stages = append(stages, name)
		}
	}
	slices.Sort(stages)
	return stages
}

// routeWires are the wires of route, one for each of its API's stages.
func routeWires(id string, route apiRoute, stages []string, target wiring.Target) ([]wiring.Wire, error) {
	var wires []wiring.Wire
	for _, s := range stages {
		route.Stage = s
		src, err := json.Marshal(route)
		if err != nil {
			return nil, err
		}
		w := wiring.Wire{ID: id, Kind: "api", Source: src, Target: target}
		if len(stages) > 1 {
			w.ID += "/" + s
		}
		wires = append(wires, w)
	}
	return wires, nil
}

// methodRoutes reads an AWS::ApiGateway::Method into its routes.
func (x *run) methodRoutes(r *resource) ([]wiring.Wire, error) {
	p := propsOf(r)
	method, err := p.str("HttpMethod")
	if err != nil {
		return nil, err
	}
	if method == "" {
		return nil, p.errorf("HttpMethod", "a method needs an HttpMethod")
	}
	apiID, err := p.str("RestApiId")
	if err != nil {
		return nil, err
	}
	api := x.recordOf(gwRestAPI, "", apiID)
	if api == "" {
		return nil, p.errorf("RestApiId", "%s is not an AWS::ApiGateway::RestApi of this stack", apiID)
	}
	resID, err := p.str("ResourceId")
	if err != nil {
		return nil, err
	}
	path, err := x.resourcePath(api, resID, 0)
	if err != nil {
		return nil, p.errorf("ResourceId", "%v", err)
	}
	route := apiRoute{API: api, APIID: apiID, Type: "rest", Method: strings.ToUpper(method), Path: path}
	where := fmt.Sprintf("%s (%s): %s %s", r.ID, r.Type, route.Method, path)
	integ, ok, err := p.obj("Integration")
	if err != nil {
		return nil, err
	}
	if !ok {
		x.warn("%s: no Integration; not served", where)
		return nil, nil
	}
	target, ok, err := x.openAPIIntegration(&route, lowerKeys(integ.m), where)
	if err != nil || !ok {
		return nil, err
	}
	stages := x.stagesOf(api, "RestApiId", gwStage, gwDeployment)
	if len(stages) == 0 {
		x.warn("%s: the API has no stage (AWS::ApiGateway::Stage or Deployment with a StageName); served without one", where)
		stages = []string{""}
	}
	return routeWires(r.ID, route, stages, target)
}

// resourcePath is the path of the API's resource id: "/" for its root,
// else its parent's path and its PathPart.
func (x *run) resourcePath(api, id string, depth int) (string, error) {
	if depth > gwMaxResDepth {
		return "", fmt.Errorf("resources nested deeper than %d", gwMaxResDepth)
	}
	if root, _ := x.rec.Resources[api].Attrs["RootResourceId"].(string); root == id {
		return "/", nil
	}
	lid := x.recordOf(gwResource, "", id)
	if lid == "" {
		return "", fmt.Errorf("%s is neither the root resource of %s nor an AWS::ApiGateway::Resource of this stack", id, api)
	}
	props, err := x.stack.Properties(lid, x)
	if err != nil {
		return "", err
	}
	part, _ := props["PathPart"].(string)
	parent, _ := props["ParentId"].(string)
	if part == "" || parent == "" {
		return "", fmt.Errorf("%s (%s) needs a PathPart and a ParentId", lid, gwResource)
	}
	up, err := x.resourcePath(api, parent, depth+1)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(up, "/") + "/" + part, nil
}

// lowerKeys is an integration's properties under the names an OpenAPI
// x-amazon-apigateway-integration gives them (Type as type, Uri as
// uri...).
func lowerKeys(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k == "" {
			continue
		}
		out[strings.ToLower(k[:1])+k[1:]] = v
	}
	return out
}

// v2Routes reads an AWS::ApiGatewayV2::Route into its routes.
func (x *run) v2Routes(r *resource) ([]wiring.Wire, error) {
	p := propsOf(r)
	apiID, err := p.str("ApiId")
	if err != nil {
		return nil, err
	}
	api := x.recordOf(gwV2API, "", apiID)
	if api == "" {
		return nil, p.errorf("ApiId", "%s is not an AWS::ApiGatewayV2::Api of this stack", apiID)
	}
	key, err := p.str("RouteKey")
	if err != nil {
		return nil, err
	}
	where := fmt.Sprintf("%s (%s): %s", r.ID, r.Type, key)
	apiProps, err := x.stack.Properties(api, x)
	if err != nil {
		return nil, err
	}
	if proto, _ := apiProps["ProtocolType"].(string); proto != "HTTP" {
		x.warn("%s: an API of protocol %q is not served here (only HTTP)", where, proto)
		return nil, nil
	}
	route := apiRoute{API: api, APIID: apiID, Type: "http"}
	if key == "$default" {
		route.Method, route.Path = "ANY", "$default"
	} else {
		m, path, ok := strings.Cut(key, " ")
		if !ok {
			return nil, p.errorf("RouteKey", "%q: a route key is \"METHOD /path\" or $default", key)
		}
		route.Method, route.Path = strings.ToUpper(m), path
		if route.Method == "X-AMAZON-APIGATEWAY-ANY-METHOD" {
			route.Method = "ANY"
		}
	}
	targetRef, err := p.str("Target")
	if err != nil {
		return nil, err
	}
	integID, ok := strings.CutPrefix(targetRef, "integrations/")
	if !ok {
		x.warn("%s: no Target integrations/ID; not served", where)
		return nil, nil
	}
	integ := x.recordOf(gwV2Integ, "", integID)
	if integ == "" {
		return nil, p.errorf("Target", "%s is not an AWS::ApiGatewayV2::Integration of this stack", integID)
	}
	props, err := x.stack.Properties(integ, x)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	for k, v := range props {
		switch k {
		case "IntegrationType":
			m["type"] = v
		case "IntegrationUri":
			m["uri"] = v
		default:
			m[strings.ToLower(k[:1])+k[1:]] = v
		}
	}
	target, ok, err := x.openAPIIntegration(&route, m, where)
	if err != nil || !ok {
		return nil, err
	}
	stages := x.stagesOf(api, "ApiId", gwV2Stage)
	if len(stages) == 0 {
		stages = []string{"$default"}
	}
	return routeWires(r.ID, route, stages, target)
}
