package imagebuild

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ArchiveTags are the tags an archive gives images (by Go arch): tag
// itself to hostArch's image, and tag-ARCH to each one.
func ArchiveTags(tag, hostArch string, images map[string]v1.Image) (map[name.Reference]v1.Image, error) {
	base, err := name.NewTag(tag)
	if err != nil {
		return nil, fmt.Errorf("imagebuild: the tag %q: %w", tag, err)
	}
	refs := map[name.Reference]v1.Image{}
	host, ok := images[hostArch]
	if !ok {
		return nil, fmt.Errorf("imagebuild: no image for this machine's architecture, %s (built: %v), to tag %s", hostArch, archs(images), tag)
	}
	refs[base] = host
	// The repository as given (stepwise, not index.docker.io/library/stepwise).
	repo := strings.TrimSuffix(tag, ":"+base.TagStr())
	for arch, img := range images {
		t, err := name.NewTag(repo + ":" + base.TagStr() + "-" + arch)
		if err != nil {
			return nil, fmt.Errorf("imagebuild: the %s tag: %w", arch, err)
		}
		refs[t] = img
	}
	return refs, nil
}

// WriteArchive writes a docker-archive of images (by Go arch) to w, as
// ArchiveTags tags them: `docker load` and `podman load` read it.
func WriteArchive(w io.Writer, tag, hostArch string, images map[string]v1.Image) error {
	refs, err := ArchiveTags(tag, hostArch, images)
	if err != nil {
		return err
	}
	if err := tarball.MultiRefWrite(refs, w); err != nil {
		return fmt.Errorf("imagebuild: writing the archive: %w", err)
	}
	return nil
}

// Index is the multi-platform index of images (by Go arch).
func Index(images map[string]v1.Image) (v1.ImageIndex, error) {
	var adds []mutate.IndexAddendum
	for _, arch := range archs(images) {
		img := images[arch]
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: cf.Platform()},
		})
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.DockerManifestList), adds...), nil
}

// Push pushes images (by Go arch) to ref as one multi-platform index,
// with the credentials of the Docker configuration (~/.docker/config.json
// and its credential helpers).
func Push(ref string, images map[string]v1.Image) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("imagebuild: the reference %q: %w", ref, err)
	}
	idx, err := Index(images)
	if err != nil {
		return err
	}
	if err := remote.WriteIndex(r, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("imagebuild: pushing %s: %w", ref, err)
	}
	return nil
}

func archs(images map[string]v1.Image) []string {
	var out []string
	for a := range images {
		out = append(out, a)
	}
	sort.Strings(out)
	return slices.Clip(out)
}
