package deploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"stepwise/internal/boundedfile"
)

// codeSource is where a function's code is on this machine.
type codeSource struct {
	path   string // absolute: a folder or a .zip
	source string // what the template gave: "inline", "asset:…", "s3://…", the path
	digest string // of the code's bytes
}

// userCacheDir is where inline code and code downloaded from S3 are kept
// (os.UserCacheDir, a test's folder in tests).
var userCacheDir = os.UserCacheDir

// lambdaCode finds an AWS::Lambda::Function's Code: inline (ZipFile),
// a CDK asset (the resource's aws:asset:path metadata) or an object in
// S3 at the AWS endpoint.
func (x *run) lambdaCode(ctx context.Context, r *resource, p resProps, runtime string) (*codeSource, error) {
	code, ok, err := p.obj("Code")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, p.errorf("Code", "a function needs its Code: ZipFile, or S3Bucket and S3Key")
	}
	if zf, err := code.str("ZipFile"); err != nil {
		return nil, err
	} else if zf != "" {
		return inlineCode(runtime, zf, code.path("ZipFile"))
	}
	if src, err := x.assetCode(r); src != nil || err != nil {
		return src, err
	}
	bucket, err := code.str("S3Bucket")
	if err != nil {
		return nil, err
	}
	key, err := code.str("S3Key")
	if err != nil {
		return nil, err
	}
	version, err := code.str("S3ObjectVersion")
	if err != nil {
		return nil, err
	}
	if bucket == "" || key == "" {
		return nil, code.errorf("S3Key", "the code is ZipFile, or S3Bucket and S3Key")
	}
	return x.s3Code(ctx, bucket, key, version, p.path("Code"))
}

// samCode finds an AWS::Serverless::Function's code: InlineCode, a CDK
// asset, CodeUri as a local folder or .zip (relative to the template's
// folder), s3://bucket/key, or {Bucket, Key, Version}.
func (x *run) samCode(ctx context.Context, r *resource, p resProps, runtime string) (*codeSource, error) {
	if inline, err := p.str("InlineCode"); err != nil {
		return nil, err
	} else if inline != "" {
		return inlineCode(runtime, inline, p.path("InlineCode"))
	}
	if src, err := x.assetCode(r); src != nil || err != nil {
		return src, err
	}
	switch uri := r.Props["CodeUri"].(type) {
	case nil:
		return nil, p.errorf("CodeUri", "a function needs its code: CodeUri (a folder, a .zip or s3://bucket/key) or InlineCode")
	case string:
		if rest, ok := strings.CutPrefix(uri, "s3://"); ok {
			bucket, key, _ := strings.Cut(rest, "/")
			if bucket == "" || key == "" {
				return nil, p.errorf("CodeUri", "%s: s3://bucket/key", uri)
			}
			return x.s3Code(ctx, bucket, key, "", p.path("CodeUri"))
		}
		return x.localCode(uri, p.path("CodeUri"))
	default:
		loc, _, err := p.obj("CodeUri")
		if err != nil {
			return nil, err
		}
		bucket, err := loc.str("Bucket")
		if err != nil {
			return nil, err
		}
		key, err := loc.str("Key")
		if err != nil {
			return nil, err
		}
		version, err := loc.str("Version")
		if err != nil {
			return nil, err
		}
		if bucket == "" || key == "" {
			return nil, p.errorf("CodeUri", "a location is {Bucket, Key}")
		}
		return x.s3Code(ctx, bucket, key, version, p.path("CodeUri"))
	}
}

// assetCode is the code of a CDK asset: the resource's metadata
// aws:asset:path names a folder or a .zip beside the template (in
// cdk.out). nil when the resource has none.
func (x *run) assetCode(r *resource) (*codeSource, error) {
	meta, ok := r.Def.Metadata.(map[string]any)
	if !ok {
		return nil, nil
	}
	path, ok := meta["aws:asset:path"].(string)
	if !ok || path == "" {
		return nil, nil
	}
	src, err := x.localCode(path, `Metadata."aws:asset:path"`)
	if err != nil {
		return nil, err
	}
	src.source = "asset:" + path
	return src, nil
}

// localCode is a folder or a .zip, relative to Options.BaseDir.
func (x *run) localCode(path, at string) (*codeSource, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cmpOr(x.opts.BaseDir, "."), path)
	}
	abs, err := filepath.Abs(abs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	info, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %s does not exist (read from %s)", at, path, filepath.Dir(abs))
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	if !info.IsDir() && !strings.EqualFold(filepath.Ext(abs), ".zip") {
		return nil, fmt.Errorf("%s: %s is neither a folder nor a .zip file", at, path)
	}
	digest, err := digestOf(abs, info.IsDir())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	return &codeSource{path: abs, source: filepath.ToSlash(filepath.Clean(path)), digest: digest}, nil
}

// digestOf hashes a file, or a folder's files with their paths.
func digestOf(path string, dir bool) (string, error) {
	h := sha256.New()
	if !dir {
		if err := hashFile(h, path); err != nil {
			return "", err
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	var files []string
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	for _, f := range files {
		rel, _ := filepath.Rel(path, f)
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		if err := hashFile(h, f); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile hashes a regular file; a FIFO or a device is refused, not
// read.
func hashFile(w io.Writer, path string) error {
	f, err := boundedfile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// cacheFolder is a folder of the user's cache for deployed code.
func cacheFolder(parts ...string) (string, error) {
	base, err := userCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for the code: %w", err)
	}
	return filepath.Join(append([]string{base, "stepwise", "deploy"}, parts...)...), nil
}

// inlineCode writes a function's inline source, as Lambda does, to
// index.py or index.js in a folder of the cache named by the source's
// digest: written once, the same folder on every deploy.
func inlineCode(runtime, source, at string) (*codeSource, error) {
	var file string
	switch {
	case strings.HasPrefix(runtime, "python"):
		file = "index.py"
	case strings.HasPrefix(runtime, "nodejs"):
		file = "index.js"
	default:
		return nil, fmt.Errorf("%s: inline code runs with the python3.x and nodejs runtimes, not %s", at, runtime)
	}
	sum := sha256.Sum256([]byte(file + "\x00" + source))
	digest := hex.EncodeToString(sum[:])
	dir, err := cacheFolder("inline", digest[:32])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	path := filepath.Join(dir, file)
	if b, err := os.ReadFile(path); err != nil || string(b) != source {
		if err := writeAtomically(path, strings.NewReader(source)); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
	}
	return &codeSource{path: dir, source: "inline", digest: digest}, nil
}

// writeAtomically writes a file whole or not at all.
func writeAtomically(path string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".part-*")
	if err != nil {
		return err
	}
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// s3Code downloads a function's .zip from S3 at the AWS endpoint into the
// cache, once per object version (its ETag).
func (x *run) s3Code(ctx context.Context, bucket, key, version, at string) (*codeSource, error) {
	where := "s3://" + bucket + "/" + key
	if x.d.AWS == nil {
		return nil, fmt.Errorf("%s: the code is at %s and no AWS endpoint is set\n"+
			"hint: pass --aws-endpoint (where the code was uploaded), or deploy from the folder that holds the code (a CDK app's cdk.out, with its assets)", at, where)
	}
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = x.d.AWS.URL != "" })
	head := &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	get := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if version != "" {
		head.VersionId, get.VersionId = aws.String(version), aws.String(version)
	}
	h, err := client.HeadObject(ctx, head)
	if err != nil {
		return nil, fmt.Errorf("%s: %s at %s: %w", at, where, x.d.AWS.URL, err)
	}
	sum := sha256.Sum256([]byte(x.d.AWS.URL + "\x00" + bucket + "\x00" + key + "\x00" + version + "\x00" + aws.ToString(h.ETag)))
	digest := hex.EncodeToString(sum[:])
	dir, err := cacheFolder("s3")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", at, err)
	}
	path := filepath.Join(dir, digest[:32]+".zip")
	if _, err := os.Stat(path); err != nil {
		out, err := client.GetObject(ctx, get)
		if err != nil {
			return nil, fmt.Errorf("%s: %s at %s: %w", at, where, x.d.AWS.URL, err)
		}
		err = writeAtomically(path, out.Body)
		out.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: download %s: %w", at, where, err)
		}
	}
	return &codeSource{path: path, source: where, digest: digest}, nil
}
