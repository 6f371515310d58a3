package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"stepwise/internal/boundedfile"
)

// A CDK app's `cdk synth` (or its own app.synth()) writes a cloud assembly,
// cdk.out: a manifest.json listing artifacts, among them the stacks
// (type aws:cloudformation:stack, each with its template file beside the
// manifest) and the nested assemblies of Stages (type cdk:cloud-assembly,
// a folder with a manifest of its own). Assets are folders beside the
// templates, named by the templates' Metadata."aws:asset:path".

const (
	manifestFile     = "manifest.json"
	artifactStack    = "aws:cloudformation:stack"
	artifactAssembly = "cdk:cloud-assembly"
	// maxAssemblyDepth bounds the nesting of Stages within Stages.
	maxAssemblyDepth = 16
)

// AssemblyStack is one stack of a CDK cloud assembly (cdk.out).
type AssemblyStack struct {
	Name         string            // the stack's name (the artifact's properties.stackName, else its id)
	TemplatePath string            // absolute path of its template
	Dir          string            // the assembly folder its assets are relative to
	DependsOn    []string          // names of stacks it depends on
	Parameters   map[string]string // the artifact's properties.parameters, if any

	id          string // the artifact's id in its manifest
	displayName string // the artifact's displayName ("Prod/Service"), if any
}

// IsAssembly says whether path is a folder holding a manifest.json.
func IsAssembly(path string) bool {
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return false
	}
	fi, err := os.Stat(filepath.Join(path, manifestFile))
	return err == nil && fi.Mode().IsRegular()
}

// ReadAssembly reads dir/manifest.json and returns its CloudFormation
// stacks (artifacts of type aws:cloudformation:stack), those of nested
// assemblies (cdk:cloud-assembly, e.g. Stages) too, each after the stacks
// it depends on. stacks, when given, picks by name (or artifact id, or
// display name such as "Prod/Service"; a name with *, ? or [ is a pattern
// of path.Match), with the stacks they depend on, as `cdk deploy` does; an
// unknown one is an error listing the known ones.
func ReadAssembly(dir string, stacks ...string) ([]AssemblyStack, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cloud assembly %s: %w", dir, err)
	}
	r := &assemblyReader{seen: map[string]bool{}}
	if err := r.read(abs, 0); err != nil {
		return nil, err
	}
	if len(r.stacks) == 0 {
		return nil, fmt.Errorf("cloud assembly %s: %s lists no CloudFormation stack (no artifact of type %s)", dir, manifestFile, artifactStack)
	}
	ordered, err := r.order()
	if err != nil {
		return nil, fmt.Errorf("cloud assembly %s: %w", dir, err)
	}
	if len(stacks) > 0 {
		if ordered, err = pick(ordered, stacks); err != nil {
			return nil, fmt.Errorf("cloud assembly %s: %w", dir, err)
		}
	}
	if err := checkNames(ordered); err != nil {
		return nil, fmt.Errorf("cloud assembly %s: %w", dir, err)
	}
	out := make([]AssemblyStack, len(ordered))
	for i, s := range ordered {
		out[i] = s.AssemblyStack
		out[i].DependsOn = nil
		for _, d := range s.deps {
			out[i].DependsOn = append(out[i].DependsOn, d.Name)
		}
	}
	return out, nil
}

// manifest is the part of a cloud assembly's manifest.json read here.
type manifest struct {
	Version   string               `json:"version"`
	Artifacts map[string]*artifact `json:"artifacts"`
}

type artifact struct {
	Type         string          `json:"type"`
	Properties   json.RawMessage `json:"properties"`
	Dependencies []string        `json:"dependencies"`
	DisplayName  string          `json:"displayName"`
}

type stackProperties struct {
	TemplateFile string         `json:"templateFile"`
	StackName    string         `json:"stackName"`
	Parameters   map[string]any `json:"parameters"`
}

type assemblyProperties struct {
	DirectoryName string `json:"directoryName"`
	DisplayName   string `json:"displayName"`
}

// stackNode is a stack while the assembly is read: its dependencies are
// other stacks, found through any artifacts in between.
type stackNode struct {
	AssemblyStack
	deps []*stackNode
}

type assemblyReader struct {
	seen   map[string]bool // the assemblies' folders read
	stacks []*stackNode
}

// read reads the assembly in dir and, recursively, its nested ones.
func (r *assemblyReader) read(dir string, depth int) error {
	mpath := filepath.Join(dir, manifestFile)
	if depth > maxAssemblyDepth {
		return fmt.Errorf("%s: nested assemblies deeper than %d", mpath, maxAssemblyDepth)
	}
	if r.seen[dir] {
		return fmt.Errorf("%s: the nested assemblies lead back to this one", mpath)
	}
	r.seen[dir] = true
	m, err := readManifest(mpath)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(m.Artifacts))
	for id := range m.Artifacts {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	nodes := map[string]*stackNode{}
	var nested []string
	for _, id := range ids {
		a := m.Artifacts[id]
		if a == nil {
			return fmt.Errorf("%s: artifact %q is null, not an object", mpath, id)
		}
		for _, d := range a.Dependencies {
			if _, ok := m.Artifacts[d]; !ok {
				return fmt.Errorf("%s: artifact %q depends on %q, which the manifest does not list", mpath, id, d)
			}
		}
		switch a.Type {
		case artifactStack:
			n, err := stackArtifact(dir, mpath, id, a)
			if err != nil {
				return err
			}
			nodes[id] = n
			r.stacks = append(r.stacks, n)
		case artifactAssembly:
			var p assemblyProperties
			if err := unmarshalProperties(a.Properties, &p); err != nil {
				return fmt.Errorf("%s: artifact %q: properties: %w", mpath, id, err)
			}
			sub, err := nestedDir(dir, p.DirectoryName)
			if err != nil {
				return fmt.Errorf("%s: artifact %q: %w", mpath, id, err)
			}
			nested = append(nested, sub)
		}
	}
	// Each stack depends on the stacks it reaches through its manifest's
	// dependencies (an asset manifest stands between stacks at times).
	for _, id := range ids {
		n := nodes[id]
		if n == nil {
			continue
		}
		found := map[string]bool{}
		var walk func(from string, visiting map[string]bool)
		walk = func(from string, visiting map[string]bool) {
			for _, d := range m.Artifacts[from].Dependencies {
				if dn := nodes[d]; dn != nil {
					if !found[d] {
						found[d] = true
						n.deps = append(n.deps, dn)
					}
					continue
				}
				if visiting[d] {
					continue
				}
				visiting[d] = true
				walk(d, visiting)
			}
		}
		walk(id, map[string]bool{})
	}
	for _, sub := range nested {
		if err := r.read(sub, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// maxManifestFile bounds a cloud assembly's manifest.json.
const maxManifestFile = 16 << 20

func readManifest(mpath string) (*manifest, error) {
	data, err := boundedfile.Read(context.Background(), mpath, maxManifestFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file: not a cloud assembly (run `cdk synth`, or the app with CDK_OUTDIR set, to write one)", mpath)
	}
	if err != nil {
		return nil, err
	}
	var top any
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: not valid JSON: %w", mpath, err)
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a manifest is a JSON object, got %s", mpath, jsonKind(top))
	}
	m := &manifest{Artifacts: map[string]*artifact{}}
	if v, ok := obj["version"].(string); ok {
		m.Version = v
	}
	if obj["artifacts"] == nil {
		return m, nil
	}
	if _, ok := obj["artifacts"].(map[string]any); !ok {
		return nil, fmt.Errorf("%s: artifacts must be an object of artifacts by id, got %s", mpath, jsonKind(obj["artifacts"]))
	}
	var raw struct{ Artifacts map[string]json.RawMessage }
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", mpath, err)
	}
	for id, r := range raw.Artifacts {
		if string(r) == "null" {
			return nil, fmt.Errorf("%s: artifact %q is null, not an object", mpath, id)
		}
		var a artifact
		if err := unmarshalProperties(r, &a); err != nil {
			return nil, fmt.Errorf("%s: artifact %q: %w", mpath, id, err)
		}
		m.Artifacts[id] = &a
	}
	return m, nil
}

func stackArtifact(dir, mpath, id string, a *artifact) (*stackNode, error) {
	var p stackProperties
	if err := unmarshalProperties(a.Properties, &p); err != nil {
		return nil, fmt.Errorf("%s: stack %q: properties: %w", mpath, id, err)
	}
	if p.TemplateFile == "" {
		return nil, fmt.Errorf("%s: stack %q: properties.templateFile is missing", mpath, id)
	}
	if filepath.IsAbs(p.TemplateFile) {
		return nil, fmt.Errorf("%s: stack %q: templateFile %q must be relative to the assembly", mpath, id, p.TemplateFile)
	}
	tpath := filepath.Join(dir, p.TemplateFile)
	fi, err := os.Stat(tpath)
	if err != nil {
		return nil, fmt.Errorf("%s: stack %q: its template %s is missing", mpath, id, tpath)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: stack %q: its template %s is not a file", mpath, id, tpath)
	}
	var params map[string]string
	keys := make([]string, 0, len(p.Parameters))
	for k := range p.Parameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := p.Parameters[k].(string)
		if !ok {
			return nil, fmt.Errorf("%s: stack %q: properties.parameters.%s must be a string, got %s", mpath, id, k, jsonKind(p.Parameters[k]))
		}
		if params == nil {
			params = map[string]string{}
		}
		params[k] = v
	}
	name := p.StackName
	if name == "" {
		name = id
	}
	return &stackNode{
		AssemblyStack: AssemblyStack{
			Name:         name,
			TemplatePath: tpath,
			Dir:          dir,
			Parameters:   params,
			id:           id,
			displayName:  a.DisplayName,
		},
	}, nil
}

func unmarshalProperties(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return fmt.Errorf("must be an object, got %s", te.Value)
			}
			return fmt.Errorf("%s must be %s, got %s", te.Field, te.Type, te.Value)
		}
		return err
	}
	return nil
}

// nestedDir is a nested assembly's folder, which must lie inside dir.
func nestedDir(dir, name string) (string, error) {
	if name == "" {
		return "", errors.New("properties.directoryName is missing")
	}
	if filepath.IsAbs(name) || !filepath.IsLocal(name) {
		return "", fmt.Errorf("directoryName %q must be a folder inside the assembly", name)
	}
	return filepath.Join(dir, name), nil
}

// order puts each stack after those it depends on; among stacks free to
// go, the manifests' order (artifact ids sorted) holds.
func (r *assemblyReader) order() ([]*stackNode, error) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[*stackNode]int{}
	var out []*stackNode
	var stack []*stackNode
	var visit func(n *stackNode) error
	visit = func(n *stackNode) error {
		switch state[n] {
		case done:
			return nil
		case visiting:
			i := slices.Index(stack, n)
			var names []string
			for _, s := range stack[i:] {
				names = append(names, s.Name)
			}
			return fmt.Errorf("stacks depend on each other in a cycle: %s → %s", strings.Join(names, " → "), n.Name)
		}
		state[n] = visiting
		stack = append(stack, n)
		for _, d := range n.deps {
			if err := visit(d); err != nil {
				return err
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		out = append(out, n)
		return nil
	}
	for _, n := range r.stacks {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// pick keeps the stacks selected, with those they depend on, in order.
func pick(ordered []*stackNode, selectors []string) ([]*stackNode, error) {
	keep := map[*stackNode]bool{}
	var add func(n *stackNode)
	add = func(n *stackNode) {
		if keep[n] {
			return
		}
		keep[n] = true
		for _, d := range n.deps {
			add(d)
		}
	}
	for _, sel := range selectors {
		matched := false
		for _, n := range ordered {
			if selects(sel, n) {
				matched = true
				add(n)
			}
		}
		if !matched {
			var known []string
			for _, n := range ordered {
				k := n.Name
				if n.displayName != "" && n.displayName != n.Name {
					k += " (" + n.displayName + ")"
				}
				known = append(known, k)
			}
			return nil, fmt.Errorf("no stack %q; the assembly's stacks: %s", sel, strings.Join(known, ", "))
		}
	}
	var out []*stackNode
	for _, n := range ordered {
		if keep[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

func selects(sel string, n *stackNode) bool {
	for _, name := range []string{n.Name, n.id, n.displayName} {
		if name == "" {
			continue
		}
		if name == sel {
			return true
		}
		if strings.ContainsAny(sel, "*?[") {
			if ok, err := path.Match(sel, name); err == nil && ok {
				return true
			}
		}
	}
	return false
}

// checkNames refuses two stacks of one name: they would be one stack
// once deployed.
func checkNames(stacks []*stackNode) error {
	by := map[string]*stackNode{}
	for _, n := range stacks {
		if o, ok := by[n.Name]; ok {
			return fmt.Errorf("two stacks are named %q (artifact %q of %s and artifact %q of %s): pick one",
				n.Name, o.id, filepath.Join(o.Dir, manifestFile), n.id, filepath.Join(n.Dir, manifestFile))
		}
		by[n.Name] = n
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	default:
		return "an object"
	}
}
