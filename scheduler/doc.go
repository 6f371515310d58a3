// Package scheduler is EventBridge Scheduler on Stepwise's own port: its
// API, its schedules, and their firing, which starts the executions.
//
// # The API (api.go, schedule.go, errors.go)
//
// Service's operations are CreateSchedule, GetSchedule, UpdateSchedule,
// DeleteSchedule, ListSchedules, the schedule groups and their tags, with
// AWS's validation and wording; they take and return typed values and
// fail with *Error (the exception's code, status and message). Their wire,
// REST-JSON over HTTP (routes, decoding, the error shape, RequireAuth), is
// package scheduler/restjson, as awsjson is the Step Functions API's over
// package service. Schedules and groups are stored through the store seam
// (store.Schedule); a list's NextToken is the front door's page token
// (internal/frontdoor), refused by another list or other filters.
// Expressions (cron, rate, at, in a time zone) are package expr.
//
// # Firing (fire.go)
//
// Run, on the cluster's leader, fires the slots that are due in execution
// time (so --wait-time-scale and --time-skip apply; the next slot is an
// engine alarm, which fires when the clock reaches it: time skipping
// stops at it on the way to an execution's timer, never jumps to it for
// its own sake, and `stepwise clock advance` passes it):
//
//	slot due ──► StartExecution (named from the schedule and the slot:
//	             │                once per slot, whoever fires it)
//	             ├─ started, or already started ──► next slot
//	             └─ failed ──► retried (RetryPolicy, within
//	                           MaximumEventAgeInSeconds; attempts kept
//	                           with the schedule) ──► exhausted ──►
//	                           the dead-letter queue (DeadLetterConfig)
//
// A slot missed while the server was down fires late while it is younger
// than MaximumEventAgeInSeconds, and is dropped after that.
//
// # Business dates and calendars (template.go, calendar.go)
//
// Execution names and inputs may use <stepwise.scheduled-date:FORMAT:OFFSET>
// (a format such as yyyyMMdd, an offset such as -1d, -5h or -1bd),
// checked when a schedule is written. A schedule fires by a business
// calendar (serve --calendar NAME=FILE) when its group's tags say so
// (stepwise:calendar, stepwise:calendar/<schedule>: calendar:rule):
//
//	slot ──► a business day? ── yes ──► fires at the slot
//	          └─ no ──► skip: does not fire
//	                    next / previous: fires at the same local time on
//	                    the nearest business day after / before, unless
//	                    that is not after the firing before it (folded)
//
// The cursor stays the slot, so restarts move slots the same way.
//
// # The console (overview.go)
//
// Overview lists each schedule with its last run and its next ones.
package scheduler
