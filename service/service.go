package service

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"stepwise/asl"
	"stepwise/engine/start"
	"stepwise/internal/defcache"
	"stepwise/internal/recent"
	"stepwise/store"
)

// Defaults of Config.
const (
	DefaultRegion    = "us-east-1"
	DefaultAccount   = "123456789012"
	DefaultPartition = "aws"
	// DefaultPayloadLimit is the largest execution input, in UTF-8 bytes
	// (256 KiB, AWS's quota).
	DefaultPayloadLimit = 256 * 1024
)

// Limits of the API model and of AWS's quotas.
const (
	maxDefinitionLength = 1024 * 1024
	maxNameLength       = 80
	maxArnLength        = 256
	maxTraceHeader      = 256
	maxErrorLength      = 256
	maxCauseLength      = 32768
	maxTagsPerResource  = 50
	maxTagKeyLength     = 128
	maxTagValueLength   = 256
	maxPageSize         = 1000
	// A pagination token: PageToken, and ListExecutionsPageToken.
	maxTokenLength           = 1024
	maxExecutionsTokenLength = 3096
	defaultPageSize          = 100
	maxValidateResults       = 100
)

// Config configures a Service.
type Config struct {
	// Region, Account and Partition make the ARNs (DefaultRegion,
	// DefaultAccount, DefaultPartition when empty).
	Region    string
	Account   string
	Partition string
	// PayloadLimit is the largest execution input in UTF-8 bytes
	// (DefaultPayloadLimit when 0).
	PayloadLimit int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// NewID returns a fresh unique id for execution names and revisions
	// (a random UUID when nil).
	NewID func() string
	// Definitions caches parsed definitions; a server shares one with its
	// engine. Nil means a cache of the service's own.
	Definitions *defcache.Cache
	// TestCase, when set, says whether a mock configuration defines a
	// test case for the state machine of that name: StartExecution and
	// StartSyncExecution then take "<stateMachineArn>#<TestCase>" to run
	// one (as AWS Step Functions Local does).
	TestCase func(stateMachine, testCase string) bool
	// KnowsResource, when set, says whether a Task resource names an
	// action that exists (an AWS SDK integration's, from the service's
	// API model). A definition with one that does not is refused as AWS
	// refuses it: "The resource provided ... is not recognized".
	KnowsResource func(resource string) bool
	// OnDefinition, when set, is told of each definition a state machine
	// is created or updated with (to warn of Task states nothing runs).
	OnDefinition func(stateMachineArn string, m *asl.StateMachine)
	// OnStateMachine, when set, is told of each state machine as stored
	// by a create or an update (execution logs read a revision's logging
	// configuration from it). It must be quick.
	OnStateMachine func(sm *store.StateMachine)
}

// Service is the Step Functions API as typed Go methods. Each method takes
// the operation's request and returns its response or a
// *sfnapi.Error; anything else is an internal failure.
type Service struct {
	cfg    Config
	store  store.Driver
	engine Engine

	// starter starts executions (the one way in), reusing the state
	// machines and policies it read for startCacheTTL.
	starter *start.Starter
	// activities are the activities GetActivityTask found lately
	// (activityCacheTTL).
	activities *recent.Cache[struct{}]

	// TestState runs the TestState operation; nil makes it unsupported.
	// HOOK: set by package teststate (see RunTestState).
	TestState func(ctx context.Context, in *TestStateInput) (*TestStateOutput, error)
}

// New returns a service on a store and an engine.
func New(drv store.Driver, eng Engine, cfg Config) (*Service, error) {
	if drv == nil || eng == nil {
		return nil, errors.New("service: a store and an engine are required")
	}
	cfg.Region = cmp.Or(cfg.Region, DefaultRegion)
	cfg.Account = cmp.Or(cfg.Account, DefaultAccount)
	cfg.Partition = cmp.Or(cfg.Partition, DefaultPartition)
	cfg.PayloadLimit = cmp.Or(cfg.PayloadLimit, DefaultPayloadLimit)
	if cfg.PayloadLimit < 0 {
		return nil, errors.New("service: PayloadLimit must not be negative")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Definitions == nil {
		cfg.Definitions = defcache.New(0)
	}
	if cfg.NewID == nil {
		cfg.NewID = func() string { return uuid.NewString() }
	}
	starter := start.New(start.Config{Store: drv.Executor(), Runs: eng,
		Partition: cfg.Partition, Region: cfg.Region, Account: cfg.Account, PayloadLimit: cfg.PayloadLimit,
		NewID: cfg.NewID, Definitions: cfg.Definitions, TestCase: cfg.TestCase, CacheFor: startCacheTTL, Now: cfg.Now})
	return &Service{cfg: cfg, store: drv, engine: eng, starter: starter,
		activities: recent.New[struct{}](activityCacheTTL, defcache.DefaultSize, cfg.Now)}, nil
}

// Config returns the service's configuration with defaults applied.
func (s *Service) Config() Config { return s.cfg }

// now returns the time with the store's precision.
func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Millisecond) }

func (s *Service) db() store.Executor { return s.store.Executor() }

// inTx runs fn in one store transaction.
func (s *Service) inTx(ctx context.Context, fn func(tx store.ExecutorTx) error) error {
	tx, err := s.store.Begin(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	return tx.Commit(ctx)
}

func ptr[T any](v T) *T { return &v }

func itoa(i int) string { return strconv.Itoa(i) }
