package awsmodel

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	_ "embed"
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

// Archive is the name of the embedded set in models/: a zip of
// <service>.json.br files, each a model's JSON brotli-compressed, stored.
const Archive = "models.zip"

//go:embed models/models.zip
var archive string

// called are the services whose whole models ship (botocore names): the
// aws-sdk integration calls them, and TestState checks their results.
var called = []string{
	"acm", "apigateway", "application-autoscaling", "appsync", "athena",
	"autoscaling", "batch", "bedrock", "bedrock-runtime", "cloudformation",
	"cloudwatch", "codebuild", "codepipeline", "cognito-idp", "comprehend",
	"config", "databrew", "dynamodb", "ec2", "ecr", "ecs", "eks", "elbv2",
	"emr", "emr-containers", "emr-serverless", "events", "firehose", "glue",
	"iam", "kinesis", "kms", "lambda", "logs", "mediaconvert",
	"organizations", "polly", "rds", "redshift-data", "rekognition",
	"route53", "s3", "sagemaker", "scheduler", "secretsmanager", "ses",
	"sesv2", "sns", "sqs", "ssm", "stepfunctions", "sts", "textract",
	"transcribe", "translate", "xray",
}

// checked are the services of which only the operations' output shapes
// ship: TestState checks the mocked results of their optimised and aws-sdk
// integrations, but the aws-sdk integration does not call them (unless a
// model directory adds them). None is now: every service TestState checks
// is in called.
var checked []string

// Called lists the services whose whole models are embedded (botocore
// names), sorted: those the aws-sdk integration calls.
func Called() []string { return slices.Sorted(slices.Values(called)) }

// OutputsOnly lists the services of which only the output shapes are
// embedded, sorted.
func OutputsOnly() []string { return slices.Sorted(slices.Values(checked)) }

// Services lists every embedded service (botocore names), sorted.
func Services() []string { return slices.Sorted(slices.Values(slices.Concat(called, checked))) }

// index is the embedded archive's table of contents.
var index = sync.OnceValues(func() (map[string]*zip.File, error) {
	return readIndex(strings.NewReader(archive), int64(len(archive)))
})

// readIndex reads the table of contents of an archive WriteArchive wrote:
// the entries by service name.
func readIndex(r io.ReaderAt, size int64) (map[string]*zip.File, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("models archive: %w", err)
	}
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".json.br")
		if !ok || f.Method != zip.Store {
			return nil, fmt.Errorf("models archive: unexpected entry %q", f.Name)
		}
		files[name] = f
	}
	return files, nil
}

// embeddedJSON returns the JSON of the embedded model of a service
// (botocore name); ok is false when there is none.
func embeddedJSON(service string) (data []byte, ok bool, err error) {
	files, err := index()
	if err != nil {
		return nil, false, err
	}
	f, ok := files[service]
	if !ok {
		return nil, false, nil
	}
	data, err = readEntry(f)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// readEntry decompresses a model of the archive.
func readEntry(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("models archive: %s: %w", f.Name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(brotli.NewReader(rc))
	if err != nil {
		return nil, fmt.Errorf("models archive: %s: %w", f.Name, err)
	}
	return data, nil
}

// WriteArchive writes a set of models (service name → the model's JSON)
// as a zip of <service>.json.br, sorted by name, each brotli-compressed
// at its best and stored: a model is read without the others. The same
// models always give the same bytes.
func WriteArchive(w io.Writer, models map[string][]byte) error {
	zw := zip.NewWriter(w)
	for _, name := range slices.Sorted(maps.Keys(models)) {
		var buf bytes.Buffer
		bw := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: brotli.BestCompression, LGWin: 22})
		if _, err := bw.Write(models[name]); err != nil {
			return err
		}
		if err := bw.Close(); err != nil {
			return err
		}
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".json.br", Method: zip.Store})
		if err != nil {
			return err
		}
		if _, err := fw.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	return zw.Close()
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
