package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/spf13/cobra"

	"stepwise/deploy"
	"stepwise/deploy/cfn"
	"stepwise/internal/boundedfile"
	"stepwise/server"
)

type deployCommand struct {
	*CommandBase
	endpoint  string
	stackName string
	params    []string
	stacks    []string
	delete    bool
	adopt     bool
	timeout   time.Duration
}

func (c *deployCommand) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "deploy TEMPLATE|CDK.OUT",
		Short: "Deploy a CloudFormation or SAM template, or a CDK app's cdk.out, to a server",
		Long: `Deploy a CloudFormation or SAM template (JSON or YAML), or the stacks of a
CDK app's synthesized cloud assembly (cdk.out), to a running server:
state machines, activities, versions, aliases and schedules are made on
it, Lambda functions become its local functions (python3.x, nodejs18.x
and later, provided.*: run with this machine's python3, node or the
function's bootstrap), and DynamoDB tables, S3 buckets, SQS queues, SNS
topics and EventBridge buses are made at its --aws-endpoint. Other
resource types are named (so Ref and Fn::GetAtt resolve) and listed as
skipped.

A second deploy of the same template changes nothing; a changed one
updates what changed and deletes what left it. --delete deletes the
stack's resources. A stack owns what it made: a named resource that is
there already and that the stack did not make (made by hand) fails the
deploy, before anything is made, unless --adopt takes it over (it is then
the stack's own, and --delete deletes it). The server reads the code and definition files named
by the template, so it runs on this machine; deploys are taken from this
machine only.

  stepwise deploy template.yaml --parameter-overrides Env=dev
  stepwise deploy cdk.out
  stepwise deploy template.yaml --delete`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return c.run(cmd.Context(), args[0]) },
	}
	cmd.Flags().StringVar(&c.endpoint, "endpoint", "http://127.0.0.1:8083", "the server's URL")
	cmd.Flags().StringVar(&c.stackName, "stack-name", "", "the stack's name (default: the template's folder for template.yaml/json, else its file name; a CDK stack's own name)")
	cmd.Flags().StringArrayVar(&c.params, "parameter-overrides", nil, "a template parameter, KEY=VALUE or ParameterKey=KEY,ParameterValue=VALUE (repeatable)")
	cmd.Flags().StringArrayVar(&c.stacks, "stack", nil, "of a cdk.out, deploy only this stack (repeatable; default: all)")
	cmd.Flags().BoolVar(&c.delete, "delete", false, "delete the stack and its resources")
	cmd.Flags().BoolVar(&c.adopt, "adopt", false, "take over a named resource that is there and that the stack did not make: it becomes the stack's own, deleted with it")
	cmd.Flags().DurationVar(&c.timeout, "timeout", 10*time.Minute, "how long to wait for the server")
	return cmd
}

// deployUnit is one stack to deploy: a template, or a stack of a
// cdk.out.
type deployUnit struct {
	stackName, templatePath, baseDir string
	params                           map[string]string
}

// deployUnits reads what path holds: a template file or a cdk.out.
func deployUnits(path, stackName string, params map[string]string, stacks []string) ([]deployUnit, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if deploy.IsAssembly(abs) {
		if stackName != "" {
			return nil, &UsageError{"--stack-name is for a template; a cdk.out's stacks have their names (pick with --stack)"}
		}
		found, err := deploy.ReadAssembly(abs, stacks...)
		if err != nil {
			return nil, err
		}
		var units []deployUnit
		for _, s := range found {
			p := map[string]string{}
			for k, v := range s.Parameters {
				p[k] = v
			}
			for k, v := range params {
				p[k] = v
			}
			units = append(units, deployUnit{stackName: s.Name, templatePath: s.TemplatePath, baseDir: s.Dir, params: p})
		}
		return units, nil
	}
	if len(stacks) > 0 {
		return nil, &UsageError{"--stack picks stacks of a cdk.out; " + path + " is a template"}
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, &UsageError{path + " is a folder without a manifest.json: give a template file or a CDK app's cdk.out"}
	}
	if stackName == "" {
		stackName = defaultStackName(abs)
	}
	return []deployUnit{{stackName: stackName, templatePath: abs, baseDir: filepath.Dir(abs), params: params}}, nil
}

// defaultStackName names a template's stack: its folder's name for a
// template.yaml (SAM's habit), else its file name, made a valid stack
// name.
func defaultStackName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if base == "template" || base == "samconfig" {
		base = filepath.Base(filepath.Dir(path))
	}
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9' && b.Len() > 0:
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "stepwise"
	}
	if len(name) > 128 {
		name = name[:128]
	}
	return name
}

// parseParameterOverrides reads --parameter-overrides values.
func parseParameterOverrides(specs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, spec := range specs {
		if rest, ok := strings.CutPrefix(spec, "ParameterKey="); ok {
			key, val, found := strings.Cut(rest, ",ParameterValue=")
			if !found || key == "" {
				return nil, &UsageError{fmt.Sprintf("--parameter-overrides %q: give ParameterKey=KEY,ParameterValue=VALUE", spec)}
			}
			out[key] = val
			continue
		}
		key, val, found := strings.Cut(spec, "=")
		if !found || key == "" {
			return nil, &UsageError{fmt.Sprintf("--parameter-overrides %q: give KEY=VALUE", spec)}
		}
		out[key] = val
	}
	return out, nil
}

func (c *deployCommand) run(ctx context.Context, path string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if c.delete && c.adopt {
		return &UsageError{"--adopt takes over resources in a deploy; --delete deletes what the stack has"}
	}
	params, err := parseParameterOverrides(c.params)
	if err != nil {
		return err
	}
	units, err := deployUnits(path, c.stackName, params, c.stacks)
	if err != nil {
		return err
	}
	if c.delete {
		// Dependent stacks go first.
		for i, j := 0, len(units)-1; i < j; i, j = i+1, j-1 {
			units[i], units[j] = units[j], units[i]
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	for _, u := range units {
		req := server.DeployRequest{StackName: u.stackName, Delete: c.delete, Adopt: c.adopt}
		if !c.delete {
			text, err := boundedfile.Read(ctx, u.templatePath, maxTemplateFile)
			if err != nil {
				return err
			}
			// A template that does not parse is told here, before the
			// server is asked.
			if _, err := cfn.Parse(text); err != nil {
				return fmt.Errorf("%s: %w", u.templatePath, err)
			}
			req.Template, req.TemplatePath, req.BaseDir, req.Parameters = string(text), u.templatePath, u.baseDir, u.params
		}
		resp, err := postDeploy(ctx, c.endpoint, &req)
		if err != nil {
			return err
		}
		// A deploy that failed before it did anything has nothing to
		// report but its error.
		if resp.Report != nil && (resp.Error == "" || len(resp.Report.Changes) > 0) {
			resp.Report.WriteText(c.Out)
		}
		if resp.Error != "" {
			return errors.New(resp.Error)
		}
	}
	return nil
}

// postDeploy sends a deploy to the server, signed when the environment
// names AWS credentials (a server with --credentials takes only signed
// ones).
func postDeploy(ctx context.Context, endpoint string, req *server.DeployRequest) (*server.DeployResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	url := strings.TrimSuffix(endpoint, "/") + server.DeployPath
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &UsageError{fmt.Sprintf("--endpoint %q: %v", endpoint, err)}
	}
	hreq.Header.Set("Content-Type", "application/json")
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" || os.Getenv("AWS_PROFILE") != "" {
		if err := signFor(ctx, server.DeploySigningName, hreq, body); err != nil {
			return nil, err
		}
	}
	hresp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("no server at %s (start one with `stepwise serve`): %w", endpoint, err)
	}
	defer hresp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hresp.Body, server.MaxDeployBody))
	if err != nil {
		return nil, err
	}
	var resp server.DeployResponse
	if err := json.Unmarshal(data, &resp); err != nil || (resp.Report == nil && resp.Error == "") {
		return nil, fmt.Errorf("%s answered %s: %s", url, hresp.Status, strings.TrimSpace(string(data)))
	}
	return &resp, nil
}

// signFor signs a request to one of the server's own routes (deploy, the
// clock) with SigV4 for service, with the AWS SDK's default credentials
// and region (us-east-1 when none is set).
func signFor(ctx context.Context, service string, r *http.Request, body []byte) error {
	cfg, err := loadOwnConfig(ctx)
	if err != nil {
		return fmt.Errorf("aws credentials: %w", err)
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("aws credentials: %w", err)
	}
	sum := sha256.Sum256(body)
	region := cmpOrString(cfg.Region, "us-east-1")
	return v4.NewSigner().SignHTTP(ctx, aws.Credentials(creds), r, hex.EncodeToString(sum[:]), service, region, time.Now())
}

func cmpOrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
