// Package imagebuild builds Stepwise's container image without a
// container engine: one layer holding the static binary, CA certificates,
// a non-root user and its /data directory, with the image's
// configuration (user, volume, ports, entry point, health check, labels).
// It writes a docker-archive (what `docker load` and `podman load` read)
// holding one image per platform, or pushes them to a registry as one
// multi-platform index.
package imagebuild

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed parts.
const (
	// UID and GID are the user the server runs as, stepwise, not root.
	UID = 65532
	GID = 65532
	// User is the user and group's name.
	User = "stepwise"
	// BinaryPath is where the binary sits, the image's entry point.
	BinaryPath = "/usr/local/bin/stepwise"
	// DataDir is the volume: the database, caches and logs.
	DataDir = "/data"
	// CACertsPath is where the CA certificates sit, where Go looks first.
	CACertsPath = "/etc/ssl/certs/ca-certificates.crt"
)

// Env is the image's environment: the server listens on every address
// of the container (the API on 8083, the deployed templates' APIs on
// 3000), keeps its database in the volume, runs in container mode (the
// container's network is the boundary) and honours Step Functions Local's
// variables (AWS_DEFAULT_REGION, WAIT_TIME_SCALE, LAMBDA_ENDPOINT, ...),
// so that its env file works unchanged; caches and the home directory are
// in the volume too, the root file system may be read-only
// (docs/container.md).
var Env = []string{
	"PATH=/usr/local/bin",
	"STEPWISE_ADDR=0.0.0.0:8083",
	"STEPWISE_API_ADDR=0.0.0.0:3000",
	"STEPWISE_DB=" + DataDir + "/stepwise.db",
	"STEPWISE_CONTAINER=1",
	"STEPWISE_SFN_LOCAL_ENV=1",
	"HOME=" + DataDir,
	"XDG_CACHE_HOME=" + DataDir + "/cache",
	"TMPDIR=/tmp",
}

// Cmd is the image's command, after the entry point: the settings are
// Env's, which a container's own environment overrides.
var Cmd = []string{"serve"}

// Ports are the ports the image exposes: the API and the console (8083)
// and the deployed templates' APIs (3000).
var Ports = []string{"8083/tcp", "3000/tcp"}

// Healthcheck is the image's health check: `stepwise health` asks the
// server's /readyz.
var Healthcheck = v1.HealthConfig{
	Test:        []string{"CMD", BinaryPath, "health"},
	Interval:    10 * time.Second,
	Timeout:     5 * time.Second,
	StartPeriod: 10 * time.Second,
	Retries:     3,
}

// Options describe one build.
type Options struct {
	// Version is the release (the image's version label).
	Version string
	// Created is the time the image says it was made, and its files'
	// modification time (the commit's time keeps builds reproducible).
	Created time.Time
	// Labels are added to the image's (org.opencontainers.image.*).
	Labels map[string]string
	// CACerts is the CA certificates bundle (PEM).
	CACerts []byte
}

// Image is the image of one platform's binary, arch one of Go's
// (amd64, arm64).
func Image(binary []byte, arch string, o Options) (v1.Image, error) {
	if len(binary) == 0 {
		return nil, fmt.Errorf("imagebuild: the %s binary is empty", arch)
	}
	if len(o.CACerts) == 0 {
		return nil, fmt.Errorf("imagebuild: no CA certificates")
	}
	if !bytes.HasPrefix(binary, []byte("\x7fELF")) {
		return nil, fmt.Errorf("imagebuild: the %s binary is not an ELF executable (a Linux binary)", arch)
	}
	fs, err := rootFS(binary, o.CACerts, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(fs)), nil
	}, tarball.WithCompressionLevel(gzip.BestCompression), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("imagebuild: the %s layer: %w", arch, err)
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{
		Layer:     layer,
		MediaType: types.DockerLayer,
		History: v1.History{
			Created:   v1.Time{Time: o.Created},
			CreatedBy: "imagebuild: " + BinaryPath + ", CA certificates, user " + User + ", " + DataDir,
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS = "linux"
	cf.Architecture = arch
	if arch == "arm64" {
		cf.Variant = "v8"
	}
	cf.Created = v1.Time{Time: o.Created}
	cf.Config = Config(o)
	return mutate.ConfigFile(img, cf)
}

// Config is the image's configuration (what a container runs).
func Config(o Options) v1.Config {
	labels := map[string]string{
		"org.opencontainers.image.title":       "stepwise",
		"org.opencontainers.image.description": "A self-hosted engine for the Amazon States Language that speaks the AWS Step Functions API",
	}
	if o.Version != "" {
		labels["org.opencontainers.image.version"] = o.Version
	}
	if !o.Created.IsZero() {
		labels["org.opencontainers.image.created"] = o.Created.UTC().Format(time.RFC3339)
	}
	for k, v := range o.Labels {
		if v != "" {
			labels[k] = v
		}
	}
	ports := map[string]struct{}{}
	for _, p := range Ports {
		ports[p] = struct{}{}
	}
	hc := Healthcheck
	hc.Test = append([]string(nil), hc.Test...)
	return v1.Config{
		User:         fmt.Sprintf("%d:%d", UID, GID),
		WorkingDir:   DataDir,
		Env:          append([]string(nil), Env...),
		Entrypoint:   []string{BinaryPath},
		Cmd:          append([]string(nil), Cmd...),
		Volumes:      map[string]struct{}{DataDir: {}},
		ExposedPorts: ports,
		Labels:       labels,
		Healthcheck:  &hc,
		StopSignal:   "SIGTERM",
	}
}

// entry is one file or directory of the layer.
type entry struct {
	name     string
	mode     int64
	uid, gid int
	data     []byte
	dir      bool
}

// rootFS is the layer's tar: the directories, /etc's user and group, the
// CA certificates and the binary, owned by root but for /data.
func rootFS(binary, caCerts []byte, mtime time.Time) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/sbin/nologin\n", User, UID, GID, User, DataDir)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", User, GID)
	entries := []entry{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(CACertsPath, "/"), mode: 0o644, data: caCerts},
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: strings.TrimPrefix(BinaryPath, "/"), mode: 0o755, data: binary},
		{name: strings.TrimPrefix(DataDir, "/") + "/", mode: 0o755, uid: UID, gid: GID, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		if e.uid == UID {
			h.Uname, h.Gname = User, User
		} else {
			h.Uname, h.Gname = "root", "root"
		}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("imagebuild: %s: %w", path.Clean(e.name), err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("imagebuild: %s: %w", path.Clean(e.name), err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Sizes are an image's layer's sizes, in bytes.
type Sizes struct {
	Compressed, Uncompressed int64
}

// LayerSizes are img's sizes, summed over its layers.
func LayerSizes(img v1.Image) (Sizes, error) {
	layers, err := img.Layers()
	if err != nil {
		return Sizes{}, err
	}
	var s Sizes
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			return Sizes{}, err
		}
		s.Compressed += n
		rc, err := l.Uncompressed()
		if err != nil {
			return Sizes{}, err
		}
		u, err := io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			return Sizes{}, err
		}
		s.Uncompressed += u
	}
	return s, nil
}
