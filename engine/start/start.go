// Package start is the one way in: every execution the server starts in
// process goes through a Starter, whoever asks for it — the API's
// StartExecution and StartSyncExecution (package service, which the
// scheduler's slots and the aws-sdk:sfn integration call too), a
// states:startExecution Task's child (engine/nested) and a map run's
// child (engine/maprun). The Starter resolves what a start names,
// applies StartExecution's checks (internal/startrule) and builds the
// engine's start parameters (Params), each in one place:
//
//	Request ─► resolve: "#<test case>" cut off, the ARN parsed, the state machine, version or alias read,
//	           │        its type (a synchronous start needs EXPRESS), whether it runs, the test case,
//	           │        the input checked, its definition parsed, its failure policies (its tags)
//	           ▼
//	        Params (the execution's ARN, name, input, version and alias) ─► Runs: the engine
//
// A request whose Target is set (a map run's child, which runs the
// ItemProcessor of its parent's revision) skips the resolution: its
// target is resolved already.
//
// Refusals are *sfnapi.Error with AWS's codes and messages; a start whose
// execution ARN is taken is an *ExistsError (store.ErrAlreadyExists), for
// the caller to answer as its API does; the store's and the engine's
// other errors are passed on.
//
// # The children
//
// Children is what the runners whose tasks start executions of their own
// (nested and map runs) ask of the engine, named once: start a child,
// redrive it, stop it, find it (by its name: its ARN, in the store), and
// tell when one ends.
package start

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"strings"
	"time"

	"github.com/google/uuid"

	"stepwise/asl"
	"stepwise/awsarn"
	"stepwise/internal/defcache"
	"stepwise/internal/recent"
	"stepwise/internal/startrule"
	"stepwise/internal/warnrule"
	"stepwise/interp"
	"stepwise/jsonvalue"
	"stepwise/sfnapi"
	"stepwise/store"
)

// Params describe a new execution to the engine: what a Starter built.
type Params struct {
	StateMachine *store.StateMachine
	Machine      *asl.StateMachine // the parsed current revision
	ExecutionArn string
	Name         string
	Input        string // JSON text as the client sent it ("{}" when absent)
	// InputValue is Input parsed, when InputParsed is set (a caller that
	// validated the input passes what it parsed); otherwise the engine
	// parses Input itself.
	InputValue  any
	InputParsed bool
	TraceHeader string
	// TestCase names the mock test case the execution runs with (started
	// as "<stateMachineArn>#<TestCase>"): the task runner answers its
	// tasks from the mock configuration. "" for a real run.
	TestCase string
	// VersionArn is the version the execution runs when it was started on
	// a version or an alias (StateMachine then holds that version's
	// revision); AliasArn the alias. Both are recorded in its row.
	VersionArn string
	AliasArn   string
	// MapRunArn is the map run that starts the execution (a child of a
	// distributed Map), recorded in its row.
	MapRunArn string
	// Policies are the failure policies of the execution's states, from
	// its state machine's tags (interp.PoliciesFromTags); recorded in its
	// row, so that it keeps them however the tags change.
	Policies interp.Policies
	// Warnings are the warning rules of the execution's states, from its
	// state machine's tags (warnrule.FromTags); recorded in its row with
	// the policies (warnrule.Embed).
	Warnings warnrule.Rules
	// Exclusive is the exclusive group the execution runs in (its state
	// machine's stepwise:exclusive tag), nil for none: the Starter claims
	// the group before the engine starts it.
	Exclusive *Exclusive
	// queued is the claim a start that waits its turn took.
	queued string
}

// SyncResult is the end of a synchronous (EXPRESS) execution.
type SyncResult struct {
	Execution *store.Execution // never stored; StopDate and status set
	// BilledDurationMillis and BilledMemoryMB are the billingDetails AWS
	// reports.
	BilledDurationMillis int64
	BilledMemoryMB       int64
}

// Target is what a start runs: the state machine as resolved (for a
// version or an alias: that version's revision), its parsed definition,
// the version's and the alias's ARNs, the mock test case and the failure
// policies.
type Target struct {
	StateMachine         *store.StateMachine
	Machine              *asl.StateMachine
	VersionArn, AliasArn string
	TestCase             string
	Policies             interp.Policies
}

// Request is a start.
type Request struct {
	// StateMachineArn names what to start: a state machine, a version
	// (…:NAME:N) or an alias (…:NAME:ALIAS); with TestCases, it may end
	// in "#<test case>". Ignored when Target is set.
	StateMachineArn string
	// TestCases lets StateMachineArn name a mock test case (the API's
	// starts, when the server has a mock configuration).
	TestCases bool
	// Target, when set, is what the execution runs, resolved already.
	Target *Target
	// Sync is a synchronous start (StartSyncExecution): EXPRESS only.
	Sync bool

	// ExecutionArn is the execution's ARN; "" for the ARN of Name on the
	// resolved state machine (an EXPRESS execution's with ExpressID).
	ExecutionArn string
	// Name is the execution's name; "" for a fresh one (Config.NewID).
	Name string
	// ExpressID is the id an EXPRESS execution's ARN ends with; "" for a
	// fresh one.
	ExpressID string
	// Input is the execution's input as JSON text; nil for "{}".
	Input *string
	// InputChecked says the caller checked Input (startrule.Input) and
	// parsed it: InputValue.
	InputChecked bool
	InputValue   any
	TraceHeader  string
	// MapRunArn is the map run that starts the execution.
	MapRunArn string
}

// Runs is what runs the executions a Starter starts: the engine.
type Runs interface {
	StartExecution(ctx context.Context, p *Params) (*store.Execution, error)
	StartSyncExecution(ctx context.Context, p *Params) (*SyncResult, error)
	RedriveExecution(ctx context.Context, arn string) (*store.Execution, error)
}

// Config configures a Starter.
type Config struct {
	// Store reads the state machines, versions, aliases and tags.
	Store store.Executor
	// Runs runs the executions.
	Runs Runs
	// Partition ("aws" when empty), Region and Account are where the
	// server's resources live: a state machine elsewhere does not exist.
	Partition, Region, Account string
	// PayloadLimit is the largest input (0: startrule's default).
	PayloadLimit int
	// NewID returns a fresh unique id, for names and EXPRESS ARNs (a
	// random UUID when nil).
	NewID func() string
	// Draw picks an alias's version by weight: uniform in [0, 100)
	// (math/rand when nil).
	Draw func() int
	// Definitions is the cache of parsed definitions (one of the
	// Starter's own when nil).
	Definitions *defcache.Cache
	// TestCase, when set, says whether the mock configuration defines a
	// test case for the state machine of that name.
	TestCase func(stateMachine, testCase string) bool
	// CacheFor is how long a state machine and its policies read for a
	// start are reused (0: read each time); Now is that cache's clock
	// (time.Now when nil).
	CacheFor time.Duration
	Now      func() time.Time
}

// Starter starts executions: see the package's documentation.
type Starter struct {
	cfg      Config
	prefix   awsarn.Prefix
	machines *recent.Cache[*store.StateMachine] // nil without CacheFor
	policies *recent.Cache[tagged]
	claims   claims
}

// tagged is what a state machine's tags set for its executions.
type tagged struct {
	policies  interp.Policies
	exclusive *Exclusive
	warnings  warnrule.Rules
}

// New returns a Starter.
func New(cfg Config) *Starter {
	cfg.Partition = cmp.Or(cfg.Partition, "aws")
	if cfg.NewID == nil {
		cfg.NewID = uuid.NewString
	}
	if cfg.Draw == nil {
		cfg.Draw = func() int { return mathrand.IntN(100) }
	}
	if cfg.Definitions == nil {
		cfg.Definitions = defcache.New(0)
	}
	s := &Starter{cfg: cfg, prefix: awsarn.Prefix{Partition: cfg.Partition, Region: cfg.Region, Account: cfg.Account}}
	if cfg.CacheFor > 0 {
		s.machines = recent.New[*store.StateMachine](cfg.CacheFor, defcache.DefaultSize, cfg.Now)
		s.policies = recent.New[tagged](cfg.CacheFor, defcache.DefaultSize, cfg.Now)
	}
	return s
}

// ExistsError is a start whose execution ARN another execution holds.
type ExistsError struct {
	Arn string
	Err error // wraps store.ErrAlreadyExists
}

func (e *ExistsError) Error() string { return "start " + e.Arn + ": " + e.Err.Error() }
func (e *ExistsError) Unwrap() error { return e.Err }

// Start starts an execution durably (its first step committed) and
// returns its row.
func (s *Starter) Start(ctx context.Context, r *Request) (*store.Execution, error) {
	p, err := s.Params(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := s.claimFor(ctx, p, false); err != nil {
		return nil, err
	}
	row, err := s.cfg.Runs.StartExecution(ctx, p)
	if errors.Is(err, store.ErrAlreadyExists) {
		return nil, &ExistsError{Arn: p.ExecutionArn, Err: err}
	}
	if err != nil {
		s.void(p)
	}
	return row, err
}

// StartSync runs a synchronous execution to its end.
func (s *Starter) StartSync(ctx context.Context, r *Request) (*SyncResult, error) {
	p, err := s.Params(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := s.claimFor(ctx, p, true); err != nil {
		return nil, err
	}
	// A synchronous execution is never stored: its claim holds the group
	// while it runs, then is passed over as one whose start was cut short
	// would be, once claimGrace is over.
	return s.cfg.Runs.StartSyncExecution(ctx, p)
}

// Redrive redrives an execution that did not succeed, from where it
// failed.
func (s *Starter) Redrive(ctx context.Context, arn string) (*store.Execution, error) {
	return s.cfg.Runs.RedriveExecution(ctx, arn)
}

// Forget drops what the Starter read of a state machine (it changed, or
// its tags did).
func (s *Starter) Forget(stateMachineArn string) {
	if s.machines != nil {
		s.machines.Forget(stateMachineArn)
		s.policies.Forget(stateMachineArn)
	}
}

// Params resolves and checks a request and builds the engine's start
// parameters: the one place they are built.
func (s *Starter) Params(ctx context.Context, r *Request) (*Params, error) {
	name := r.Name
	var t *Target
	if r.Target != nil {
		copied := *r.Target
		t = &copied
	} else {
		var err error
		if t, err = s.resolve(ctx, r); err != nil {
			return nil, err
		}
	}
	input, value := "{}", r.InputValue
	switch {
	case r.Input != nil && r.InputChecked:
		input = *r.Input
	case r.Input != nil:
		v, refused := startrule.Input(*r.Input, s.cfg.PayloadLimit)
		if refused != nil {
			return nil, refused
		}
		input, value = *r.Input, v
	default:
		value = jsonvalue.NewObject(0)
	}
	if t.Machine == nil {
		m, err := s.machine(t.StateMachine)
		if err != nil {
			return nil, err
		}
		t.Machine = m
	}
	if name == "" {
		name = s.cfg.NewID()
	}
	arn := r.ExecutionArn
	if arn == "" {
		arn = s.prefix.Execution(t.StateMachine.Name, name)
		if r.Sync || t.StateMachine.Type == asl.TypeExpress {
			id := r.ExpressID
			if id == "" {
				id = s.cfg.NewID()
			}
			arn = s.prefix.Express(t.StateMachine.Name, name, id)
		}
	}
	var ws warnrule.Rules
	var exclusive *Exclusive
	if r.Target == nil {
		tg, err := s.taggedOf(ctx, t.StateMachine.Arn)
		if err != nil {
			return nil, err
		}
		t.Policies = tg.policies
		if r.MapRunArn == "" {
			exclusive = tg.exclusive
		}
		ws = tg.warnings
	}
	return &Params{
		StateMachine: t.StateMachine, Machine: t.Machine, ExecutionArn: arn, Name: name,
		Input: input, InputValue: value, InputParsed: true, TraceHeader: r.TraceHeader,
		TestCase: t.TestCase, VersionArn: t.VersionArn, AliasArn: t.AliasArn, MapRunArn: r.MapRunArn, Policies: t.Policies,
		Warnings: ws, Exclusive: exclusive,
	}, nil
}

// resolve finds what a request's ARN names, with StartExecution's checks
// in its order: the ARN, the name, the state machine, its type, its
// status, the test case (the input is checked after, by Params).
func (s *Starter) resolve(ctx context.Context, r *Request) (*Target, error) {
	arn, testCase := r.StateMachineArn, ""
	if r.TestCases && s.cfg.TestCase != nil {
		if i := strings.LastIndexByte(arn, '#'); i >= 0 {
			arn, testCase = arn[:i], arn[i+1:]
		}
	}
	a, refused := startrule.StateMachineArn(arn)
	if refused != nil {
		return nil, refused
	}
	if r.Name != "" {
		if refused := startrule.Name(r.Name); refused != nil {
			return nil, refused
		}
	}
	t := &Target{TestCase: testCase}
	var err error
	switch {
	case a.Prefix != s.prefix:
		return nil, startrule.StateMachineDoesNotExist(arn)
	case len(a.Parts) == 1:
		t.StateMachine, err = s.stateMachine(ctx, arn)
	default:
		t.StateMachine, t.VersionArn, t.AliasArn, err = startrule.Resolve(ctx, s.cfg.Store, arn, s.cfg.Draw())
		var refused *sfnapi.Error
		if err != nil && !errors.As(err, &refused) {
			err = fmt.Errorf("resolve state machine: %w", err)
		}
	}
	if err != nil {
		return nil, err
	}
	if r.Sync && t.StateMachine.Type != asl.TypeExpress {
		return nil, startrule.TypeNotSupported()
	}
	if refused := startrule.Runnable(t.StateMachine); refused != nil {
		return nil, refused
	}
	if testCase != "" && !s.cfg.TestCase(t.StateMachine.Name, testCase) {
		return nil, sfnapi.NewError(sfnapi.CodeValidation, "The mock configuration has no test case '%s' for state machine '%s'", testCase, t.StateMachine.Name)
	}
	return t, nil
}

// stateMachine reads an unqualified state machine, from the cache of
// those read lately.
func (s *Starter) stateMachine(ctx context.Context, arn string) (*store.StateMachine, error) {
	if s.machines != nil {
		if sm, ok := s.machines.Get(arn); ok {
			return sm, nil
		}
	}
	var look uint64
	if s.machines != nil {
		look = s.machines.Look()
	}
	sm, err := s.cfg.Store.StateMachineGet(ctx, arn)
	if errors.Is(err, store.ErrNotFound) {
		return nil, startrule.StateMachineDoesNotExist(arn)
	}
	if err != nil {
		return nil, fmt.Errorf("get state machine: %w", err)
	}
	if s.machines != nil {
		s.machines.Put(arn, sm, look)
	}
	return sm, nil
}

// machine returns the parsed definition a state machine runs, from the
// cache of parsed definitions.
func (s *Starter) machine(sm *store.StateMachine) (*asl.StateMachine, error) {
	return s.cfg.Definitions.Get(defcache.Key(sm.Arn, sm.RevisionID), func() (*asl.StateMachine, error) {
		// Stored definitions were checked when they were written.
		m, diags := asl.ParseWith([]byte(sm.Definition), asl.Options{Type: sm.Type})
		if m == nil {
			return nil, sfnapi.NewError(sfnapi.CodeInvalidDefinition, "%s", asl.InvalidDefinitionMessage(diags))
		}
		return m, nil
	})
}

// taggedOf reads what a state machine's tags set (its failure policies,
// its exclusive group), from the cache of those read lately.
func (s *Starter) taggedOf(ctx context.Context, smArn string) (tagged, error) {
	if s.policies != nil {
		if tg, ok := s.policies.Get(smArn); ok {
			return tg, nil
		}
	}
	var look uint64
	if s.policies != nil {
		look = s.policies.Look()
	}
	tags, err := s.cfg.Store.TagList(ctx, smArn)
	if err != nil {
		return tagged{}, fmt.Errorf("list tags: %w", err)
	}
	tg := tagged{policies: policiesFrom(tags), exclusive: exclusiveOf(tags), warnings: warningsFrom(tags)}
	if s.policies != nil {
		s.policies.Put(smArn, tg, look)
	}
	return tg, nil
}

// PoliciesOf reads the failure policies a state machine's tags set
// (interp.PoliciesFromTags), its holds (interp.HoldTagPrefix) among them; a tag that sets none that is known is
// ignored, as TagResource refuses it.
func PoliciesOf(ctx context.Context, ex store.Executor, smArn string) (interp.Policies, error) {
	tags, err := ex.TagList(ctx, smArn)
	if err != nil {
		return nil, err
	}
	return policiesFrom(tags), nil
}

func policiesFrom(tags []store.Tag) interp.Policies {
	m := map[string]string{}
	for _, t := range tags {
		if strings.HasPrefix(t.Key, interp.PolicyTagPrefix) || strings.HasPrefix(t.Key, interp.HoldTagPrefix) {
			m[t.Key] = t.Value
		}
	}
	if len(m) == 0 {
		return nil
	}
	ps, _ := interp.PoliciesFromTags(m)
	return ps
}
