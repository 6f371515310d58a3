package imagebuild

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"
)

var created = time.Date(2026, 11, 27, 15, 20, 0, 0, time.UTC)

func build(t *testing.T, arch string) v1.Image {
	t.Helper()
	img, err := Image([]byte("\x7fELF binary for "+arch), arch, Options{
		Version: "v1.2.0", Created: created, CACerts: []byte("-----BEGIN CERTIFICATE-----\n"),
		Labels: map[string]string{"org.opencontainers.image.source": "https://example.com/stepwise", "org.opencontainers.image.licenses": ""},
	})
	require.NoError(t, err)
	return img
}

// TestImage: the image's configuration (non-root user, /data volume,
// ports, entry point, health check, labels, platform) and its one
// layer's files, owners and modes.
func TestImage(t *testing.T) {
	t.Parallel()
	img := build(t, "arm64")
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, "linux", cf.OS)
	require.Equal(t, "arm64", cf.Architecture)
	require.Equal(t, "v8", cf.Variant)
	require.Equal(t, created, cf.Created.Time)
	c := cf.Config
	require.Equal(t, "65532:65532", c.User)
	require.Equal(t, "/data", c.WorkingDir)
	require.Equal(t, map[string]struct{}{"/data": {}}, c.Volumes)
	require.Equal(t, map[string]struct{}{"8083/tcp": {}, "3000/tcp": {}}, c.ExposedPorts)
	require.Equal(t, []string{"/usr/local/bin/stepwise"}, c.Entrypoint)
	require.Equal(t, []string{"serve"}, c.Cmd)
	require.Contains(t, c.Env, "STEPWISE_ADDR=0.0.0.0:8083")
	require.Contains(t, c.Env, "STEPWISE_CONTAINER=1")
	require.Contains(t, c.Env, "STEPWISE_SFN_LOCAL_ENV=1")
	require.Equal(t, []string{"CMD", "/usr/local/bin/stepwise", "health"}, c.Healthcheck.Test)
	require.Equal(t, 10*time.Second, c.Healthcheck.Interval)
	require.Equal(t, "v1.2.0", c.Labels["org.opencontainers.image.version"])
	require.Equal(t, "https://example.com/stepwise", c.Labels["org.opencontainers.image.source"])
	require.Equal(t, "2026-11-27T15:20:00Z", c.Labels["org.opencontainers.image.created"])
	require.NotContains(t, c.Labels, "org.opencontainers.image.licenses") // an empty label is left out
	require.Contains(t, c.Env, "HOME=/data")

	mt, err := img.MediaType()
	require.NoError(t, err)
	require.Equal(t, types.DockerManifestSchema2, mt) // docker's, which has the health check
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	rc, err := layers[0].Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	type file struct {
		mode     int64
		uid, gid int
		data     string
	}
	files := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		require.Equal(t, created, h.ModTime.UTC(), h.Name)
		files[h.Name] = file{h.Mode, h.Uid, h.Gid, string(data)}
	}
	require.Equal(t, file{0o755, 0, 0, "\x7fELF binary for arm64"}, files["usr/local/bin/stepwise"])
	require.Equal(t, file{0o644, 0, 0, "-----BEGIN CERTIFICATE-----\n"}, files["etc/ssl/certs/ca-certificates.crt"])
	require.Equal(t, file{0o755, 65532, 65532, ""}, files["data/"])
	require.Equal(t, file{0o1777, 0, 0, ""}, files["tmp/"])
	require.Contains(t, files["etc/passwd"].data, "\nstepwise:x:65532:65532:stepwise:/data:/sbin/nologin\n")
	require.Contains(t, files["etc/group"].data, "\nstepwise:x:65532:\n")

	// Built twice from the same input: the same image.
	again := build(t, "arm64")
	d1, err := img.Digest()
	require.NoError(t, err)
	d2, err := again.Digest()
	require.NoError(t, err)
	require.Equal(t, d1, d2)
}

// TestImageRefusesBadInput: a binary that is not Linux's, or no CA
// certificates, is an error.
func TestImageRefusesBadInput(t *testing.T) {
	t.Parallel()
	_, err := Image([]byte("MZ\x90\x00"), "amd64", Options{CACerts: []byte("x")})
	require.ErrorContains(t, err, "the amd64 binary is not an ELF executable")
	_, err = Image([]byte("\x7fELF"), "amd64", Options{})
	require.ErrorContains(t, err, "no CA certificates")
	_, err = Image(nil, "amd64", Options{CACerts: []byte("x")})
	require.ErrorContains(t, err, "the amd64 binary is empty")
}

// TestWriteArchive: the docker-archive's manifest.json holds both images,
// the host's tagged TAG and TAG-ARCH, the other TAG-ARCH; each reads back
// by its tag.
func TestWriteArchive(t *testing.T) {
	t.Parallel()
	images := map[string]v1.Image{"amd64": build(t, "amd64"), "arm64": build(t, "arm64")}
	var buf bytes.Buffer
	require.NoError(t, WriteArchive(&buf, "stepwise:dev", "amd64", images))

	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	tr := tar.NewReader(bytes.NewReader(buf.Bytes()))
	for {
		h, err := tr.Next()
		require.NoError(t, err, "no manifest.json in the archive")
		if h.Name == "manifest.json" {
			require.NoError(t, json.NewDecoder(tr).Decode(&manifest))
			break
		}
	}
	var tags [][]string
	for _, m := range manifest {
		slices.Sort(m.RepoTags)
		tags = append(tags, m.RepoTags)
		require.Len(t, m.Layers, 1)
	}
	slices.SortFunc(tags, func(a, b []string) int { return len(b) - len(a) })
	require.Equal(t, [][]string{{"stepwise:dev", "stepwise:dev-amd64"}, {"stepwise:dev-arm64"}}, tags)

	opener := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil }
	for tag, arch := range map[string]string{"stepwise:dev": "amd64", "stepwise:dev-amd64": "amd64", "stepwise:dev-arm64": "arm64"} {
		ref, err := name.NewTag(tag)
		require.NoError(t, err)
		img, err := tarball.Image(opener, &ref)
		require.NoError(t, err, tag)
		cf, err := img.ConfigFile()
		require.NoError(t, err)
		require.Equal(t, arch, cf.Architecture, tag)
		want, err := images[arch].Digest()
		require.NoError(t, err)
		got, err := img.ConfigName()
		require.NoError(t, err)
		wantConfig, err := images[arch].ConfigName()
		require.NoError(t, err)
		require.Equal(t, wantConfig, got, "%s (image %s)", tag, want)
	}

	err := WriteArchive(io.Discard, "stepwise:dev", "riscv64", images)
	require.ErrorContains(t, err, "no image for this machine's architecture, riscv64 (built: [amd64 arm64])")
	err = WriteArchive(io.Discard, "Stepwise:Dev!", "amd64", images)
	require.ErrorContains(t, err, `the tag "Stepwise:Dev!"`)
}

// TestIndex: the pushed index names each image with its platform.
func TestIndex(t *testing.T) {
	t.Parallel()
	idx, err := Index(map[string]v1.Image{"amd64": build(t, "amd64"), "arm64": build(t, "arm64")})
	require.NoError(t, err)
	m, err := idx.IndexManifest()
	require.NoError(t, err)
	require.Equal(t, types.DockerManifestList, m.MediaType)
	require.Len(t, m.Manifests, 2)
	require.Equal(t, v1.Platform{OS: "linux", Architecture: "amd64"}, *m.Manifests[0].Platform)
	require.Equal(t, v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}, *m.Manifests[1].Platform)
}
