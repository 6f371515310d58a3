package deploy

import (
	"context"
	"fmt"
	"strings"

	"stepwise/deploy/cfn"
)

// StateMachineDefinition is one of a template's state machines as a
// deploy would make it, read without making anything.
type StateMachineDefinition struct {
	LogicalID string
	Type      string
	// Definition is the definition's JSON text, its DefinitionSubstitutions
	// applied; empty when Err is set.
	Definition string
	// From is the file the definition was read from (a DefinitionUri
	// path), empty for one written in the template.
	From string
	// Err is why the definition could not be read.
	Err error
}

// PreviewStateMachines reads the state machines of a template
// (AWS::StepFunctions::StateMachine and AWS::Serverless::StateMachine)
// and their definitions, each with its DefinitionSubstitutions applied,
// without deploying anything: a Ref or Fn::GetAtt to a resource of the
// template gives the name or ARN a deploy would give it (the pseudo
// parameters' defaults for the region and the account), Fn::ImportValue
// a stand-in, and a parameter with no Default and no value in
// opts.Parameters a value it allows. Local definition files are read
// from opts.BaseDir; one in S3 is an error of its state machine. The
// state machines whose Condition holds come in the order of their
// logical ids.
func PreviewStateMachines(ctx context.Context, t *cfn.Template, opts Options) ([]StateMachineDefinition, error) {
	params := map[string]string{}
	for name, p := range t.Parameters {
		if p.Default == nil {
			params[name] = standInParameter(name, p)
		}
	}
	for k, v := range opts.Parameters {
		params[k] = v
	}
	if opts.StackName != "" {
		params["AWS::StackName"] = opts.StackName
	}
	stack, err := cfn.Prepare(t, params)
	if err != nil {
		return nil, err
	}
	opts.StackName = stack.Pseudo("AWS::StackName")
	x := &run{d: &Deployer{}, stack: stack, opts: opts}
	refs := previewRefs{x}
	var out []StateMachineDefinition
	for _, id := range t.ResourceIDs() {
		def := t.Resources[id]
		if !stack.Included(id) || def.Type != "AWS::StepFunctions::StateMachine" && def.Type != samStateMachine {
			continue
		}
		sm := StateMachineDefinition{LogicalID: id, Type: def.Type}
		sm.Definition, sm.From, sm.Err = x.previewDefinition(ctx, refs, id, def)
		out = append(out, sm)
	}
	return out, nil
}

// previewDefinition is one state machine's definition text and the file
// it came from.
func (x *run) previewDefinition(ctx context.Context, refs previewRefs, id string, def cfn.Resource) (string, string, error) {
	props, err := x.stack.Properties(id, refs)
	if err != nil {
		return "", "", err
	}
	var src *definitionSource
	if def.Type == samStateMachine {
		src, err = samDefinition(props)
	} else {
		src, err = cfnDefinition(props)
	}
	if err != nil {
		return "", "", err
	}
	r := &resource{ID: id, Type: def.Type, Props: props, Def: def}
	from := ""
	if src.Path != "" && !strings.HasPrefix(src.Path, "s3://") {
		from = src.Path
	}
	text, err := x.definition(ctx, r, src)
	return text, from, err
}

// standInParameter is a value a parameter with no Default allows: its
// first allowed value, its least number, else its name.
func standInParameter(name string, p cfn.Parameter) string {
	switch {
	case len(p.AllowedValues) > 0:
		return p.AllowedValues[0]
	case p.Type == "Number" || p.Type == "List<Number>":
		if p.MinValue != nil {
			return fmt.Sprint(*p.MinValue)
		}
		return "1"
	}
	return name
}

// previewRefs resolves Ref and Fn::GetAtt to a template's resources
// without making them: the name and the ARN a deploy would give each.
type previewRefs struct{ x *run }

func (p previewRefs) Ref(id string) (string, error) {
	typ, name, attrs := p.named(id)
	switch typ {
	case sqsQueue:
		return attrs["QueueUrl"].(string), nil
	case "AWS::StepFunctions::StateMachine", samStateMachine, "AWS::StepFunctions::Activity", snsTopic,
		"AWS::StepFunctions::StateMachineVersion", "AWS::StepFunctions::StateMachineAlias", lambdaVersion, lambdaAlias:
		return attrs["Arn"].(string), nil
	}
	return name, nil
}

func (p previewRefs) GetAtt(id, attr string) (any, error) {
	_, name, attrs := p.named(id)
	if v, ok := attrs[attr]; ok {
		return v, nil
	}
	return name, nil
}

func (p previewRefs) ImportValue(name string) (string, error) {
	return "imported-" + name, nil
}

// named is a resource's type, the name a deploy would give it and its
// attributes.
func (p previewRefs) named(id string) (string, string, map[string]any) {
	x := p.x
	def := x.stack.Template().Resources[id]
	props, err := x.stack.Properties(id, p)
	if err != nil {
		props = map[string]any{}
	}
	r := &resource{ID: id, Type: def.Type, Props: props, Def: def}
	name := ""
	if f, ok := kinds[def.Type].(finder); ok {
		name, _ = f.nameOf(x, r)
	}
	if name == "" {
		for _, k := range nameProps {
			if s, ok := props[k].(string); ok && s != "" {
				name = s
				break
			}
		}
	}
	if name == "" {
		name = x.name(id, 64)
	}
	attrs := map[string]any{"Name": name}
	region, account, part := x.region(), x.account(), x.partition()
	switch def.Type {
	case sqsQueue:
		_, attrs = x.queueAttrs(name)
	case "AWS::StepFunctions::StateMachine", samStateMachine:
		attrs["Arn"] = x.prefix("stateMachine") + name
	case "AWS::StepFunctions::Activity":
		attrs["Arn"] = x.prefix("activity") + name
	case lambdaFunction, samFunction:
		attrs["Arn"] = x.functionArn(name)
	case snsTopic:
		attrs["Arn"] = "arn:" + part + ":sns:" + region + ":" + account + ":" + name
		attrs["TopicName"] = name
	case dynamoTable, samSimpleTbl:
		attrs["Arn"] = "arn:" + part + ":dynamodb:" + region + ":" + account + ":table/" + name
	case s3Bucket:
		attrs["Arn"] = "arn:" + part + ":s3:::" + name
	case eventBus:
		attrs["Arn"] = "arn:" + part + ":events:" + region + ":" + account + ":event-bus/" + name
	default:
		attrs["Arn"] = x.guessArn(def.Type, name)
	}
	return def.Type, name, attrs
}

// SubstituteDefinition replaces each ${Name} of subs in a definition's
// text by its value's text (a string, a json.Number or a bool), as
// CloudFormation applies DefinitionSubstitutions; a placeholder with no
// value is left as it is.
func SubstituteDefinition(text string, subs map[string]any) (string, error) {
	return substituteDefinition(text, subs)
}

// Placeholders are the ${Name} placeholders of a definition's text, each
// once, in the order they first come.
func Placeholders(text string) []string {
	var names []string
	seen := map[string]bool{}
	for {
		i := strings.Index(text, "${")
		if i < 0 {
			return names
		}
		text = text[i+2:]
		j := strings.IndexByte(text, '}')
		if j < 0 {
			return names
		}
		name := text[:j]
		if placeholderName(name) && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
}

// placeholderName says whether a ${...} holds a substitution's name (not
// text with spaces or quotes in it).
func placeholderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
