//go:build ignore

// gen.go extracts the output shapes of AWS API operations from botocore's
// service models into shapes/<service>.json.gz, the compact form package
// apishape embeds. Run it from this directory with a botocore data
// directory:
//
//	go run gen.go -botocore "$(python3 -c 'import botocore,os;print(os.path.dirname(botocore.__file__))')/data"
//
// Only what validation needs is kept: types, members, required members,
// enums and min/max constraints of the shapes an operation's output
// reaches. The models are Apache-2.0 licensed by Amazon.com, Inc.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// services are the botocore service names whose shapes are kept: those of
// the optimised integrations and the services most used through aws-sdk.
var services = []string{
	"apigateway", "application-autoscaling", "athena", "autoscaling", "batch",
	"bedrock", "bedrock-runtime", "cloudformation", "cloudwatch", "codebuild",
	"comprehend", "databrew", "dynamodb", "ec2", "ecr", "ecs", "eks", "elbv2",
	"emr", "emr-containers", "emr-serverless", "events", "firehose", "glue",
	"iam", "kinesis", "kms", "lambda", "logs", "mediaconvert", "rds",
	"redshift-data", "rekognition", "route53", "s3", "sagemaker", "scheduler",
	"secretsmanager", "ses", "sesv2", "sns", "sqs", "ssm", "stepfunctions",
	"sts", "textract", "translate",
}

// overrides adjust botocore's constraints to the model AWS validated the
// recorded TestState calls with (botocore has since moved on).
var overrides = map[string]map[string]map[string]any{
	// Lambda's memory limit was 10240 MB when the corpus was recorded.
	"lambda": {"MemorySize": {"max": 10240.0}},
}

type shape struct {
	T        string            `json:"t"`
	Members  map[string]string `json:"m,omitempty"`
	List     string            `json:"l,omitempty"`
	Value    string            `json:"v,omitempty"`
	Required []string          `json:"r,omitempty"`
	Enum     []string          `json:"e,omitempty"`
	Min      *float64          `json:"min,omitempty"`
	Max      *float64          `json:"max,omitempty"`
}

type model struct {
	Ops    map[string]string `json:"ops"`
	Shapes map[string]*shape `json:"shapes"`
}

func main() {
	dir := flag.String("botocore", "", "botocore data directory")
	out := flag.String("out", "shapes", "output directory")
	flag.Parse()
	if *dir == "" {
		log.Fatal("-botocore is required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	for _, svc := range services {
		m, err := extract(*dir, svc)
		if err != nil {
			log.Fatalf("%s: %v", svc, err)
		}
		if err := write(filepath.Join(*out, svc+".json.gz"), m); err != nil {
			log.Fatalf("%s: %v", svc, err)
		}
	}
}

func extract(dir, svc string) (*model, error) {
	versions, err := filepath.Glob(filepath.Join(dir, svc, "*", "service-2.json*"))
	if err != nil || len(versions) == 0 {
		return nil, fmt.Errorf("no service model (%v)", err)
	}
	sort.Strings(versions)
	raw, err := read(versions[len(versions)-1])
	if err != nil {
		return nil, err
	}
	var doc struct {
		Operations map[string]struct {
			Output *struct{ Shape string } `json:"output"`
		} `json:"operations"`
		Shapes map[string]map[string]json.RawMessage `json:"shapes"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	m := &model{Ops: map[string]string{}, Shapes: map[string]*shape{}}
	var walk func(name string) error
	walk = func(name string) error {
		if _, ok := m.Shapes[name]; ok {
			return nil
		}
		src, ok := doc.Shapes[name]
		if !ok {
			return fmt.Errorf("missing shape %s", name)
		}
		s := &shape{}
		m.Shapes[name] = s
		get := func(k string, v any) {
			if r, ok := src[k]; ok {
				if err := json.Unmarshal(r, v); err != nil {
					log.Fatalf("%s.%s: %v", name, k, err)
				}
			}
		}
		get("type", &s.T)
		var document bool
		get("document", &document)
		if document {
			s.T = "document"
			return nil
		}
		get("required", &s.Required)
		get("enum", &s.Enum)
		get("min", &s.Min)
		get("max", &s.Max)
		for k, v := range overrides[svc][name] {
			f := v.(float64)
			switch k {
			case "min":
				s.Min = &f
			case "max":
				s.Max = &f
			}
		}
		type ref struct{ Shape string }
		switch s.T {
		case "structure":
			var members map[string]ref
			get("members", &members)
			s.Members = map[string]string{}
			for k, r := range members {
				s.Members[k] = r.Shape
				if err := walk(r.Shape); err != nil {
					return err
				}
			}
		case "list":
			var r ref
			get("member", &r)
			s.List = r.Shape
			return walk(r.Shape)
		case "map":
			var r ref
			get("value", &r)
			s.Value = r.Shape
			return walk(r.Shape)
		}
		return nil
	}
	for name, op := range doc.Operations {
		if op.Output == nil {
			continue
		}
		m.Ops[name] = op.Output.Shape
		if err := walk(op.Output.Shape); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		r = z
	}
	return io.ReadAll(r)
}

func write(path string, m *model) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	z, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := z.Write(data); err != nil {
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
