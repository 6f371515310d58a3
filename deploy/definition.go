package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"stepwise/deploy/cfn"
	"stepwise/internal/boundedfile"
)

// maxDefinitionFile is the largest definition file CloudFormation reads
// from S3.
const maxDefinitionFile = 1 << 20

// definitionSource is where a state machine's definition comes from:
// exactly one of Object (Definition), Text (DefinitionString), S3
// (DefinitionS3Location, or SAM's DefinitionUri as an object) or Path
// (SAM's DefinitionUri as a local path or an s3:// URI).
type definitionSource struct {
	Object map[string]any
	Text   *string
	S3     *definitionS3
	Path   string
	// Subs are DefinitionSubstitutions.
	Subs map[string]any
	// Where names the property the definition came from, for messages.
	Where string
}

type definitionS3 struct {
	Bucket, Key, Version string
}

// cfnDefinition reads AWS::StepFunctions::StateMachine's definition
// properties.
func cfnDefinition(props map[string]any) (*definitionSource, error) {
	src := &definitionSource{}
	n := 0
	if v, ok := props["Definition"]; ok {
		n++
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Properties.Definition: the definition is an object, got %s", cfn.TypeName(v))
		}
		src.Object, src.Where = m, "Definition"
	}
	if v, ok := props["DefinitionString"]; ok {
		n++
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("Properties.DefinitionString: a string, got %s", cfn.TypeName(v))
		}
		src.Text, src.Where = &s, "DefinitionString"
	}
	if v, ok := props["DefinitionS3Location"]; ok {
		n++
		loc, err := definitionS3Of(v, "DefinitionS3Location")
		if err != nil {
			return nil, err
		}
		src.S3, src.Where = loc, "DefinitionS3Location"
	}
	switch {
	case n == 0:
		return nil, errors.New("Property validation failed. Required key [DefinitionS3Location], [Definition] or [DefinitionString] not found.")
	case n > 1:
		return nil, errors.New("Property validation failed. Please use either [DefinitionS3Location], [Definition] or [DefinitionString] but not both.")
	}
	var err error
	src.Subs, err = substitutionsOf(props["DefinitionSubstitutions"])
	return src, err
}

// samDefinition reads AWS::Serverless::StateMachine's Definition or
// DefinitionUri.
func samDefinition(props map[string]any) (*definitionSource, error) {
	src := &definitionSource{}
	def, hasDef := props["Definition"]
	uri, hasURI := props["DefinitionUri"]
	switch {
	case hasDef && hasURI:
		return nil, errors.New("Specify either 'Definition' or 'DefinitionUri' property and not both.")
	case hasDef:
		m, ok := def.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Properties.Definition: the definition is an object, got %s", cfn.TypeName(def))
		}
		src.Object, src.Where = m, "Definition"
	case hasURI:
		src.Where = "DefinitionUri"
		if s, ok := uri.(string); ok {
			if s == "" {
				return nil, errors.New("Properties.DefinitionUri: empty")
			}
			src.Path = s
		} else {
			loc, err := definitionS3Of(uri, "DefinitionUri")
			if err != nil {
				return nil, err
			}
			src.S3 = loc
		}
	default:
		return nil, errors.New("Either 'Definition' or 'DefinitionUri' property must be specified.")
	}
	var err error
	src.Subs, err = substitutionsOf(props["DefinitionSubstitutions"])
	return src, err
}

func definitionS3Of(v any, where string) (*definitionS3, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("Properties.%s: {Bucket, Key, Version}, got %s", where, cfn.TypeName(v))
	}
	loc := &definitionS3{}
	loc.Bucket, _ = m["Bucket"].(string)
	loc.Key, _ = m["Key"].(string)
	if ver, ok := m["Version"]; ok {
		loc.Version = defText(ver)
	}
	if loc.Bucket == "" || loc.Key == "" {
		return nil, fmt.Errorf("Properties.%s: needs a Bucket and a Key", where)
	}
	return loc, nil
}

// substitutionsOf checks DefinitionSubstitutions: a map whose values are
// strings, numbers or booleans.
func substitutionsOf(v any) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("Properties.DefinitionSubstitutions: a map of names to values, got %s", cfn.TypeName(v))
	}
	for _, k := range sortedKeys(m) {
		switch m[k].(type) {
		case string, json.Number, bool:
		default:
			return nil, fmt.Errorf("Properties.DefinitionSubstitutions.%s: a value is a string, a number or a boolean, got %s", k, cfn.TypeName(m[k]))
		}
	}
	return m, nil
}

// definition is the definition's JSON text: the object serialized, the
// string as it is, or the file (JSON or YAML) read from the local copy
// the packaging left (the resource's Metadata "aws:asset:path", CDK's),
// from a local path (SAM's DefinitionUri), or from S3 at the AWS
// endpoint; then DefinitionSubstitutions applied.
func (x *run) definition(ctx context.Context, r *resource, src *definitionSource) (string, error) {
	var text string
	switch {
	case src.Object != nil:
		b, err := marshalDefinition(src.Object)
		if err != nil {
			return "", fmt.Errorf("Properties.Definition: %w", err)
		}
		text = b
	case src.Text != nil:
		text = *src.Text
	default:
		data, from, err := x.definitionFile(ctx, r, src)
		if err != nil {
			return "", err
		}
		if len(data) > maxDefinitionFile {
			return "", fmt.Errorf("Properties.%s: %s: State Machine definition file cannot exceed 1MB.", src.Where, from)
		}
		if bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n\ufeff"), []byte("{")) {
			// JSON: as written, its placeholders substituted as text
			// before it is read (a number's may stand unquoted).
			text, err := substituteDefinition(string(data), src.Subs)
			if err != nil {
				return "", err
			}
			if _, err := cfn.Decode([]byte(text)); err != nil {
				return "", fmt.Errorf("Properties.%s: %s: Invalid StateMachine definition file.\n%v", src.Where, from, strings.TrimPrefix(err.Error(), "template: "))
			}
			return text, nil
		}
		doc, err := cfn.Decode(data)
		if err != nil {
			return "", fmt.Errorf("Properties.%s: %s: Invalid StateMachine definition file.\n%v", src.Where, from, strings.TrimPrefix(err.Error(), "template: "))
		}
		if text, err = marshalDefinition(doc); err != nil {
			return "", fmt.Errorf("Properties.%s: %s: %w", src.Where, from, err)
		}
	}
	return substituteDefinition(text, src.Subs)
}

// definitionFile reads a definition file and says where it came from.
func (x *run) definitionFile(ctx context.Context, r *resource, src *definitionSource) ([]byte, string, error) {
	path := src.Path
	if asset := definitionAssetPath(r.Def.Metadata); asset != "" && src.S3 != nil {
		path = asset
	}
	if strings.HasPrefix(path, "s3://") {
		bucket, key, _ := strings.Cut(strings.TrimPrefix(path, "s3://"), "/")
		if bucket == "" || key == "" {
			return nil, "", fmt.Errorf("Properties.%s: %q is not an s3://BUCKET/KEY URI", src.Where, path)
		}
		src = &definitionSource{S3: &definitionS3{Bucket: bucket, Key: key}, Where: src.Where}
		path = ""
	}
	if path != "" {
		full := path
		if !filepath.IsAbs(full) {
			full = filepath.Join(x.opts.BaseDir, path)
		}
		data, err := boundedfile.Read(ctx, full, maxDefinitionFile)
		var tooLarge *boundedfile.TooLargeError
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, "", fmt.Errorf("Properties.%s: the definition file %s does not exist", src.Where, full)
		case errors.As(err, &tooLarge):
			return nil, "", fmt.Errorf("Properties.%s: %s: State Machine definition file cannot exceed 1MB.", src.Where, full)
		case err != nil:
			return nil, "", fmt.Errorf("Properties.%s: the definition file: %w", src.Where, err)
		}
		return data, full, nil
	}
	data, err := x.readS3Definition(ctx, src.S3)
	where := "s3://" + src.S3.Bucket + "/" + src.S3.Key
	if err != nil {
		return nil, "", fmt.Errorf("Properties.%s: %s: %w", src.Where, where, err)
	}
	return data, where, nil
}

// definitionAssetPath is the local file a CDK asset's metadata names
// for the definition (its "aws:asset:property", when given, is
// DefinitionS3Location).
func definitionAssetPath(metadata any) string {
	m, _ := metadata.(map[string]any)
	if prop, ok := m["aws:asset:property"].(string); ok && prop != "DefinitionS3Location" {
		return ""
	}
	p, _ := m["aws:asset:path"].(string)
	return p
}

// readS3Definition reads an object from S3 at the AWS endpoint.
func (x *run) readS3Definition(ctx context.Context, loc *definitionS3) ([]byte, error) {
	ep := x.d.AWS
	if ep == nil {
		return nil, errors.New("the definition is in S3 and no AWS endpoint is configured to read it from; set one, or keep the definition in a local file (a SAM DefinitionUri path, a CDK asset)")
	}
	var cfg aws.Config
	if ep.AccessKeyID != "" {
		cfg = aws.Config{Region: cmpOr(ep.Region, x.region()),
			Credentials: credentials.NewStaticCredentialsProvider(ep.AccessKeyID, ep.SecretAccessKey, ep.SessionToken)}
	} else {
		var err error
		if cfg, err = config.LoadDefaultConfig(ctx, config.WithRegion(cmpOr(ep.Region, x.region()))); err != nil {
			return nil, err
		}
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if ep.URL != "" {
			o.BaseEndpoint = aws.String(ep.URL)
			o.UsePathStyle = true
		}
	})
	in := &s3.GetObjectInput{Bucket: aws.String(loc.Bucket), Key: aws.String(loc.Key)}
	if loc.Version != "" {
		in.VersionId = aws.String(loc.Version)
	}
	out, err := client.GetObject(ctx, in)
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(io.LimitReader(out.Body, maxDefinitionFile+1))
}

// marshalDefinition is a definition object as JSON: keys sorted, '<',
// '>' and '&' left as they are.
func marshalDefinition(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// substituteDefinition replaces each ${Name} of subs in the definition's text by
// its value's text, as CloudFormation does: again over the result while
// a replacement brings in another placeholder; a placeholder with no
// substitution is left as it is.
func substituteDefinition(text string, subs map[string]any) (string, error) {
	if len(subs) == 0 {
		return text, nil
	}
	keys := make([]string, 0, len(subs))
	for k := range subs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		pairs = append(pairs, "${"+k+"}", defText(subs[k]))
	}
	r := strings.NewReplacer(pairs...)
	for range len(keys) + 1 {
		next := r.Replace(text)
		if next == text {
			return text, nil
		}
		text = next
	}
	return "", errors.New("Properties.DefinitionSubstitutions: the substitutions bring in one another's placeholders without end")
}

// defText is a string's, number's or boolean's text.
func defText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		if v {
			return "true"
		}
		return "false"
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
