package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// AWS::Serverless::LayerVersion and AWS::Lambda::LayerVersion: a layer
// whose content is a folder or a .zip on this machine (ContentUri, a CDK
// asset, or Content's S3 object at the AWS endpoint). Ref is its version
// ARN, arn:aws:lambda:REGION:ACCOUNT:layer:NAME:N, N one more on every
// change of its content; a function's Layers naming it runs with its
// folder as Lambda's /opt (see the lambda package's build.go). A layer
// given by the ARN of one not in the template is not there locally: the
// deploy warns.
type layerKind struct{}

const (
	samLayer    = "AWS::Serverless::LayerVersion"
	lambdaLayer = "AWS::Lambda::LayerVersion"
)

func init() {
	register(layerKind{}, samLayer, lambdaLayer)
}

// layerSpec is what a layer was deployed with.
type layerSpec struct {
	Source  string `json:"source"`
	Digest  string `json:"digest"`
	Path    string `json:"path"`
	Version int    `json:"version"`
}

func (layerKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	p := propsOf(r)
	name, err := p.str("LayerName")
	if err != nil {
		return nil, "", err
	}
	name = cmpOr(name, x.name(r.ID, 64))
	src, err := x.layerContent(ctx, r, p)
	if err != nil {
		return nil, "", err
	}
	version := 1
	var old layerSpec
	if prev != nil && json.Unmarshal(prev.Spec, &old) == nil && old.Version > 0 {
		version = old.Version
		if old.Digest != src.digest || old.Path != src.path {
			version++
		}
	}
	spec := layerSpec{Source: src.source, Digest: src.digest, Path: src.path, Version: version}
	arn := "arn:" + x.partition() + ":lambda:" + x.region() + ":" + x.account() + ":layer:" + name
	varn := arn + ":" + strconv.Itoa(version)
	rec := &Record{Physical: varn, Attrs: map[string]any{"LayerVersionArn": varn, "LayerArn": arn}, Spec: specOf(spec)}
	switch {
	case prev == nil:
		return rec, Created, nil
	case sameSpec(prev, rec.Spec):
		return rec, Unchanged, nil
	case prev.Physical != varn:
		return rec, Replaced, nil
	}
	return rec, Updated, nil
}

func (layerKind) remove(context.Context, *run, string, *Record) error { return nil }

// layerContent finds a layer's content as samCode and lambdaCode find a
// function's.
func (x *run) layerContent(ctx context.Context, r *resource, p resProps) (*codeSource, error) {
	if src, err := x.assetCode(r); src != nil || err != nil {
		return src, err
	}
	if r.Type == samLayer {
		switch uri := r.Props["ContentUri"].(type) {
		case nil:
			return nil, p.errorf("ContentUri", "a layer needs its content: ContentUri (a folder, a .zip or s3://bucket/key)")
		case string:
			if rest, ok := strings.CutPrefix(uri, "s3://"); ok {
				bucket, key, _ := strings.Cut(rest, "/")
				if bucket == "" || key == "" {
					return nil, p.errorf("ContentUri", "%s: s3://bucket/key", uri)
				}
				return x.s3Code(ctx, bucket, key, "", p.path("ContentUri"))
			}
			return x.localCode(uri, p.path("ContentUri"))
		}
		loc, _, err := p.obj("ContentUri")
		if err != nil {
			return nil, err
		}
		bucket, _ := loc.str("Bucket")
		key, _ := loc.str("Key")
		version, _ := loc.str("Version")
		if bucket == "" || key == "" {
			return nil, p.errorf("ContentUri", "a location is {Bucket, Key}")
		}
		return x.s3Code(ctx, bucket, key, version, p.path("ContentUri"))
	}
	content, ok, err := p.obj("Content")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, p.errorf("Content", "a layer needs its Content: S3Bucket and S3Key")
	}
	bucket, _ := content.str("S3Bucket")
	key, _ := content.str("S3Key")
	version, _ := content.str("S3ObjectVersion")
	if bucket == "" || key == "" {
		return nil, content.errorf("S3Key", "the content is S3Bucket and S3Key")
	}
	return x.s3Code(ctx, bucket, key, version, p.path("Content"))
}

// functionLayers finds the folders of a function's Layers (ARNs, once
// resolved): those of the stack's layers; any other is warned of and
// left out.
func (x *run) functionLayers(r *resource, p resProps) ([]string, error) {
	raw, ok := r.Props["Layers"]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, p.errorf("Layers", "a list of layer version ARNs")
	}
	var dirs []string
	seen := map[string]bool{}
	for i, v := range list {
		arn, ok := v.(string)
		if !ok || arn == "" {
			return nil, fmt.Errorf("%s[%d]: a layer version ARN", p.path("Layers"), i)
		}
		if seen[arn] { // Globals' and the function's own, merged
			continue
		}
		seen[arn] = true
		dir := x.layerPath(arn)
		if dir == "" {
			x.warn("%s (%s): layer %s is not available locally (only the template's layers are): the function runs without it", r.ID, r.Type, arn)
			continue
		}
		dirs = append(dirs, dir)
	}
	return dirs, nil
}

// layerPath is the folder or .zip of the stack's layer of that version
// ARN, "" when the stack has none.
func (x *run) layerPath(arn string) string {
	if x.rec == nil {
		return ""
	}
	for _, rec := range x.rec.Resources {
		if rec == nil || (rec.Type != samLayer && rec.Type != lambdaLayer) || rec.Physical != arn {
			continue
		}
		var spec layerSpec
		if json.Unmarshal(rec.Spec, &spec) == nil {
			return spec.Path
		}
	}
	return ""
}
