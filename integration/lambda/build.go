package lambda

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A function's dependencies and layers
//
// A Python or Node.js handler runs as `sam build` and Lambda's runtime
// would run it:
//
//   - a requirements.txt in its code folder (Python) is installed with
//     the function's interpreter's pip (python3 -m pip install -r
//     requirements.txt --target DIR), a package.json with dependencies
//     (Node.js, no node_modules beside it) with npm install --omit=dev
//     in a copy of it; DIR is a folder of the build cache named by the
//     hash of the file's bytes (package-lock.json's too) and the
//     runtime. A folder there is complete (it is renamed into place once
//     installed): the same file is not installed again; installs of one
//     hash run once at a time (waiters take the result). pip and npm run
//     in the code folder with the server's environment, so PIP_INDEX_URL,
//     PIP_FIND_LINKS, PIP_NO_INDEX and npm's config hold;
//   - its layers (Handler.Layers: folders, or .zip files extracted as
//     code is) are its /opt: LAYER/python and
//     LAYER/python/lib/pythonX.Y/site-packages on PYTHONPATH,
//     LAYER/nodejs/node_modules and LAYER/nodejs/nodeN/node_modules on
//     NODE_PATH, LAYER/bin on PATH, LAYER/lib on LD_LIBRARY_PATH; a
//     layer's own requirements.txt or package.json is installed as a
//     function's;
//   - what the runtime bundles: Node.js code that requires or imports
//     @aws-sdk/... (nodejs18.x and later) or aws-sdk (earlier) it does
//     not bring gets it from one shared folder of the cache per SDK
//     major (aws-sdk-js-v3, aws-sdk-js-v2), where npm installs the
//     modules missing. The modules are those the code's .js, .mjs and
//     .cjs files name (node_modules aside). boto3 is the host
//     interpreter's (the shim says how to get it when it is missing).
//
// The order is Lambda's: the code folder, what was installed for it,
// the layers in their order, the bundled SDK. ES modules do not read
// NODE_PATH: the Node.js shim registers a resolve hook that looks in
// NODE_PATH's folders for a bare specifier not found otherwise.

// DefaultBuildCache is the build cache's folder under the user's cache
// folder (os.UserCacheDir).
const DefaultBuildCache = "stepwise/builds"

// installBound bounds one pip or npm install.
const installBound = 15 * time.Minute

// builds is the cache of installed dependencies.
type builds struct {
	mu      sync.Mutex
	dir     string
	running map[string]*install
	// sdkMu is held by an install into a shared SDK folder.
	sdkMu sync.Mutex
	// installs counts the installs run (tests).
	installs atomic.Int64
}

// install is an install under way; done is closed once err is set.
type install struct {
	done chan struct{}
	err  error
}

// SetBuildCache sets the folder dependencies are installed into (""
// keeps the default, DefaultBuildCache under os.UserCacheDir); it is
// called before functions are put.
func (l *Local) SetBuildCache(dir string) {
	l.builds.mu.Lock()
	defer l.builds.mu.Unlock()
	l.builds.dir = dir
}

// Installs is how many pip and npm installs the functions ran.
func (l *Local) Installs() int64 { return l.builds.installs.Load() }

func (b *builds) root() (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir != "" {
		return b.dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no build cache folder (set one with serve --build-cache): %w", err)
	}
	return filepath.Join(base, filepath.FromSlash(DefaultBuildCache)), nil
}

// paths are what a function's process finds its dependencies by.
type paths struct {
	python, node, bin, lib []string
}

// env adds the paths to a process's environment (PATH and
// LD_LIBRARY_PATH before what is there).
func (p *paths) env(env []string) []string {
	if p == nil {
		return env
	}
	join := func(name string, dirs []string, keep bool) {
		if len(dirs) == 0 {
			return
		}
		v := strings.Join(dirs, string(os.PathListSeparator))
		if keep {
			for i, kv := range env {
				if old, ok := strings.CutPrefix(kv, name+"="); ok {
					env[i] = name + "=" + v + string(os.PathListSeparator) + old
					return
				}
			}
		}
		env = append(env, name+"="+v)
	}
	join("PYTHONPATH", p.python, false)
	join("NODE_PATH", p.node, false)
	join("PATH", p.bin, true)
	join("LD_LIBRARY_PATH", p.lib, false)
	return env
}

// prepare installs what a handler in dir needs and finds its layers'
// folders.
func (l *Local) prepare(ctx context.Context, name string, h *Handler, dir string) (*paths, error) {
	if h.Runtime == RuntimeProvided && len(h.Layers) == 0 {
		return nil, nil
	}
	p := &paths{}
	installed, err := l.installDeps(ctx, h, dir, "function "+name)
	if err != nil {
		return nil, err
	}
	l.addDeps(p, h, installed)
	for _, layer := range h.Layers {
		ldir, _, err := newCode(layer).current()
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", layer, err)
		}
		// A layer built by SAM (BuildMethod): its requirements.txt or
		// package.json, installed as a function's.
		installed, err := l.installDeps(ctx, h, ldir, "layer "+layer)
		if err != nil {
			return nil, err
		}
		l.addDeps(p, h, installed)
		addLayer(p, h, ldir)
	}
	if h.Runtime == RuntimeNode {
		sdk, err := l.bundledSDK(ctx, h, dir, p.node)
		if err != nil {
			return nil, fmt.Errorf("function %s: %w", name, err)
		}
		if sdk != "" {
			p.node = append(p.node, sdk)
		}
	}
	return p, nil
}

func (l *Local) addDeps(p *paths, h *Handler, installed string) {
	if installed == "" {
		return
	}
	if h.Runtime == RuntimeNode {
		p.node = append(p.node, filepath.Join(installed, "node_modules"))
		if bin := filepath.Join(installed, "node_modules", ".bin"); isDir(bin) {
			p.bin = append(p.bin, bin)
		}
		return
	}
	p.python = append(p.python, installed)
	if bin := filepath.Join(installed, "bin"); isDir(bin) {
		p.bin = append(p.bin, bin)
	}
}

// addLayer puts a layer's folders on the paths, as Lambda's /opt.
func addLayer(p *paths, h *Handler, dir string) {
	switch h.Runtime {
	case RuntimePython:
		if d := filepath.Join(dir, "python"); isDir(d) {
			p.python = append(p.python, d)
		}
		sites, _ := filepath.Glob(filepath.Join(dir, "python", "lib", "python3*", "site-packages"))
		slices.Sort(sites)
		p.python = append(p.python, sites...)
	case RuntimeNode:
		if d := filepath.Join(dir, "nodejs", "node_modules"); isDir(d) {
			p.node = append(p.node, d)
		}
		mods, _ := filepath.Glob(filepath.Join(dir, "nodejs", "node*", "node_modules"))
		slices.Sort(mods)
		p.node = append(p.node, mods...)
	}
	if d := filepath.Join(dir, "bin"); isDir(d) {
		p.bin = append(p.bin, d)
	}
	if d := filepath.Join(dir, "lib"); isDir(d) {
		p.lib = append(p.lib, d)
	}
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// installDeps installs the requirements.txt or package.json of dir, if
// any, into the cache; it returns the folder ("" when there is none).
// what names the function or layer for errors.
func (l *Local) installDeps(ctx context.Context, h *Handler, dir, what string) (string, error) {
	var file string
	var extra []byte
	switch h.Runtime {
	case RuntimePython:
		file = filepath.Join(dir, "requirements.txt")
	case RuntimeNode:
		file = filepath.Join(dir, "package.json")
		if isDir(filepath.Join(dir, "node_modules")) {
			return "", nil // built already: its node_modules are the code's
		}
		extra, _ = os.ReadFile(filepath.Join(dir, "package-lock.json"))
	default:
		return "", nil
	}
	body, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if h.Runtime == RuntimeNode && !hasDependencies(body) {
		return "", nil
	}
	if h.Runtime == RuntimePython && len(bytes.TrimSpace(body)) == 0 {
		return "", nil
	}
	program := l.program(h)
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00%s\x00%s\x00", h.Runtime, cmpOr(h.Declared, h.Runtime), program)
	sum.Write(body)
	sum.Write([]byte{0})
	sum.Write(extra)
	key := h.Runtime + "-" + hex.EncodeToString(sum.Sum(nil))[:32]
	root, err := l.builds.root()
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	target := filepath.Join(root, key)
	err = l.builds.once(key, target, func(tmp string) (err error) {
		start := time.Now()
		defer func() {
			if err != nil {
				return
			}
			l.log.Info("installed a function's dependencies", "for", what, "file", file, "into", target,
				"took", time.Since(start).Round(time.Millisecond).String())
		}()
		if h.Runtime == RuntimePython {
			return runInstall(ctx, dir, program, "pip", "python3 -m pip install -r requirements.txt --target "+target,
				"-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-r", file, "--target", tmp)
		}
		for _, f := range []string{"package.json", "package-lock.json"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			} else if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
				return err
			}
		}
		return runInstall(ctx, tmp, "npm", "npm", "npm install --omit=dev",
			"install", "--omit=dev", "--no-audit", "--no-fund")
	})
	if err != nil {
		return "", fmt.Errorf("%s: install %s: %w", what, file, err)
	}
	return target, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// hasDependencies says whether a package.json names dependencies.
func hasDependencies(body []byte) bool {
	var pkg struct {
		Dependencies map[string]any `json:"dependencies"`
	}
	return json.Unmarshal(body, &pkg) == nil && len(pkg.Dependencies) > 0
}

// once makes target with fill (given a fresh folder beside it, renamed
// to target once filled) unless target is there; calls of one key wait
// for the one running.
func (b *builds) once(key, target string, fill func(tmp string) error) error {
	b.mu.Lock()
	if b.running == nil {
		b.running = map[string]*install{}
	}
	if in := b.running[key]; in != nil {
		b.mu.Unlock()
		<-in.done
		return in.err
	}
	if isDir(target) {
		b.mu.Unlock()
		return nil
	}
	in := &install{done: make(chan struct{})}
	b.running[key] = in
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.running, key)
		b.mu.Unlock()
		close(in.done)
	}()
	in.err = func() error {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		tmp, err := os.MkdirTemp(filepath.Dir(target), ".part-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		b.installs.Add(1)
		if err := fill(tmp); err != nil {
			return err
		}
		if err := os.Rename(tmp, target); err != nil && !isDir(target) {
			return err
		}
		return nil
	}()
	return in.err
}

// runInstall runs an installer in dir with the server's environment;
// its failure names tool and says the last lines of its output.
func runInstall(ctx context.Context, dir, program, tool, what string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, installBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Dir = dir
	out := &tail{limit: 2048}
	cmd.Stdout, cmd.Stderr = out, out
	killAsGroup(cmd)
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("%s is not on this machine's PATH: it installs what the code needs (%s)", program, what)
	}
	if err != nil {
		text := lastLines(string(out.bytes()), 8)
		if tool == "pip" && strings.Contains(text, "No module named pip") {
			return fmt.Errorf("%s has no pip: install it (%s -m ensurepip, or the distribution's python3-pip), or choose an interpreter with pip with serve --runtime", program, program)
		}
		return fmt.Errorf("%s (%s): %w:\n%s", tool, what, err, text)
	}
	return nil
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// sdkModule finds the modules of the AWS SDK for JavaScript a file names.
var sdkModule = regexp.MustCompile(`['"](@aws-sdk/[a-z0-9-]+|aws-sdk)(?:/[^'"]*)?['"]`)

// maxScan bounds the code scanned for the SDK's modules.
const maxScan = 4000

// bundledSDK gives the folder of the SDK modules Lambda's Node.js
// runtime would provide that the code names and does not bring ("" for
// none), installing those missing there.
func (l *Local) bundledSDK(ctx context.Context, h *Handler, dir string, nodePath []string) (string, error) {
	v3 := true
	if m := nodeID.FindStringSubmatch(h.Declared); m != nil {
		n, _ := strconv.Atoi(m[1])
		v3 = n >= 18
	}
	wanted := map[string]bool{}
	scanned := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".js", ".mjs", ".cjs":
		default:
			return nil
		}
		if scanned++; scanned > maxScan {
			return filepath.SkipAll
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, m := range sdkModule.FindAllSubmatch(b, -1) {
			mod := string(m[1])
			if (mod == "aws-sdk") != v3 {
				wanted[mod] = true
			}
		}
		return nil
	})
	if len(wanted) == 0 {
		return "", nil
	}
	// What the code, its installed dependencies or its layers bring is
	// theirs.
	have := append([]string{filepath.Join(dir, "node_modules")}, nodePath...)
	var missing []string
	for _, mod := range slices.Sorted(maps.Keys(wanted)) {
		found := false
		for _, d := range have {
			if isDir(filepath.Join(d, mod)) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, mod)
		}
	}
	if len(missing) == 0 {
		return "", nil
	}
	root, err := l.builds.root()
	if err != nil {
		return "", err
	}
	name := "aws-sdk-js-v3"
	if !v3 {
		name = "aws-sdk-js-v2"
	}
	sdk := filepath.Join(root, name)
	mods := filepath.Join(sdk, "node_modules")
	// One install at a time in the shared folder.
	l.builds.sdkMu.Lock()
	defer l.builds.sdkMu.Unlock()
	var absent []string
	for _, mod := range missing {
		if !isDir(filepath.Join(mods, mod)) {
			absent = append(absent, mod)
		}
	}
	if len(absent) == 0 {
		return mods, nil
	}
	if err := os.MkdirAll(sdk, 0o755); err != nil {
		return "", err
	}
	pkg := filepath.Join(sdk, "package.json")
	if _, err := os.Stat(pkg); err != nil {
		if err := os.WriteFile(pkg, []byte(`{"name": "stepwise-`+name+`", "private": true}`+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	l.builds.installs.Add(1)
	start := time.Now()
	args := append([]string{"install", "--no-audit", "--no-fund", "--save"}, absent...)
	if err := runInstall(ctx, sdk, "npm", "npm", "npm install "+strings.Join(absent, " ")+" (the SDK Lambda's runtime bundles)", args...); err != nil {
		return "", fmt.Errorf("install %s: %w", strings.Join(absent, ", "), err)
	}
	l.log.Info("installed the AWS SDK for JavaScript Lambda's runtime bundles", "modules", strings.Join(absent, " "), "into", mods,
		"took", time.Since(start).Round(time.Millisecond).String())
	return mods, nil
}
