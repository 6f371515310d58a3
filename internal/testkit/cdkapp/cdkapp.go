// Package cdkapp synthesizes the CDK test app, e2e/testdata/cdkapp, into a
// cloud assembly for the tests of `stepwise deploy`: offline, with no AWS
// account and no cdk CLI. The app is TypeScript on aws-cdk-lib; its npm
// packages are installed once by scripts/install-cdk.sh into a folder of
// the user's cache named after the hash of the app's package-lock.json
// (InstallDir). Synth copies the app into a test's temporary folder,
// compiles it with the installed TypeScript and runs it under node with
// CDK_OUTDIR set, so that app.synth() writes the assembly, and with the
// context the cdk CLI gives an app (asset and path metadata, version
// reporting), so the templates are those `cdk synth` writes.
//
// Without node or the install a test skips with a message naming the
// script, except when the CI environment variable is true: there it fails.
package cdkapp

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"stepwise/internal/testkit/slowtest"
)

// InstallScript installs the app's npm packages.
const InstallScript = "scripts/install-cdk.sh"

// StackName is the app's one stack.
const StackName = "StepwiseCdkApp"

// cliContext is the context the cdk CLI passes an app by default
// (CDK_CONTEXT_JSON): resources' construct paths and assets' folders in
// their Metadata, and the AWS::CDK::Metadata resource.
const cliContext = `{"aws:cdk:enable-path-metadata": true, "aws:cdk:enable-asset-metadata": true, "aws:cdk:version-reporting": true}`

// AppDir is the app's folder in the repository.
func AppDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "e2e", "testdata", "cdkapp")
}

// InstallDir is where scripts/install-cdk.sh installs the app's packages:
// <user cache>/stepwise/cdkapp-<the first 16 hex digits of the SHA-256 of
// package-lock.json>, its node_modules inside.
func InstallDir() (string, error) {
	lock, err := os.ReadFile(filepath.Join(AppDir(), "package-lock.json"))
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(lock)
	return filepath.Join(cache, "stepwise", "cdkapp-"+hex.EncodeToString(sum[:])[:16]), nil
}

// Installed returns the install's folder, or why there is none.
func Installed() (string, error) {
	dir, err := InstallDir()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil {
		return "", fmt.Errorf("the CDK app's npm packages are not installed in %s", dir)
	}
	return dir, nil
}

// Synth synthesizes the app into a temporary folder of t and returns the
// cloud assembly's folder (its manifest.json, StepwiseCdkApp.template.json
// and asset.* folders). It skips t unless the slow suite runs.
func Synth(t testing.TB) (assemblyDir string) {
	t.Helper()
	slowtest.Require(t, "the CDK app compiled and synthesized under node")
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not on PATH")
	}
	install, err := Installed()
	if err != nil {
		missing(t, err.Error())
	}
	work := t.TempDir()
	if err := copyApp(AppDir(), work); err != nil {
		t.Fatalf("cdkapp: copy the app: %v", err)
	}
	if err := os.Symlink(filepath.Join(install, "node_modules"), filepath.Join(work, "node_modules")); err != nil {
		t.Fatalf("cdkapp: %v", err)
	}
	run(t, work, nil, node, filepath.Join(work, "node_modules", "typescript", "bin", "tsc"), "-p", work)
	out := filepath.Join(work, "cdk.out")
	run(t, work, []string{"CDK_OUTDIR=" + out, "CDK_CONTEXT_JSON=" + cliContext}, node, filepath.Join(work, "bin", "app.js"))
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); err != nil {
		t.Fatalf("cdkapp: the app wrote no cloud assembly: %v", err)
	}
	return out
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("cdkapp: %s; the CDK app is required on CI: run %s", why, InstallScript)
	}
	t.Skipf("skipping the CDK app's test: %s (%s installs its packages)", why, InstallScript)
}

func run(t testing.TB, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cdkapp: %s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
}

// copyApp copies the app's sources (not a node_modules, a cdk.out or
// compiled JavaScript of bin/) into dst.
func copyApp(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == "cdk.out" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if strings.HasPrefix(rel, "bin"+string(filepath.Separator)) && strings.HasSuffix(rel, ".js") {
			return nil
		}
		if !d.Type().IsRegular() {
			return errors.New(rel + ": not a regular file")
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
}
