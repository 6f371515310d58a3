// Package server is Stepwise's composition root: the one place where the
// store, the engine, the service, the scheduler, the console, the
// engine's observers, the task integrations, the deployer and the
// security gates meet. `stepwise serve` parses its flags into a
// config.Serve and a few options and hands them to New; tests start the
// same server through server/servertest instead of wiring the parts by
// hand.
//
// # Life
//
//	New(cfg, opts...)   assembled: store open, engine built, handler ready; nothing runs
//	  │ Start(ctx)      events' delivery, engine (resumes executions), retention,
//	  │                 deploys of WithDeployAtStart, schedules
//	  │ Listen()        HTTP on cfg.Addr, in the background (URL, Addr)
//	  │ Serve(ctx)      waits: ctx done → graceful Shutdown; lease lost → error
//	  ▼
//	Close()             schedules, retention, engine, traces, events, logs,
//	                    task runners, store: in that order, once
//
// Handler serves everything on one port: the Step Functions API (AWS JSON
// 1.0), the EventBridge Scheduler API, the console, the probes (/healthz,
// /readyz, /health), /metrics, the clock (/stepwise/clock) and deploys
// (/stepwise/deploy), behind the cross-origin guard, and behind the Host
// check or, with credentials, SigV4 authentication.
//
// # Options
//
// config.Serve holds the settings; an Option hands over what is not a
// setting: the logger, a mock configuration, events' destinations,
// tracing, deploys to run at start, and, for tests, other task runners
// (WithTasks) or a store of the caller's (WithStore). Each option checks
// its value. A setting the server cannot take is a *ConfigError, which
// the command reports as bad usage.
package server
