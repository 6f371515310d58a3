package jp1

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
	"time"

	"stepwise/asl"
)

// Options shape a conversion.
type Options struct {
	// TimeZone is the zone of the schedules' times (DefaultTimeZone if empty).
	TimeZone string
	// Stack names the app: its schedule group and its runner function.
	Stack string
}

// DefaultTimeZone is the zone JP1/AJS3 schedules are read in.
const DefaultTimeZone = "Asia/Tokyo"

// Finding is a parameter not carried over, and why.
type Finding struct{ Unit, Param, Value, Why string }

// App is what a conversion writes: files by their path in the output
// folder, and the findings of report.md.
type App struct {
	Files    map[string][]byte
	Findings []Finding
	Nets     []string // the state machines' names, roots first
}

// Convert turns the job nets of a parsed file into an app.
func Convert(units []*Unit, opts Options) (*App, error) {
	opts.TimeZone = cmp.Or(opts.TimeZone, DefaultTimeZone)
	if _, err := time.LoadLocation(opts.TimeZone); err != nil {
		return nil, fmt.Errorf("time zone %q: %w", opts.TimeZone, err)
	}
	opts.Stack = cmp.Or(sanitize(opts.Stack), "jp1")
	c := &conv{opts: opts, app: &App{Files: map[string][]byte{}}, groups: map[string]*Unit{}, calendars: map[string]string{}, smNames: map[string]bool{}, logicals: map[string]bool{}}
	for _, u := range units {
		c.indexGroups(u, "")
	}
	for _, u := range units {
		if err := c.walk(u, "", nil); err != nil {
			return nil, err
		}
	}
	if len(c.roots) == 0 {
		return nil, fmt.Errorf("no job net (ty=n) in the file")
	}
	c.app.Files["template.yaml"] = c.template()
	c.app.Files["functions/runner.py"] = []byte(runnerPy)
	c.app.Files["report.md"] = c.report()
	return c.app, nil
}

type net struct {
	unit     *Unit
	path     string
	name     string // the state machine's
	logical  string
	tags     map[string]string
	children []*net // nested nets, by their logical ids in the definition
	root     bool
	groups   []*Unit
}

type schedule struct {
	name, logical, expr, net string
	calendarTag              string
}

type conv struct {
	opts      Options
	app       *App
	groups    map[string]*Unit // job groups by full path
	calendars map[string]string
	nets      []*net
	roots     []*net
	schedules []schedule
	smNames   map[string]bool
	logicals  map[string]bool
}

func (c *conv) note(path, param, value, why string) {
	c.app.Findings = append(c.app.Findings, Finding{path, param, value, why})
}

func joinPath(parent, name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return strings.TrimSuffix(parent, "/") + "/" + name
}

func lastSegment(name string) string { return name[strings.LastIndex(name, "/")+1:] }

func (c *conv) indexGroups(u *Unit, parent string) {
	path := joinPath(parent, u.Name)
	if isGroup(u.Type()) {
		c.groups[path] = u
	}
	for _, ch := range u.Units {
		c.indexGroups(ch, path)
	}
}

func isGroup(ty string) bool { return ty == "g" || ty == "mg" }

func isNet(ty string) bool { return ty == "n" || ty == "rn" || ty == "rm" || ty == "rr" }

func isJob(ty string) bool {
	switch ty {
	case "j", "rj", "pj", "rp", "qj", "rq":
		return true
	}
	return false
}

// isRecovery: the recovery units' types are the others' with an r before.
func isRecovery(ty string) bool { return strings.HasPrefix(ty, "r") && ty != "rm" }

func (c *conv) walk(u *Unit, parent string, groups []*Unit) error {
	path := joinPath(parent, u.Name)
	switch ty := u.Type(); {
	case isGroup(ty):
		groups = append(slices.Clone(groups), u)
		for _, p := range u.Params {
			switch p.Key {
			case "ty", "op", "cl", "cm", "el", "sz":
			default:
				c.note(path, p.Key, p.Value, "a job group's parameter other than its calendar (op=, cl=) is not carried over")
			}
		}
		for _, ch := range u.Units {
			if err := c.walk(ch, path, groups); err != nil {
				return err
			}
		}
	case isNet(ty):
		if _, err := c.net(u, path, groups, nil); err != nil {
			return err
		}
	case ty == "":
		return fmt.Errorf("line %d, column %d: unit %s has no ty=", u.Line, u.Col, path)
	default:
		c.note(path, "ty", ty, "a unit outside a job net is not converted")
	}
	return nil
}

var nonName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// sanitize makes a state machine name of a unit name: characters other
// than letters, digits, - and _ become _, and a hash of the name then
// keeps names apart.
func sanitize(name string) string {
	s := nonName.ReplaceAllString(name, "_")
	if s != name {
		h := fnv.New32a()
		h.Write([]byte(name))
		s = strings.Trim(s, "_") + fmt.Sprintf("_%08x", h.Sum32())
		s = strings.TrimPrefix(s, "_")
	}
	return s
}

func (c *conv) uniqueSM(name string) string {
	if len(name) > 70 {
		h := fnv.New32a()
		h.Write([]byte(name))
		name = fmt.Sprintf("%s-%08x", name[:60], h.Sum32())
	}
	n := name
	for i := 2; c.smNames[n]; i++ {
		n = fmt.Sprintf("%s-%d", name, i)
	}
	c.smNames[n] = true
	return n
}

func (c *conv) uniqueLogical(prefix, name string) string {
	var b strings.Builder
	b.WriteString(prefix)
	up := true
	for _, r := range name {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			if up && r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			up = false
		} else {
			up = true
		}
	}
	l := b.String()
	if len(l) > 200 {
		l = l[:200]
	}
	n := l
	for i := 2; c.logicals[n]; i++ {
		n = fmt.Sprintf("%s%d", l, i)
	}
	c.logicals[n] = true
	return n
}

type relation struct{ from, to, kind string }

var arRe = regexp.MustCompile(`^\(\s*f=([^,]+?)\s*,\s*t=([^,]+?)\s*(?:,\s*(seq|con)\s*)?\)$`)

func (c *conv) net(u *Unit, path string, groups []*Unit, parent *net) (*net, error) {
	n := &net{unit: u, path: path, root: parent == nil, groups: groups, tags: map[string]string{}}
	base := sanitize(lastSegment(u.Name))
	if parent != nil {
		base = parent.name + "-" + base
	}
	n.name = c.uniqueSM(base)
	n.logical = c.uniqueLogical("Net", strings.ReplaceAll(n.name, "-", " "))
	c.nets = append(c.nets, n)
	if n.root {
		c.roots = append(c.roots, n)
	}

	children := map[string]*Unit{}
	var order []string
	for _, ch := range u.Units {
		if _, dup := children[ch.Name]; dup {
			return nil, fmt.Errorf("line %d: net %s has two units named %s", ch.Line, path, ch.Name)
		}
		if ch.Type() == "" {
			return nil, fmt.Errorf("line %d, column %d: unit %s has no ty=", ch.Line, ch.Col, joinPath(path, ch.Name))
		}
		children[ch.Name] = ch
		order = append(order, ch.Name)
	}
	var rels []relation
	for _, p := range u.Params {
		switch p.Key {
		case "ty", "el", "sz", "cm":
		case "ar":
			m := arRe.FindStringSubmatch(p.Value)
			if m == nil {
				return nil, fmt.Errorf("line %d, column %d: ar=%s: write ar=(f=FROM,t=TO[,seq|con])", p.Line, p.Col, p.Value)
			}
			for _, name := range m[1:3] {
				if children[name] == nil {
					return nil, fmt.Errorf("line %d, column %d: ar=%s names %s, which is not a unit of %s", p.Line, p.Col, p.Value, name, path)
				}
			}
			rels = append(rels, relation{m[1], m[2], cmp.Or(m[3], "seq")})
			if m[3] == "con" {
				c.note(path, "ar", p.Value, "a conditional relation (con) of a judgment job runs its unit unconditionally")
			}
		case "sd", "st", "cy", "sh", "shd", "jc", "ln":
			if !n.root {
				c.note(path, p.Key, p.Value, "a nested net runs when its net reaches it; its own schedule is not carried over")
			}
		case "ejn":
			if !n.root {
				c.note(path, p.Key, p.Value, "exclusive schedules apply to root nets only")
			} else {
				c.note(path, p.Key, p.Value, "an exclusive schedule (the net does not run on the days "+p.Value+" runs) is not carried over: the schedules fire on their own days")
			}
		default:
			c.note(path, p.Key, p.Value, "not carried over")
		}
	}
	if n.root {
		if err := c.schedules4(n); err != nil {
			return nil, err
		}
	}

	b := &builder{c: c, n: n, path: path, children: children, states: map[string]any{}}
	for _, name := range order {
		ch := children[name]
		if isNet(ch.Type()) {
			cn, err := c.net(ch, joinPath(path, name), groups, n)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, cn)
			b.nets = append(b.nets, cn)
		}
	}
	def, err := b.build(order, rels)
	if err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(def, "", "  ")
	if err != nil {
		return nil, err
	}
	if diags := asl.Validate(js, asl.Options{}); len(diags) > 0 {
		for _, d := range diags {
			if d.Severity == asl.SeverityError {
				return nil, fmt.Errorf("net %s: the definition written is not valid: %s", path, asl.InvalidDefinitionMessage(diags))
			}
		}
	}
	c.app.Files["statemachine/"+n.name+".asl.json"] = append(js, '\n')
	c.app.Nets = append(c.app.Nets, n.name)
	return n, nil
}
