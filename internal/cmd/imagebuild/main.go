// Command imagebuild builds Stepwise's container image from the static
// binaries scripts/build-image.sh builds: a docker-archive that `docker
// load` and `podman load` read, and, with --push, a multi-platform index
// in a registry.
//
//	go run ./internal/cmd/imagebuild --binary linux/amd64=dist/stepwise-linux-amd64 \
//	  --binary linux/arm64=dist/stepwise-linux-arm64 --out dist/stepwise-image.tar --tag stepwise:dev
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"stepwise/internal/boundedfile"
	"stepwise/internal/imagebuild"
)

// binaries are the --binary flags: PLATFORM=PATH, by Go arch.
type binaries map[string]string

func (b binaries) String() string { return fmt.Sprint(map[string]string(b)) }

func (b binaries) Set(v string) error {
	platform, path, ok := strings.Cut(v, "=")
	if !ok || path == "" {
		return fmt.Errorf("want PLATFORM=PATH, e.g. linux/amd64=dist/stepwise-linux-amd64, not %q", v)
	}
	os, arch, ok := strings.Cut(platform, "/")
	if !ok || os != "linux" || (arch != "amd64" && arch != "arm64") {
		return fmt.Errorf("the platform %q is not linux/amd64 or linux/arm64", platform)
	}
	if _, dup := b[arch]; dup {
		return fmt.Errorf("%s given twice", platform)
	}
	b[arch] = path
	return nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("imagebuild", flag.ContinueOnError)
	bins := binaries{}
	fs.Var(bins, "binary", "a platform's static binary, PLATFORM=PATH (linux/amd64, linux/arm64; repeatable)")
	out := fs.String("out", "", "write the docker-archive here")
	tag := fs.String("tag", "stepwise:dev", "the archive's tag of this machine's image; each image is also tagged TAG-ARCH")
	hostArch := fs.String("host-arch", runtime.GOARCH, "the architecture the plain tag names")
	push := fs.String("push", "", "also push the images to this registry reference as one multi-platform index")
	version := fs.String("version", "", "the release (org.opencontainers.image.version)")
	created := fs.String("created", "", "the image's creation time, RFC 3339 (default: now); the commit's time makes builds reproducible")
	caCerts := fs.String("ca-certs", "/etc/ssl/certs/ca-certificates.crt", "the CA certificates bundle to copy in")
	var labels []string
	fs.Func("label", "an image label, KEY=VALUE (repeatable)", func(v string) error {
		if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
			return fmt.Errorf("want KEY=VALUE, not %q", v)
		}
		labels = append(labels, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if len(bins) == 0 {
		return errors.New("no --binary PLATFORM=PATH given")
	}
	if *out == "" && *push == "" {
		return errors.New("nothing to do: give --out FILE, --push REF or both")
	}
	o := imagebuild.Options{Version: *version, Created: time.Now().UTC().Truncate(time.Second), Labels: map[string]string{}}
	if *created != "" {
		t, err := time.Parse(time.RFC3339, *created)
		if err != nil {
			return fmt.Errorf("--created: %w", err)
		}
		o.Created = t.UTC()
	}
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		o.Labels[k] = v
	}
	ctx := context.Background()
	var err error
	if o.CACerts, err = boundedfile.Read(ctx, *caCerts, 16<<20); err != nil {
		return fmt.Errorf("--ca-certs: %w", err)
	}
	images := map[string]v1.Image{}
	var archs []string
	for arch, path := range bins {
		bin, err := boundedfile.Read(ctx, path, 512<<20)
		if err != nil {
			return fmt.Errorf("--binary linux/%s: %w", arch, err)
		}
		img, err := imagebuild.Image(bin, arch, o)
		if err != nil {
			return err
		}
		images[arch] = img
		archs = append(archs, arch)
	}
	sort.Strings(archs)
	if *out != "" {
		if err := writeFile(*out, *tag, *hostArch, images); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "imagebuild: wrote %s (%s for linux/%s; %s)\n", *out, *tag, *hostArch, tagList(*tag, archs))
	}
	if *push != "" {
		if err := imagebuild.Push(*push, images); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "imagebuild: pushed %s (linux/%s)\n", *push, strings.Join(archs, ", linux/"))
	}
	fmt.Printf("%-12s %-73s %12s %14s\n", "PLATFORM", "IMAGE ID", "COMPRESSED", "UNCOMPRESSED")
	for _, arch := range archs {
		img := images[arch]
		s, err := imagebuild.LayerSizes(img)
		if err != nil {
			return err
		}
		id, err := img.ConfigName()
		if err != nil {
			return err
		}
		fmt.Printf("%-12s %-73s %12s %14s\n", "linux/"+arch, id, mb(s.Compressed), mb(s.Uncompressed))
	}
	return nil
}

func tagList(tag string, archs []string) string {
	var ts []string
	for _, a := range archs {
		ts = append(ts, tag+"-"+a)
	}
	return strings.Join(ts, ", ")
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// writeFile writes the archive to path through a temporary file, so that
// a failed build leaves no half archive.
func writeFile(path, tag, hostArch string, images map[string]v1.Image) error {
	tmp, err := os.CreateTemp(dirOf(path), ".stepwise-image-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := imagebuild.WriteArchive(w, tag, hostArch, images); err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i+1]
	}
	return "."
}
