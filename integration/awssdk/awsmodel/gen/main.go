// Command gen writes the AWS API models package awsmodel embeds,
// models/models.zip, from botocore's service models (the newest API
// version of each service's service-2.json). Run it in the awsmodel
// directory (go generate ./integration/awssdk/awsmodel/ does) with
// botocore's data directory:
//
//	BOTOCORE_DATA=/path/to/botocore/data go generate ./integration/awssdk/awsmodel/
//	go run ./gen -botocore /path/to/botocore/data -out models
//
// The data directory is botocore/data of a clone of
// https://github.com/boto/botocore at the pinned tag, or of an installed
// botocore. Its version (botocore/__init__.py, beside it) must be the
// pinned one, so that the same sources always give the same archive.
//
// The services of awsmodel.Called keep all the parser reads (what calls
// need: protocol, operations, wire names, errors, and the constraints
// shape checks need); those of awsmodel.OutputsOnly keep only the
// operations' output shapes with their types, members, required members,
// enums and limits. Documentation and everything else is left out.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"stepwise/integration/awssdk/awsmodel"
)

// botocoreVersion is the botocore release the embedded models come from.
const botocoreVersion = "1.43.11"

// overrides set limits of shapes to those of the model AWS validated
// TestState's recorded calls with (botocore has since moved on): service
// → shape → its new maximum.
var overrides = map[string]map[string]float64{
	// Lambda's memory limit was 10240 MB when the calls were recorded.
	"lambda": {"MemorySize": 10240},
}

func main() {
	dir := flag.String("botocore", os.Getenv("BOTOCORE_DATA"), "botocore's data directory (default $BOTOCORE_DATA)")
	version := flag.String("version", botocoreVersion, "the botocore version the data directory must be")
	out := flag.String("out", "models", "the directory to write "+awsmodel.Archive+" in")
	flag.Parse()
	if err := run(*dir, *version, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(dir, version, out string) error {
	if dir == "" {
		return fmt.Errorf("name botocore's data directory: -botocore DIR or BOTOCORE_DATA")
	}
	if err := checkVersion(dir, version); err != nil {
		return err
	}
	models, err := build(dir, awsmodel.Called(), awsmodel.OutputsOnly())
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := awsmodel.WriteArchive(&buf, models); err != nil {
		return err
	}
	path := filepath.Join(out, awsmodel.Archive)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

var versionLine = regexp.MustCompile(`(?m)^__version__ = ['"]([^'"]+)['"]`)

// checkVersion checks that the botocore package around the data
// directory is of the version wanted.
func checkVersion(dir, want string) error {
	src, err := os.ReadFile(filepath.Join(dir, "..", "__init__.py"))
	if err != nil {
		return fmt.Errorf("botocore's version beside %s: %w", dir, err)
	}
	m := versionLine.FindSubmatch(src)
	if m == nil {
		return fmt.Errorf("botocore's version beside %s: no __version__", dir)
	}
	if got := string(m[1]); got != want {
		return fmt.Errorf("botocore in %s is %s, not %s (a new version: pass -version and update models/NOTICE)", dir, got, want)
	}
	return nil
}

// build reads the models of the services and reduces them: whole are
// the services whose models keep all the parser reads, outputsOnly those
// that keep only their output shapes. It returns each model's JSON.
func build(dir string, whole, outputsOnly []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, svc := range slices.Concat(whole, outputsOnly) {
		m, err := load(dir, svc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", svc, err)
		}
		if err := override(m, overrides[svc]); err != nil {
			return nil, fmt.Errorf("%s: %w", svc, err)
		}
		if slices.Contains(outputsOnly, svc) {
			m = outputs(m)
		}
		data, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", svc, err)
		}
		out[svc] = data
	}
	return out, nil
}

// load parses the newest API version of a service's model.
func load(dir, svc string) (*awsmodel.Model, error) {
	versions, err := filepath.Glob(filepath.Join(dir, svc, "*", "service-2.json*"))
	if err != nil || len(versions) == 0 {
		return nil, fmt.Errorf("no service model in %s (%v)", filepath.Join(dir, svc), err)
	}
	slices.Sort(versions)
	path := versions[len(versions)-1]
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if data, err = io.ReadAll(z); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	m, err := awsmodel.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func override(m *awsmodel.Model, maxima map[string]float64) error {
	for name, limit := range maxima {
		s, ok := m.Shapes[name]
		if !ok {
			return fmt.Errorf("no shape %s to override", name)
		}
		s.Max = &limit
	}
	return nil
}

// outputs is the model reduced to its operations' outputs: the shapes
// they reach, with their types, members, required members, enums and
// limits, and of the metadata only the endpoint prefix (which tells a
// model).
func outputs(m *awsmodel.Model) *awsmodel.Model {
	r := &awsmodel.Model{Metadata: awsmodel.Metadata{EndpointPrefix: m.Metadata.EndpointPrefix}, Operations: map[string]*awsmodel.Operation{}, Shapes: map[string]*awsmodel.Shape{}}
	ref := func(from *awsmodel.Ref) *awsmodel.Ref { return &awsmodel.Ref{ShapeName: from.ShapeName} }
	var walk func(name string)
	walk = func(name string) {
		if _, ok := r.Shapes[name]; ok {
			return
		}
		s := m.Shapes[name]
		k := &awsmodel.Shape{Type: s.Type}
		r.Shapes[name] = k
		if s.Document {
			k.Document = true
			return
		}
		k.Required, k.Enum, k.Min, k.Max = s.Required, s.Enum, s.Min, s.Max
		switch s.Type {
		case "structure":
			for _, mem := range s.Members {
				k.Members = append(k.Members, awsmodel.Member{Name: mem.Name, Ref: ref(mem.Ref)})
				walk(mem.ShapeName)
			}
		case "list":
			k.Member = ref(s.Member)
			walk(s.Member.ShapeName)
		case "map":
			k.Value = ref(s.Value)
			walk(s.Value.ShapeName)
		}
	}
	for name, op := range m.Operations {
		if op.Output == nil {
			continue
		}
		r.Operations[name] = &awsmodel.Operation{Output: ref(op.Output)}
		walk(op.Output.ShapeName)
	}
	return r
}
