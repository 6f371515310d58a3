// Package expr parses and evaluates Amazon EventBridge Scheduler schedule
// expressions: at(), rate() and cron(), evaluated in an IANA time zone.
//
// It depends on the standard library only and embeds the IANA time zone
// database (time/tzdata), so zone names resolve on machines without
// /usr/share/zoneinfo.
//
// # Sources
//
// The behaviour follows what AWS documents; where AWS is silent the choice
// made here is stated explicitly.
//
//   - Schedule types (at, rate, cron; time zones; daylight saving time):
//     https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html
//   - Cron fields, values and wildcards (the table Scheduler refers to):
//     https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-cron-expressions.html
//   - CreateSchedule (ScheduleExpression formats, StartDate/EndDate,
//     ScheduleExpressionTimezone):
//     https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
//   - Daylight saving time (AWS knowledge center):
//     https://repost.aws/knowledge-center/eventbridge-scheduler-adjust-dst
//
// # Expressions
//
//	at(yyyy-mm-ddThh:mm:ss)   one time, a wall-clock time in the schedule's zone
//	rate(value unit)          value >= 1; unit minute|minutes|hour|hours|day|days
//	cron(min hour dom month dow year)
//
// rate: the singular unit is accepted only with the value 1 (rate(5 minute)
// is invalid). The plural with 1 (rate(1 minutes)) is accepted: the Scheduler
// API reference lists both forms as valid units without the EventBridge-rules
// restriction, and it is reported working against the live Scheduler API.
// A day is a fixed 24 hours, as AWS documents for DST ("days represents a
// 24-hour duration"), so a daily rate drifts by an hour in wall-clock terms
// across a DST change.
//
// cron: six whitespace-separated fields, AWS's table:
//
//	Minutes       0-59              , - * /
//	Hours         0-23              , - * /
//	Day-of-month  1-31              , - * ? / L W
//	Month         1-12 or JAN-DEC   , - * /
//	Day-of-week   1-7 or SUN-SAT    , - * ? L #     (1 = Sunday)
//	Year          1970-2199         , - * /
//
// Exactly one of Day-of-month and Day-of-week must be "?". Items accepted:
// "*", "*/n", "a", "a-b", "a/n", "a-b/n" (a-b with a > b wraps around, as in
// Quartz, except for Year); in Day-of-month "L" (last day), "LW" (last
// weekday), "nW" (weekday nearest day n, never leaving the month; no match in
// a month that has no day n); in Day-of-week "L" (alone: Saturday, "the last
// day of the week"), "dL" (last weekday d of the month), "d#k" (k-th weekday
// d of the month, k 1-5). L, W, # and ? items must stand alone in their field
// (AWS: "3#1,6#3" is invalid). "/" is refused in Day-of-week because AWS's
// table does not list it there. Month and day names are case-insensitive.
//
// # Errors
//
// An invalid expression yields an *Error whose Error() is exactly the message
// CreateSchedule returns in its ValidationException,
// "Invalid Schedule Expression <expression>." (wording as observed from the
// live API, e.g. "Invalid Schedule Expression rate(30 seconds)."); the
// offending field and the reason are in the Error's fields and Detail(). An
// unknown time zone yields a *TimezoneError (its wording is this package's
// own: AWS does not document it).
//
// # Time zones and daylight saving time
//
// ScheduleExpressionTimezone is an IANA name; "" means UTC. "Local" is
// refused because it would depend on the host. cron and at are evaluated in
// wall-clock time of that zone. AWS documents: "When the time shifts forward
// in Spring, your schedule invocation gets skipped if the cron expression
// falls on a non-existent date and time. When the time shifts back in the
// Fall, your schedule runs only once and doesn't repeat its invocation."
// Accordingly, for cron:
//
//   - a wall-clock time inside a spring-forward gap does not fire at all
//     (cron(30 2 * * ? *) in America/New_York has no slot on 2024-03-10);
//   - a wall-clock time repeated by a fall-back overlap fires once, at its
//     first (daylight-time) occurrence (cron(30 1 * * ? *) fires at 01:30 EDT
//     on 2024-11-03 and not again at 01:30 EST; cron(0 * * * ? *) has no slot
//     at 01:00 EST that day).
//
// For at() AWS documents nothing about DST. An at() time that falls in an
// overlap fires at its first occurrence, like cron. An at() time inside a gap
// fires at the instant obtained with the UTC offset in force before the gap,
// i.e. shifted later by the length of the gap (at(2024-03-10T02:30:00) in
// America/New_York fires at 03:30 EDT), the convention of RFC 5545 and
// java.time, so that a one-time schedule is never silently lost.
//
// # rate anchoring, StartDate and EndDate
//
// AWS: "With rate-based schedules, you use the StartDate property to set the
// first occurrence of the schedule. If you do not provide a StartDate for a
// rate-based schedule, your schedule starts invoking the target immediately."
// A rate's slots are therefore anchor + k*interval, k >= 0, where the anchor
// is StartDate if set, else the creation time (ParseAt). Scheduler works with
// 60 second precision ("invoke their targets with 60 second precision"), so
// the anchor is truncated to the whole minute; an observation of the live
// service (a StartDate of hh:mm:30 firing on minute boundaries) agrees.
// Parse uses time.Now() as the anchor.
//
// Bounded applies StartDate (inclusive: "invocations might occur on, or after,
// the StartDate") and EndDate (exclusive: "the date ... before which the
// schedule can invoke its target"). As AWS documents, "EventBridge Scheduler
// ignores StartDate [and EndDate] for one-time schedules": Bounded returns an
// at() expression unchanged.
package expr
