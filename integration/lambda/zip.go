package lambda

import (
	"archive/zip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Code from a zip
//
// A handler's Dir may be a .zip file of its code (as SAM packages it and
// CDK stages some assets). It is extracted once into a folder of the
// user's cache folder named after the zip's content (a temporary folder's
// when there is none), shared by every function and every Stepwise with
// the same zip; the extraction is written aside and renamed into place, so
// it is never seen half done. An entry that would land outside the folder
// (an absolute path, "..", a symbolic link pointing out) is refused, and
// so is a zip of more than maxUnzipped bytes, Lambda's own limit.

// maxUnzipped bounds a function's extracted code: Lambda's 250 MB.
var maxUnzipped int64 = 262144000

// codeRoot, when set, is where zips are extracted instead.
var codeRoot string

// isZip tells a path naming a zip file.
func isZip(path string) bool {
	if !strings.EqualFold(filepath.Ext(path), ".zip") {
		return false
	}
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// extractZip extracts the zip at path, once, and returns its folder.
func extractZip(path string) (string, error) {
	sum, err := fileSum(path)
	if err != nil {
		return "", fmt.Errorf("the handler's code %s: %w", path, err)
	}
	parent := filepath.Join(os.TempDir(), "stepwise-code")
	if cache, err := os.UserCacheDir(); err == nil {
		parent = filepath.Join(cache, "stepwise", "code")
	}
	if codeRoot != "" {
		parent = codeRoot
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("the handler's code %s: %w", path, err)
	}
	dir := filepath.Join(parent, fmt.Sprintf("%x", sum[:12]))
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(parent, "partial-")
	if err != nil {
		return "", fmt.Errorf("the handler's code %s: %w", path, err)
	}
	if err := unzip(path, tmp); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("the handler's code %s: %w", path, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		// Another process extracted it first.
		if st, statErr := os.Stat(dir); statErr == nil && st.IsDir() {
			return dir, nil
		}
		return "", fmt.Errorf("the handler's code %s: %w", path, err)
	}
	return dir, nil
}

func fileSum(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// unzip writes the zip's entries under dir.
func unzip(path, dir string) error {
	r, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("not a zip file: %w", err)
	}
	defer r.Close()
	left := maxUnzipped
	// links are the symbolic links written so far: no entry goes
	// through one (a link checked by its text alone may, through
	// another, lead out of the folder).
	links := map[string]bool{}
	for _, f := range r.File {
		name := filepath.FromSlash(f.Name)
		if !filepath.IsLocal(name) || strings.Contains(f.Name, `\`) {
			return fmt.Errorf("the entry %q would be written outside the code's folder; a zip's entries are relative paths without '..'", f.Name)
		}
		name = filepath.Clean(name)
		for dir := filepath.Dir(name); dir != "."; dir = filepath.Dir(dir) {
			if links[dir] {
				return fmt.Errorf("the entry %q is inside the symbolic link %q of the same zip; a zip's entries are written in folders, not through links", f.Name, filepath.ToSlash(dir))
			}
		}
		target := filepath.Join(dir, name)
		mode := f.Mode()
		switch {
		case mode.IsDir():
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		case mode&fs.ModeSymlink != 0:
			if err := unzipLink(f, name, target); err != nil {
				return err
			}
			links[name] = true
			continue
		case !mode.IsRegular():
			return fmt.Errorf("the entry %q is not a file, a folder or a symbolic link", f.Name)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		perm := mode.Perm()
		if perm == 0 {
			perm = 0o644
		}
		n, err := unzipFile(f, target, perm|0o600, left)
		if err != nil {
			return err
		}
		left -= n
	}
	return nil
}

var errTooBig = errors.New("too big")

// unzipFile writes one file, at most limit bytes.
func unzipFile(f *zip.File, target string, perm fs.FileMode, limit int64) (int64, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, fmt.Errorf("the entry %q: %w", f.Name, err)
	}
	defer rc.Close()
	w, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, io.LimitReader(rc, limit+1))
	if closeErr := w.Close(); err == nil {
		err = closeErr
	}
	switch {
	case err != nil:
		return n, fmt.Errorf("the entry %q: %w", f.Name, err)
	case n > limit:
		return n, fmt.Errorf("its content is more than %d bytes unzipped, Lambda's limit for a function's code: %w", maxUnzipped, errTooBig)
	}
	return n, nil
}

// unzipLink makes a symbolic link, when it points inside the folder.
func unzipLink(f *zip.File, name, target string) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("the entry %q: %w", f.Name, err)
	}
	dest, err := io.ReadAll(io.LimitReader(rc, 4096))
	rc.Close()
	if err != nil {
		return fmt.Errorf("the entry %q: %w", f.Name, err)
	}
	link := filepath.FromSlash(string(dest))
	if filepath.IsAbs(link) || !filepath.IsLocal(filepath.Join(filepath.Dir(name), link)) {
		return fmt.Errorf("the symbolic link %q points outside the code's folder (to %s)", f.Name, dest)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return os.Symlink(link, target)
}
