package cfn

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// globalsProperties are the properties SAM's Globals section takes, by
// section (each the AWS::Serverless:: type its properties go to).
var globalsProperties = map[string][]string{
	"Api": {"Auth", "Name", "DefinitionUri", "CacheClusterEnabled", "CacheClusterSize", "MergeDefinitions", "Variables",
		"EndpointConfiguration", "MethodSettings", "BinaryMediaTypes", "MinimumCompressionSize", "Cors", "GatewayResponses",
		"AccessLogSetting", "CanarySetting", "TracingEnabled", "OpenApiVersion", "Domain", "AlwaysDeploy", "PropagateTags"},
	"Function": {"Handler", "Runtime", "CodeUri", "DeadLetterQueue", "Description", "MemorySize", "Timeout", "VpcConfig",
		"Environment", "Tags", "PropagateTags", "Tracing", "KmsKeyArn", "AutoPublishAlias", "AutoPublishAliasAllProperties",
		"Layers", "DeploymentPreference", "RolePath", "PermissionsBoundary", "ReservedConcurrentExecutions",
		"ProvisionedConcurrencyConfig", "AssumeRolePolicyDocument", "EventInvokeConfig", "FileSystemConfigs",
		"CodeSigningConfigArn", "Architectures", "SnapStart", "EphemeralStorage", "FunctionUrlConfig",
		"RuntimeManagementConfig", "LoggingConfig", "RecursiveLoop", "SourceKMSKeyArn"},
	"HttpApi": {"Auth", "AccessLogSettings", "StageVariables", "Tags", "CorsConfiguration", "DefaultRouteSettings", "Domain",
		"RouteSettings", "FailOnWarnings", "PropagateTags"},
	"LayerVersion": {"PublishLambdaVersion"},
	"SimpleTable":  {"SSESpecification"},
	"StateMachine": {"PropagateTags"},
}

// globalsUnlisted are properties SAM takes without listing them in its
// message.
var globalsUnlisted = map[string]bool{"RuntimeManagementConfig": true, "RecursiveLoop": true, "SourceKMSKeyArn": true}

// pyList writes names as SAM's messages do (a Python list).
func pyList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "'" + n + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// readGlobals checks a SAM template's Globals section as SAM does: an
// object of known sections, each an object of the properties SAM takes
// there.
func (t *Template) readGlobals(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return errors.New("template: 'Globals' section is invalid. It must be a non-empty dictionary")
	}
	t.Globals = map[string]map[string]any{}
	for _, section := range sortedKeys(m) {
		supported, known := globalsProperties[section]
		if !known {
			return fmt.Errorf("template: 'Globals' section is invalid. '%s' is not supported. Must be one of the following values - %s",
				section, pyList(sortedKeys(globalsProperties)))
		}
		props, ok := m[section].(map[string]any)
		if !ok {
			return fmt.Errorf("template: 'Globals' section is invalid. Value of %s must be a dictionary", section)
		}
		for _, key := range sortedKeys(props) {
			if !slices.Contains(supported, key) {
				var shown []string
				for _, p := range supported {
					if !globalsUnlisted[p] {
						shown = append(shown, p)
					}
				}
				return fmt.Errorf("template: 'Globals' section is invalid. '%s' is not a supported property of '%s'. Must be one of the following values - %s",
					key, section, pyList(shown))
			}
		}
		t.Globals[section] = props
	}
	return nil
}

// applyGlobals merges a SAM template's Globals into the properties of
// its AWS::Serverless:: resources, by SAM's rules: a resource's own
// value wins over a global one; two objects are merged key by key by
// these same rules; two lists are joined, the global items first; values
// of different kinds, and intrinsic functions (taken as the single value
// they resolve to), keep the resource's.
func (t *Template) applyGlobals() error {
	for _, id := range t.ResourceIDs() {
		r := t.Resources[id]
		section, ok := strings.CutPrefix(r.Type, "AWS::Serverless::")
		if !ok || t.Globals[section] == nil {
			continue
		}
		globals, err := ignoreGlobals(id, t.Globals[section], r.IgnoreGlobals)
		if err != nil {
			return err
		}
		props := r.Properties
		if props == nil {
			props = map[string]any{}
		}
		r.Properties = mergeGlobal(globals, props).(map[string]any)
		t.Resources[id] = r
	}
	return nil
}

// ignoreGlobals leaves out of a section's globals those a resource's
// IgnoreGlobals attribute names ("*" for all of them).
func ignoreGlobals(id string, globals map[string]any, ignore any) (map[string]any, error) {
	switch ig := ignore.(type) {
	case nil:
		return globals, nil
	case string:
		if ig == "*" {
			return map[string]any{}, nil
		}
	case []any:
		out := make(map[string]any, len(globals))
		for k, v := range globals {
			out[k] = v
		}
		for _, e := range ig {
			key, _ := e.(string)
			if _, ok := globals[key]; !ok {
				return nil, fmt.Errorf("template: Resource %s has invalid resource attribute 'IgnoreGlobals' on item '%v'.", id, e)
			}
			delete(out, key)
		}
		return out, nil
	}
	return nil, fmt.Errorf("template: Resource %s has invalid resource attribute 'IgnoreGlobals'.", id)
}

func mergeGlobal(global, local any) any {
	gm, gIsMap := global.(map[string]any)
	lm, lIsMap := local.(map[string]any)
	if gIsMap && isIntrinsic(gm) {
		gIsMap = false
	}
	if lIsMap && isIntrinsic(lm) {
		lIsMap = false
	}
	switch {
	case gIsMap && lIsMap:
		out := make(map[string]any, len(gm)+len(lm))
		for k, v := range gm {
			out[k] = CopyValue(v)
		}
		for k, v := range lm {
			if g, ok := gm[k]; ok {
				out[k] = mergeGlobal(g, v)
			} else {
				out[k] = v
			}
		}
		return out
	}
	gl, gIsList := global.([]any)
	ll, lIsList := local.([]any)
	if gIsList && lIsList {
		out := make([]any, 0, len(gl)+len(ll))
		for _, v := range gl {
			out = append(out, CopyValue(v))
		}
		return append(out, ll...)
	}
	return local
}

// isIntrinsic says whether an object is an intrinsic function: its one
// key is Ref or Fn::something.
func isIntrinsic(m map[string]any) bool {
	if len(m) != 1 {
		return false
	}
	for k := range m {
		return k == "Ref" || strings.HasPrefix(k, "Fn::")
	}
	return false
}

// CopyValue is a deep copy of a template's value (its maps and lists), so
// that resources given one global value do not share it.
func CopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = CopyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = CopyValue(e)
		}
		return out
	}
	return v
}
