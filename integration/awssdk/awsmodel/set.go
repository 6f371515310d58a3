package awsmodel

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
)

//go:generate go run ./gen -out models

// Archive is the name of the embedded set in models/: a tar of
// <service>.json files, brotli-compressed.
const Archive = "models.tar.br"

//go:embed models/models.tar.br
var archive embed.FS

// called are the services whose whole models ship (botocore names): the
// aws-sdk integration calls them, and TestState checks their results.
var called = []string{
	"batch", "dynamodb", "ecs", "events", "glue", "kms", "lambda", "s3",
	"secretsmanager", "sns", "sqs", "ssm", "stepfunctions",
}

// checked are the services of which only the operations' output shapes
// ship: TestState checks the mocked results of their optimised and aws-sdk
// integrations, but the aws-sdk integration does not call them (unless a
// model directory adds them).
var checked = []string{
	"apigateway", "application-autoscaling", "athena", "autoscaling",
	"bedrock", "bedrock-runtime", "cloudformation", "cloudwatch", "codebuild",
	"comprehend", "databrew", "ec2", "ecr", "eks", "elbv2",
	"emr", "emr-containers", "emr-serverless", "firehose",
	"iam", "kinesis", "logs", "mediaconvert", "rds",
	"redshift-data", "rekognition", "route53", "sagemaker", "scheduler",
	"ses", "sesv2", "sts", "textract", "translate",
}

// Called lists the services whose whole models are embedded (botocore
// names), sorted: those the aws-sdk integration calls.
func Called() []string { return slices.Sorted(slices.Values(called)) }

// OutputsOnly lists the services of which only the output shapes are
// embedded, sorted.
func OutputsOnly() []string { return slices.Sorted(slices.Values(checked)) }

// Services lists every embedded service (botocore names), sorted.
func Services() []string { return slices.Sorted(slices.Values(slices.Concat(called, checked))) }

// raw caches the JSON of the embedded models asked for.
var raw sync.Map // service → []byte

// embeddedJSON returns the JSON of the embedded model of a service
// (botocore name); ok is false when there is none. A model is read out of
// the archive the first time it is asked for, and kept; the archive is
// not kept decompressed.
func embeddedJSON(service string) (data []byte, ok bool, err error) {
	if !slices.Contains(called, service) && !slices.Contains(checked, service) {
		return nil, false, nil
	}
	if v, ok := raw.Load(service); ok {
		return v.([]byte), true, nil
	}
	f, err := archive.Open("models/" + Archive)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	err = walkArchive(f, func(name string, body io.Reader) (bool, error) {
		if name != service {
			return false, nil
		}
		data, err = io.ReadAll(body)
		return true, err
	})
	if err != nil {
		return nil, false, err
	}
	if data == nil {
		return nil, false, fmt.Errorf("models archive: no model of %s", service)
	}
	v, _ := raw.LoadOrStore(service, data)
	return v.([]byte), true, nil
}

// walkArchive calls f with each model of an archive WriteArchive wrote,
// in order, until f says it is done.
func walkArchive(r io.Reader, f func(service string, body io.Reader) (done bool, err error)) error {
	tr := tar.NewReader(brotli.NewReader(r))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("models archive: %w", err)
		}
		name, ok := strings.CutSuffix(h.Name, ".json")
		if !ok || h.Typeflag != tar.TypeReg {
			return fmt.Errorf("models archive: unexpected entry %q", h.Name)
		}
		done, err := f(name, tr)
		if err != nil {
			return fmt.Errorf("models archive: %s: %w", h.Name, err)
		}
		if done {
			return nil
		}
	}
}

// WriteArchive writes a set of models (service name → the model's JSON),
// sorted by name, as a tar of <service>.json, brotli-compressed at its
// best with a 1 MiB window (the window is what a reader allocates). The
// same models always give the same bytes.
func WriteArchive(w io.Writer, models map[string][]byte) error {
	bw := brotli.NewWriterOptions(w, brotli.WriterOptions{Quality: brotli.BestCompression, LGWin: 20})
	tw := tar.NewWriter(bw)
	for _, name := range slices.Sorted(maps.Keys(models)) {
		data := models[name]
		h := &tar.Header{Name: name + ".json", Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return bw.Close()
}

// embeddedShapes caches the parsed embedded models of Embedded.
var embeddedShapes sync.Map // service → *Model, or error

// Embedded returns the embedded model of a service (botocore name),
// whole or outputs only, parsed once; it is shared, and must not be
// changed. It is the model TestState checks results against.
func Embedded(service string) (*Model, error) {
	if v, ok := embeddedShapes.Load(service); ok {
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		return v.(*Model), nil
	}
	data, ok, err := embeddedJSON(service)
	if err != nil {
		return nil, err
	}
	if !ok {
		// Not cached: the names asked for are the callers'.
		return nil, fmt.Errorf("%w %q", ErrUnknownService, service)
	}
	m, err := Parse(data)
	if err != nil {
		err = fmt.Errorf("model of %s: %w", service, err)
		embeddedShapes.Store(service, err)
		return nil, err
	}
	v, _ := embeddedShapes.LoadOrStore(service, m)
	return v.(*Model), nil
}

// modelNames maps the service names of Step Functions resources (the AWS
// SDK for Java v2 service ids, lower-cased) to botocore's where they
// differ.
var modelNames = map[string]string{
	"eventbridge":             "events",
	"sfn":                     "stepfunctions",
	"cloudwatchlogs":          "logs",
	"cognitoidentityprovider": "cognito-idp",
	"costexplorer":            "ce",
	"databasemigration":       "dms",
	"elasticloadbalancing":    "elb",
	"elasticloadbalancingv2":  "elbv2",
}

// KnowsAction reports whether the resource of an AWS SDK integration
// (the part after "aws-sdk:": "<service>:<action>") names an action its
// service's model has. A service with no model here is given the benefit
// of the doubt: AWS may know it.
func (ms *Models) KnowsAction(service, action string) bool {
	m, err := ms.Get(service)
	if err != nil {
		return true
	}
	_, ok := m.Operation(action)
	return ok
}

// ServiceNames lists the service names of the resources there are whole
// models for (the embedded ones of Called and those in dir): botocore's
// names, and the Step Functions names that differ from them (eventbridge,
// sfn, ...).
func ServiceNames(dir string) []string {
	var names []string
	add := func(files []string) {
		for _, file := range files {
			name, ok := strings.CutSuffix(strings.TrimSuffix(file, ".gz"), ".json")
			if ok {
				names = append(names, name, strings.ReplaceAll(name, "-", ""))
			}
		}
	}
	add(calledFiles())
	if dir != "" {
		add(dirFiles(os.DirFS(dir)))
	}
	for sfnName, botocore := range modelNames {
		for _, n := range names {
			if n == botocore {
				names = append(names, sfnName)
				break
			}
		}
	}
	return names
}

// calledFiles names the embedded whole models as the files of a model
// directory are named.
func calledFiles() []string {
	var files []string
	for _, s := range Called() {
		files = append(files, s+".json")
	}
	return files
}

func dirFiles(src fs.FS) []string {
	entries, _ := fs.ReadDir(src, ".")
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	return files
}

// Models finds and caches the whole service models calls need: the
// embedded ones of Called, and those in a directory (<service>.json or
// <service>.json.gz, botocore's format), which take precedence. The
// outputs-only models are not among them.
type Models struct {
	// Dir is the directory of extra models; "" means none.
	Dir string

	mu     sync.Mutex
	loaded map[string]*Model
}

// ErrUnknownService is returned for a service no model describes.
var ErrUnknownService = errors.New("no API model for the service")

// Get returns the model of a Step Functions service name (dynamodb,
// eventbridge, sfn, ...).
func (ms *Models) Get(service string) (*Model, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if m, ok := ms.loaded[service]; ok {
		return m, nil
	}
	data, err := ms.read(service)
	if err != nil {
		return nil, err
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("model of %s: %w", service, err)
	}
	if ms.loaded == nil {
		ms.loaded = map[string]*Model{}
	}
	ms.loaded[service] = m
	return m, nil
}

// read returns the uncompressed model of a service: from the directory,
// else from the embedded whole models.
func (ms *Models) read(service string) ([]byte, error) {
	names := []string{service}
	if n, ok := modelNames[service]; ok {
		names = []string{n, service}
	}
	if ms.Dir != "" {
		src := os.DirFS(ms.Dir)
		for _, name := range append(names, dashedNames(dirFiles(src), service)...) {
			for _, file := range []string{name + ".json.gz", name + ".json"} {
				data, err := fs.ReadFile(src, file)
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					return nil, err
				}
				if filepath.Ext(file) == ".gz" {
					return gunzip(data)
				}
				return data, nil
			}
		}
	}
	for _, name := range append(names, dashedNames(calledFiles(), service)...) {
		if !slices.Contains(called, name) {
			continue
		}
		data, ok, err := embeddedJSON(name)
		if err != nil {
			return nil, err
		}
		if ok {
			return data, nil
		}
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownService, service)
}

// dashedNames are the models among files whose botocore name is the
// service name with dashes (acmpca → acm-pca, emrserverless →
// emr-serverless).
func dashedNames(files []string, service string) []string {
	var names []string
	for _, file := range files {
		base := strings.TrimSuffix(strings.TrimSuffix(file, ".gz"), ".json")
		if strings.Contains(base, "-") && strings.ReplaceAll(base, "-", "") == service {
			names = append(names, base)
		}
	}
	return names
}

func gunzip(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
