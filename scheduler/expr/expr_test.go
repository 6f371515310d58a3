package expr

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("bad test time %q: %v", s, err)
	}
	return tm
}

func mustParse(t testing.TB, expr, tz string) Expr {
	t.Helper()
	e, err := ParseAt(expr, tz, mustTime(t, "2024-01-01T00:00:00Z"))
	if err != nil {
		t.Fatalf("ParseAt(%q, %q): %v", expr, tz, err)
	}
	return e
}

// chain returns the first n slots after from.
func chain(e Expr, from time.Time, n int) []time.Time {
	var out []time.Time
	for len(out) < n {
		t, ok := e.Next(from)
		if !ok {
			break
		}
		out = append(out, t)
		from = t
	}
	return out
}

func checkChain(t *testing.T, name string, e Expr, from string, want []string) {
	t.Helper()
	got := chain(e, mustTime(t, from), len(want)+1)
	for i, w := range want {
		if i >= len(got) {
			t.Errorf("%s: slot %d: got none, want %s", name, i, w)
			continue
		}
		if !got[i].Equal(mustTime(t, w)) {
			t.Errorf("%s: slot %d: got %s (%s), want %s", name, i,
				got[i].UTC().Format(time.RFC3339), got[i].Format(time.RFC3339), w)
		}
	}
}

func TestCronSyntax(t *testing.T) {
	tests := []struct {
		expr, tz, from string
		want           []string
	}{
		// AWS documentation examples.
		{"cron(0 10 * * ? *)", "", "2024-01-01T00:00:00Z",
			[]string{"2024-01-01T10:00:00Z", "2024-01-02T10:00:00Z"}},
		{"cron(15 12 * * ? *)", "", "2024-01-01T12:15:00Z",
			[]string{"2024-01-02T12:15:00Z"}},
		{"cron(0 18 ? * MON-FRI *)", "", "2024-01-05T19:00:00Z", // a Friday evening
			[]string{"2024-01-08T18:00:00Z", "2024-01-09T18:00:00Z"}},
		{"cron(0 8 1 * ? *)", "", "2024-01-15T00:00:00Z",
			[]string{"2024-02-01T08:00:00Z", "2024-03-01T08:00:00Z"}},
		{"cron(0/15 * * * ? *)", "", "2024-01-01T00:00:00Z",
			[]string{"2024-01-01T00:15:00Z", "2024-01-01T00:30:00Z", "2024-01-01T00:45:00Z", "2024-01-01T01:00:00Z"}},
		{"cron(1/10 * * * ? *)", "", "2024-01-01T00:00:00Z",
			[]string{"2024-01-01T00:01:00Z", "2024-01-01T00:11:00Z", "2024-01-01T00:21:00Z"}},
		{"cron(0/5 8-17 ? * MON-FRI *)", "", "2024-01-05T17:50:00Z",
			[]string{"2024-01-05T17:55:00Z", "2024-01-08T08:00:00Z"}},
		{"cron(0 9 ? * 2#1 *)", "", "2024-01-02T00:00:00Z",
			[]string{"2024-02-05T09:00:00Z", "2024-03-04T09:00:00Z"}},
		// , - * / and names.
		{"cron(5,20 3 * * ? *)", "", "2024-01-01T00:00:00Z",
			[]string{"2024-01-01T03:05:00Z", "2024-01-01T03:20:00Z", "2024-01-02T03:05:00Z"}},
		{"cron(5-10/2 0 * * ? *)", "", "2024-01-01T00:00:00Z",
			[]string{"2024-01-01T00:05:00Z", "2024-01-01T00:07:00Z", "2024-01-01T00:09:00Z", "2024-01-02T00:05:00Z"}},
		{"cron(*/20 0 * * ? *)", "", "2024-01-01T00:00:00Z",
			[]string{"2024-01-01T00:20:00Z", "2024-01-01T00:40:00Z", "2024-01-02T00:00:00Z"}},
		{"cron(50-10/5 0 * * ? *)", "", "2024-01-01T00:00:00Z", // wraps around
			[]string{"2024-01-01T00:05:00Z", "2024-01-01T00:10:00Z", "2024-01-01T00:50:00Z", "2024-01-01T00:55:00Z", "2024-01-02T00:00:00Z"}},
		{"cron(0 22-1 * * ? *)", "", "2024-01-01T00:30:00Z",
			[]string{"2024-01-01T01:00:00Z", "2024-01-01T22:00:00Z", "2024-01-01T23:00:00Z", "2024-01-02T00:00:00Z"}},
		{"cron(0 0 ? * FRI-MON *)", "", "2024-01-02T00:00:00Z", // Tuesday
			[]string{"2024-01-05T00:00:00Z", "2024-01-06T00:00:00Z", "2024-01-07T00:00:00Z", "2024-01-08T00:00:00Z", "2024-01-12T00:00:00Z"}},
		{"cron(0 0 1 jan,Jul ? *)", "", "2024-01-01T00:00:00Z",
			[]string{"2024-07-01T00:00:00Z", "2025-01-01T00:00:00Z"}},
		{"cron(0 0 1 */3 ? *)", "", "2024-01-01T00:00:00Z",
			[]string{"2024-04-01T00:00:00Z", "2024-07-01T00:00:00Z", "2024-10-01T00:00:00Z", "2025-01-01T00:00:00Z"}},
		{"cron(0 0 1 FEB-APR ? *)", "", "2024-01-01T00:00:00Z",
			[]string{"2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z", "2025-02-01T00:00:00Z"}},
		{"cron(0 0 ? * 1,7 *)", "", "2024-01-01T00:00:00Z", // 1 = Sunday, 7 = Saturday
			[]string{"2024-01-06T00:00:00Z", "2024-01-07T00:00:00Z", "2024-01-13T00:00:00Z"}},
		{"cron(0 0 ? * * *)", "", "2024-01-01T00:00:00Z",
			[]string{"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"}},
		{"cron(0 0 1 1 ? 2024/4)", "", "2024-01-01T00:00:00Z",
			[]string{"2028-01-01T00:00:00Z", "2032-01-01T00:00:00Z"}},
		{"cron(0 0 1 1 ? 2025,2030-2031)", "", "2024-01-01T00:00:00Z",
			[]string{"2025-01-01T00:00:00Z", "2030-01-01T00:00:00Z", "2031-01-01T00:00:00Z"}},
		{"cron(0  0   1 1 ? 2025)", "", "2024-01-01T00:00:00Z", // runs of white space
			[]string{"2025-01-01T00:00:00Z"}},
		{"cron(07 09 * * ? *)", "", "2024-01-01T00:00:00Z", // leading zeros
			[]string{"2024-01-01T09:07:00Z"}},
	}
	for _, tc := range tests {
		checkChain(t, tc.expr, mustParse(t, tc.expr, tc.tz), tc.from, tc.want)
	}
}

func TestCronLWHash(t *testing.T) {
	tests := []struct {
		expr, from string
		want       []string
	}{
		// L in Day-of-month: last day, leap year included.
		{"cron(0 0 L * ? *)", "2024-01-15T00:00:00Z",
			[]string{"2024-01-31T00:00:00Z", "2024-02-29T00:00:00Z", "2024-03-31T00:00:00Z", "2024-04-30T00:00:00Z"}},
		{"cron(0 0 L 2 ? *)", "2023-01-01T00:00:00Z",
			[]string{"2023-02-28T00:00:00Z", "2024-02-29T00:00:00Z", "2025-02-28T00:00:00Z"}},
		// LW: last weekday of the month.
		{"cron(0 0 LW * ? *)", "2024-03-01T00:00:00Z",
			[]string{"2024-03-29T00:00:00Z", "2024-04-30T00:00:00Z", "2024-05-31T00:00:00Z", "2024-06-28T00:00:00Z"}},
		{"cron(0 0 LW 8 ? 2024)", "2024-01-01T00:00:00Z", []string{"2024-08-30T00:00:00Z"}},
		// nW: nearest weekday, staying in the month.
		{"cron(0 0 1W * ? 2024)", "2024-05-15T00:00:00Z",
			[]string{"2024-06-03T00:00:00Z", "2024-07-01T00:00:00Z", "2024-08-01T00:00:00Z", "2024-09-02T00:00:00Z"}},
		{"cron(0 0 15W 6,9 ? 2024)", "2024-01-01T00:00:00Z",
			[]string{"2024-06-14T00:00:00Z", "2024-09-16T00:00:00Z"}},
		{"cron(0 0 30W 6,9 ? 2024)", "2024-01-01T00:00:00Z",
			[]string{"2024-06-28T00:00:00Z", "2024-09-30T00:00:00Z"}},
		{"cron(0 0 31W 9-10 ? 2024)", "2024-01-01T00:00:00Z", // no day 31 in September
			[]string{"2024-10-31T00:00:00Z"}},
		{"cron(0 0 3W * ? *)", "2024-02-01T00:00:00Z", // 2024-02-03 is a Saturday
			[]string{"2024-02-02T00:00:00Z", "2024-03-04T00:00:00Z"}},
		// dL: last given weekday of the month.
		{"cron(15 10 ? * 6L *)", "2024-01-01T00:00:00Z",
			[]string{"2024-01-26T10:15:00Z", "2024-02-23T10:15:00Z", "2024-03-29T10:15:00Z"}},
		{"cron(15 10 ? * FRIL *)", "2024-01-01T00:00:00Z",
			[]string{"2024-01-26T10:15:00Z"}},
		// L alone in Day-of-week: Saturday.
		{"cron(0 0 ? * L *)", "2024-01-01T00:00:00Z",
			[]string{"2024-01-06T00:00:00Z", "2024-01-13T00:00:00Z"}},
		// d#k: k-th weekday of the month.
		{"cron(0 0 ? * 3#2 *)", "2024-01-01T00:00:00Z",
			[]string{"2024-01-09T00:00:00Z", "2024-02-13T00:00:00Z"}},
		{"cron(0 0 ? * 6#5 *)", "2024-01-01T00:00:00Z", // months with a fifth Friday only
			[]string{"2024-03-29T00:00:00Z", "2024-05-31T00:00:00Z", "2024-08-30T00:00:00Z"}},
		{"cron(0 0 ? * MON#1 *)", "2024-01-01T00:00:00Z",
			[]string{"2024-02-05T00:00:00Z"}},
	}
	for _, tc := range tests {
		checkChain(t, tc.expr, mustParse(t, tc.expr, ""), tc.from, tc.want)
	}
}

func TestCronLeapYearsAndYearRange(t *testing.T) {
	e := mustParse(t, "cron(0 12 29 2 ? *)", "")
	checkChain(t, "Feb 29", e, "2023-01-01T00:00:00Z",
		[]string{"2024-02-29T12:00:00Z", "2028-02-29T12:00:00Z"})
	// 2100 is not a leap year.
	checkChain(t, "Feb 29 over 2100", e, "2097-03-01T00:00:00Z",
		[]string{"2104-02-29T12:00:00Z"})
	// 2000 was.
	checkChain(t, "Feb 29 2000", mustParse(t, "cron(0 0 29 2 ? 1999-2001)", ""), "1990-01-01T00:00:00Z",
		[]string{"2000-02-29T00:00:00Z"})

	noneAfter := []struct{ expr, after string }{
		{"cron(0 0 29 2 ? 2197-2199)", "2196-03-01T00:00:00Z"}, // no leap year left
		{"cron(0 0 1 1 ? 2020)", "2021-01-01T00:00:00Z"},       // years over
		{"cron(0 0 30 2 ? *)", "1970-01-01T00:00:00Z"},         // never
		{"cron(59 23 31 12 ? *)", "2199-12-31T23:59:00Z"},      // last possible slot
		{"cron(0 0 * * ? *)", "2300-01-01T00:00:00Z"},          // after 2199
	}
	for _, tc := range noneAfter {
		e := mustParse(t, tc.expr, "")
		if got, ok := e.Next(mustTime(t, tc.after)); ok {
			t.Errorf("%s after %s: got %s, want none", tc.expr, tc.after, got)
		}
	}
	checkChain(t, "last slot", mustParse(t, "cron(59 23 31 12 ? *)", ""), "2199-12-31T23:58:00Z",
		[]string{"2199-12-31T23:59:00Z"})
	checkChain(t, "before 1970", mustParse(t, "cron(0 0 1 1 ? *)", ""), "1900-06-01T00:00:00Z",
		[]string{"1970-01-01T00:00:00Z", "1971-01-01T00:00:00Z"})
}

func TestNextIsStrictlyAfter(t *testing.T) {
	e := mustParse(t, "cron(30 10 * * ? *)", "")
	at := mustTime(t, "2024-01-01T10:30:00Z")
	if got, _ := e.Next(at); !got.Equal(mustTime(t, "2024-01-02T10:30:00Z")) {
		t.Errorf("Next at a slot: got %s", got)
	}
	if got, _ := e.Next(at.Add(-time.Nanosecond)); !got.Equal(at) {
		t.Errorf("Next just before a slot: got %s", got)
	}
	if got, _ := e.Next(at.Add(30 * time.Second)); !got.Equal(mustTime(t, "2024-01-02T10:30:00Z")) {
		t.Errorf("Next within a slot's minute: got %s", got)
	}
}

func TestTimeZones(t *testing.T) {
	tests := []struct {
		expr, tz, from string
		want           []string
	}{
		{"cron(0 9 * * ? *)", "Asia/Tokyo", "2024-01-01T00:00:00Z",
			[]string{"2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"}},
		{"cron(0 0 1 * ? *)", "Asia/Tokyo", "2024-01-01T00:00:00Z", // Tokyo midnight on the 1st = 15:00Z the day before
			[]string{"2024-01-31T15:00:00Z", "2024-02-29T15:00:00Z"}},
		{"cron(0 9 ? * MON *)", "Asia/Tokyo", "2024-01-01T00:00:00Z",
			[]string{"2024-01-08T00:00:00Z"}},
		{"cron(0 12 * * ? *)", "America/New_York", "2024-01-01T00:00:00Z",
			[]string{"2024-01-01T17:00:00Z"}},
		{"cron(0 12 * * ? *)", "America/New_York", "2024-07-01T00:00:00Z",
			[]string{"2024-07-01T16:00:00Z"}},
		{"cron(0 12 * * ? *)", "UTC", "2024-07-01T00:00:00Z",
			[]string{"2024-07-01T12:00:00Z"}},
		{"cron(0 12 * * ? *)", "Asia/Kolkata", "2024-07-01T00:00:00Z",
			[]string{"2024-07-01T06:30:00Z"}},
		{"at(2024-06-01T09:00:00)", "Asia/Tokyo", "2024-01-01T00:00:00Z",
			[]string{"2024-06-01T00:00:00Z"}},
		{"at(2024-06-01T09:00:00)", "", "2024-01-01T00:00:00Z",
			[]string{"2024-06-01T09:00:00Z"}},
	}
	for _, tc := range tests {
		checkChain(t, tc.expr+" "+tc.tz, mustParse(t, tc.expr, tc.tz), tc.from, tc.want)
	}
	e := mustParse(t, "cron(0 9 * * ? *)", "Asia/Tokyo")
	got, _ := e.Next(mustTime(t, "2024-01-01T00:00:00Z"))
	if got.Location().String() != "Asia/Tokyo" || got.Hour() != 9 {
		t.Errorf("slot not reported in the schedule's zone: %s", got)
	}
}

// America/New_York, 2024: clocks spring forward on 10 March at 02:00 EST to
// 03:00 EDT (07:00Z) and fall back on 3 November at 02:00 EDT to 01:00 EST
// (06:00Z).
func TestDaylightSavingTime(t *testing.T) {
	ny := "America/New_York"
	tests := []struct {
		name, expr, tz, from string
		want                 []string
	}{
		{"02:30 is skipped on the spring-forward day",
			"cron(30 2 * * ? *)", ny, "2024-03-08T12:00:00Z",
			[]string{"2024-03-09T07:30:00Z", "2024-03-11T06:30:00Z", "2024-03-12T06:30:00Z"}},
		{"02:30 on the fall-back day exists once (EST)",
			"cron(30 2 * * ? *)", ny, "2024-11-01T12:00:00Z",
			[]string{"2024-11-02T06:30:00Z", "2024-11-03T07:30:00Z", "2024-11-04T07:30:00Z"}},
		{"01:30 on the fall-back day runs once, at its first (EDT) occurrence",
			"cron(30 1 * * ? *)", ny, "2024-11-02T12:00:00Z",
			[]string{"2024-11-03T05:30:00Z", "2024-11-04T06:30:00Z"}},
		{"hourly across spring forward: no 02:00",
			"cron(0 * * * ? *)", ny, "2024-03-10T05:30:00Z",
			[]string{"2024-03-10T06:00:00Z", "2024-03-10T07:00:00Z", "2024-03-10T08:00:00Z"}},
		{"hourly across fall back: 01:00 runs once",
			"cron(0 * * * ? *)", ny, "2024-11-03T03:30:00Z",
			[]string{"2024-11-03T04:00:00Z", "2024-11-03T05:00:00Z", "2024-11-03T07:00:00Z", "2024-11-03T08:00:00Z"}},
		{"from inside the repeated hour (01:10 EST), the next slot is after it",
			"cron(0/15 * * * ? *)", ny, "2024-11-03T06:10:00Z",
			[]string{"2024-11-03T07:00:00Z", "2024-11-03T07:15:00Z"}},
		{"every 30 minutes across spring forward",
			"cron(0/30 * * * ? *)", ny, "2024-03-10T06:00:00Z",
			[]string{"2024-03-10T06:30:00Z", "2024-03-10T07:00:00Z", "2024-03-10T07:30:00Z"}},
		{"rate(1 day) is 24 hours, so it moves an hour on the wall clock",
			"rate(1 day)", ny, "2024-03-09T16:59:00Z",
			[]string{"2024-03-09T17:00:00Z", "2024-03-10T17:00:00Z", "2024-03-11T17:00:00Z"}},
		{"at() in the gap is shifted later by the gap (03:30 EDT)",
			"at(2024-03-10T02:30:00)", ny, "2024-03-01T00:00:00Z",
			[]string{"2024-03-10T07:30:00Z"}},
		{"at() in the overlap fires at the first occurrence (01:30 EDT)",
			"at(2024-11-03T01:30:00)", ny, "2024-11-01T00:00:00Z",
			[]string{"2024-11-03T05:30:00Z"}},
		// Lord Howe Island moves its clocks by 30 minutes: 02:00 -> 02:30 on
		// 2024-10-06 (+10:30 -> +11:00), 02:00 -> 01:30 on 2024-04-07.
		{"half-hour DST gap (Lord Howe)",
			"cron(15 2 * * ? *)", "Australia/Lord_Howe", "2024-10-04T12:00:00Z",
			[]string{"2024-10-04T15:45:00Z", "2024-10-06T15:15:00Z"}},
		{"half-hour DST overlap (Lord Howe)",
			"cron(45 1 * * ? *)", "Australia/Lord_Howe", "2024-04-05T12:00:00Z",
			[]string{"2024-04-05T14:45:00Z", "2024-04-06T14:45:00Z", "2024-04-07T15:15:00Z"}},
	}
	for _, tc := range tests {
		e, err := ParseAt(tc.expr, tc.tz, mustTime(t, "2024-03-09T17:00:00Z"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		checkChain(t, tc.name, e, tc.from, tc.want)
	}

	gap := mustParse(t, "at(2024-03-10T02:30:00)", ny).(*At)
	if !gap.InGap() || gap.Repeated() {
		t.Errorf("at() in gap: InGap=%v Repeated=%v", gap.InGap(), gap.Repeated())
	}
	if h, m := gap.Time().Hour(), gap.Time().Minute(); h != 3 || m != 30 {
		t.Errorf("at() in gap: local %s, want 03:30", gap.Time())
	}
	overlap := mustParse(t, "at(2024-11-03T01:30:00)", ny).(*At)
	if overlap.InGap() || !overlap.Repeated() {
		t.Errorf("at() in overlap: InGap=%v Repeated=%v", overlap.InGap(), overlap.Repeated())
	}
	plain := mustParse(t, "at(2024-11-03T03:30:00)", ny).(*At)
	if plain.InGap() || plain.Repeated() {
		t.Errorf("plain at(): InGap=%v Repeated=%v", plain.InGap(), plain.Repeated())
	}
}

func TestAt(t *testing.T) {
	e := mustParse(t, "at(2024-05-06T07:08:09)", "")
	want := mustTime(t, "2024-05-06T07:08:09Z")
	if got, ok := e.Next(mustTime(t, "2024-01-01T00:00:00Z")); !ok || !got.Equal(want) {
		t.Errorf("before: got %s %v", got, ok)
	}
	if _, ok := e.Next(want); ok {
		t.Errorf("at the time itself: want none")
	}
	if _, ok := e.Next(mustTime(t, "2025-01-01T00:00:00Z")); ok {
		t.Errorf("in the past: want none")
	}
	leap := mustParse(t, "at(2024-02-29T23:59:59)", "")
	if got, _ := leap.Next(time.Time{}); !got.Equal(mustTime(t, "2024-02-29T23:59:59Z")) {
		t.Errorf("leap day at(): %s", got)
	}
}

func TestRate(t *testing.T) {
	anchor := mustTime(t, "2024-01-01T10:00:30Z") // truncated to 10:00:00
	tests := []struct {
		expr, from string
		want       []string
	}{
		{"rate(5 minutes)", "2024-01-01T09:00:00Z",
			[]string{"2024-01-01T10:00:00Z", "2024-01-01T10:05:00Z", "2024-01-01T10:10:00Z"}},
		{"rate(5 minutes)", "2024-01-01T10:02:59Z", []string{"2024-01-01T10:05:00Z"}},
		{"rate(5 minutes)", "2024-01-01T10:05:00Z", []string{"2024-01-01T10:10:00Z"}},
		{"rate(1 minute)", "2024-01-01T10:00:00Z", []string{"2024-01-01T10:01:00Z"}},
		{"rate(1 minutes)", "2024-01-01T10:00:00Z", []string{"2024-01-01T10:01:00Z"}},
		{"rate(1 hour)", "2024-01-01T13:30:00Z", []string{"2024-01-01T14:00:00Z"}},
		{"rate(12 hours)", "2024-01-01T00:00:00Z", []string{"2024-01-01T10:00:00Z", "2024-01-01T22:00:00Z"}},
		{"rate(1 day)", "2024-01-01T10:00:00Z", []string{"2024-01-02T10:00:00Z"}},
		{"rate(7 days)", "2024-01-01T10:00:00Z", []string{"2024-01-08T10:00:00Z", "2024-01-15T10:00:00Z"}},
		{"rate(2 days)", "2025-01-01T00:00:00Z", []string{"2025-01-01T10:00:00Z"}}, // 366 days on
	}
	for _, tc := range tests {
		e, err := ParseAt(tc.expr, "", anchor)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		checkChain(t, tc.expr+" from "+tc.from, e, tc.from, tc.want)
	}
	r, _ := ParseAt("rate(90 minutes)", "Asia/Tokyo", anchor)
	rr := r.(*Rate)
	if rr.Interval() != 90*time.Minute || !rr.Anchor().Equal(mustTime(t, "2024-01-01T10:00:00Z")) {
		t.Errorf("Rate accessors: %v %v", rr.Interval(), rr.Anchor())
	}
	moved := rr.WithAnchor(mustTime(t, "2024-02-01T00:00:00Z"))
	if got, _ := moved.Next(mustTime(t, "2024-02-01T00:00:00Z")); !got.Equal(mustTime(t, "2024-02-01T01:30:00Z")) {
		t.Errorf("WithAnchor: %s", got)
	}
	// Parse anchors at now.
	now := time.Now()
	p, err := Parse("rate(1 minute)", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := p.Next(now.Add(-time.Hour)); got.Before(now.Add(-time.Minute)) || got.After(now) {
		t.Errorf("Parse rate anchor: first slot %s, now %s", got, now)
	}
}

func TestInvalid(t *testing.T) {
	invalid := []string{
		"", "cron()", "rate()", "at()", "every 5 minutes", "Cron(0 0 * * ? *)", " cron(0 0 * * ? *)",
		"cron(0 0 * * ? *) ", "cron 0 0 * * ? *", "cron(0 0 * * ? *",
		// field count
		"cron(0 0 * * ?)", "cron(0 0 0 * * ? *)", "cron(*/30 * * * * ? *)",
		// ? rule
		"cron(0 0 * * * *)", "cron(0 0 ? * ? *)", "cron(0 0 1 * MON *)", "cron(0 0 L * 2 *)",
		// ranges
		"cron(60 0 * * ? *)", "cron(0 24 * * ? *)", "cron(0 0 0 * ? *)", "cron(0 0 32 * ? *)",
		"cron(0 0 * 0 ? *)", "cron(0 0 * 13 ? *)", "cron(0 0 ? * 0 *)", "cron(0 0 ? * 8 *)",
		"cron(0 0 * * ? 1969)", "cron(0 0 * * ? 2200)", "cron(0 0 * * ? 2025-2024)",
		"cron(-1 0 * * ? *)", "cron(0-60 0 * * ? *)",
		// steps
		"cron(0/0 * * * ? *)", "cron(0/60 * * * ? *)", "cron(0 0/24 * * ? *)", "cron(0 0 ? * 1/2 *)",
		"cron(/5 * * * ? *)", "cron(0/ * * * ? *)", "cron(0/5/5 * * * ? *)", "cron(** * * * ? *)",
		// lists and tokens
		"cron(,0 0 * * ? *)", "cron(0, 0 * * ? *)", "cron(0,,1 0 * * ? *)", "cron(a 0 * * ? *)",
		"cron(0 0 * FOO ? *)", "cron(0 0 ? * FUN *)", "cron(0 0 * JANUARY ? *)", "cron(0 0 * * ? 20x5)",
		"cron(1.5 0 * * ? *)", "cron(0 0 * * ? ?)", "cron(? 0 * * ? *)", "cron(0 0 * ? ? *)",
		// L W #
		"cron(0 0 L,15 * ? *)", "cron(0 0 L-2 * ? *)", "cron(0 0 1-5W * ? *)", "cron(0 0 W * ? *)",
		"cron(0 0 32W * ? *)", "cron(0 0 0W * ? *)", "cron(0 0 5W,6 * ? *)", "cron(0 0 ?,1 * ? *)",
		"cron(0 0 ? * 3#1,6#3 *)", "cron(0 0 ? * 2#6 *)", "cron(0 0 ? * 2#0 *)", "cron(0 0 ? * 8#1 *)",
		"cron(0 0 ? * #1 *)", "cron(0 0 ? * 2# *)", "cron(0 0 ? * 2#1#1 *)", "cron(0 0 ? * 1-2#1 *)",
		"cron(0 0 ? * 8L *)", "cron(0 0 ? * L,2 *)", "cron(0 0 ? * 1-3L *)", "cron(0 0 ? * LL *)",
		"cron(0 0 ? * 2W *)", "cron(0 0 ? * ?,1 *)", "cron(0 0 1 L ? *)", "cron(L 0 1 * ? *)",
		// rate
		"rate(5 minute)", "rate(2 hour)", "rate(3 day)", "rate(0 minutes)", "rate(00 minutes)",
		"rate(30 seconds)", "rate(1 second)", "rate(1 week)", "rate(5)", "rate(minutes 5)",
		"rate(1.5 hours)", "rate(-1 hours)", "rate(+1 hours)", "rate(5 Minutes)", "rate(1 minute extra)",
		"rate(99999999999999999999 minutes)", "rate(9999999999999 days)",
		// at
		"at(2024-02-30T00:00:00)", "at(2023-02-29T10:00:00)", "at(2024-04-31T00:00:00)",
		"at(2024-13-01T00:00:00)", "at(2024-00-01T00:00:00)", "at(2024-01-00T00:00:00)",
		"at(2024-01-01 00:00:00)", "at(2024-01-01T24:00:00)", "at(2024-01-01T00:60:00)",
		"at(2024-01-01T00:00:60)", "at(2024-01-01T00:00:00Z)", "at(2024-01-01T00:00:00.123)",
		"at(2024-01-01T00:00)", "at(2024-1-01T00:00:00)", "at(24-01-01T00:00:00)", "at(2024-01-01t00:00:00)",
		"at(+024-01-01T00:00:00)", "at(2024-01-01T00:00:00+09:00)", "at(2024-01-01T00:00:00))",
	}
	for _, s := range invalid {
		e, err := ParseAt(s, "", time.Unix(0, 0))
		if err == nil {
			t.Errorf("ParseAt(%q) = %v, want an error", s, e)
			continue
		}
		var pe *Error
		if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidExpression) {
			t.Errorf("ParseAt(%q): error %T %v is not an *Error", s, err, err)
			continue
		}
		if want := "Invalid Schedule Expression " + s + "."; err.Error() != want {
			t.Errorf("ParseAt(%q): message %q, want %q", s, err.Error(), want)
		}
		if pe.Detail() == "" || pe.Reason == "" {
			t.Errorf("ParseAt(%q): no detail", s)
		}
	}
}

func TestErrorDetail(t *testing.T) {
	_, err := Parse("cron(0 0 ? * 8 *)", "")
	var pe *Error
	if !errors.As(err, &pe) || pe.Field != "Day-of-week" || pe.Value != "8" {
		t.Fatalf("got %#v", err)
	}
	if d := pe.Detail(); !strings.Contains(d, "Day-of-week") || !strings.Contains(d, "\"8\"") {
		t.Errorf("Detail() = %q", d)
	}
	_, err = Parse("rate(5 minute)", "")
	if !errors.As(err, &pe) || pe.Field != "rate unit" {
		t.Errorf("got %#v", err)
	}
}

func TestValid(t *testing.T) {
	valid := []string{
		"cron(0-15/1 8-8 ? * 2,3,4,5,6,7 *)", "cron(30-30 13-13 ? * 2,4,6 *)", "cron(1-31/30 1-1 ? * 1,7 *)",
		"cron(0 0 ? * SUN-SAT *)", "cron(0 0 ? * sun *)", "cron(0 0 l * ? *)", "cron(0 0 lw * ? *)",
		"cron(0 0 15w * ? *)", "cron(0 0 ? * 6l *)", "cron(0 0 * * ? 1970-2199)", "cron(0 0 * * ? */10)",
		"cron(59 23 31 DEC ? 2199)", "cron(0 0 1 1-12/2 ? *)", "cron(0 0 1/7 * ? *)", "cron(0 0 ? * 7#5 *)",
		"rate(1 minute)", "rate(1 minutes)", "rate(1 hour)", "rate(1 hours)", "rate(1 day)", "rate(1 days)",
		"rate(15 minutes)", "rate(  2   hours )", "rate(365 days)", "rate(01 minute)",
		"at(2022-11-20T13:00:00)", "at(1969-12-31T23:59:59)", "at(2199-12-31T23:59:59)",
	}
	for _, s := range valid {
		if _, err := ParseAt(s, "", time.Unix(0, 0)); err != nil {
			t.Errorf("ParseAt(%q): %v", s, err)
		}
	}
	e := mustParse(t, "cron(0 0 ? * 2#1 *)", "Asia/Tokyo").(*Cron)
	if e.Kind() != KindCron || e.String() != "cron(0 0 ? * 2#1 *)" || e.Location().String() != "Asia/Tokyo" {
		t.Errorf("Cron accessors: %v %v %v", e.Kind(), e.String(), e.Location())
	}
}

func TestTimezone(t *testing.T) {
	for _, tz := range []string{"Mars/Olympus_Mons", "Local", " UTC", "UTC ", "../etc/passwd", "+09:00"} {
		_, err := Parse("cron(0 0 * * ? *)", tz)
		var te *TimezoneError
		if !errors.As(err, &te) || !errors.Is(err, ErrInvalidTimezone) || te.Timezone != tz {
			t.Errorf("timezone %q: got %v", tz, err)
		}
	}
	for _, tz := range []string{"", "UTC", "Etc/UTC", "Asia/Tokyo", "America/New_York", "Europe/London", "Australia/Lord_Howe"} {
		if _, err := Parse("cron(0 0 * * ? *)", tz); err != nil {
			t.Errorf("timezone %q: %v", tz, err)
		}
	}
	loc, _ := LoadTimezone("")
	if loc != time.UTC {
		t.Errorf("default zone %v, want UTC", loc)
	}
}

func TestSlots(t *testing.T) {
	e := mustParse(t, "cron(0 * * * ? *)", "")
	from, to := mustTime(t, "2024-01-01T00:00:00Z"), mustTime(t, "2024-01-01T03:00:00Z")
	got := Slots(e, from, to, 10)
	want := []string{"2024-01-01T01:00:00Z", "2024-01-01T02:00:00Z", "2024-01-01T03:00:00Z"}
	if len(got) != len(want) {
		t.Fatalf("Slots: got %v", got)
	}
	for i := range want {
		if !got[i].Equal(mustTime(t, want[i])) {
			t.Errorf("Slots[%d] = %s, want %s", i, got[i], want[i])
		}
	}
	if got := Slots(e, from, to, 2); len(got) != 2 {
		t.Errorf("Slots max 2: %v", got)
	}
	if got := Slots(e, from, to, 0); len(got) != 0 {
		t.Errorf("Slots max 0: %v", got)
	}
	if got := Slots(e, to, from, 10); len(got) != 0 {
		t.Errorf("Slots reversed window: %v", got)
	}
	if got := Slots(mustParse(t, "at(2024-01-01T02:00:00)", ""), from, to, 10); len(got) != 1 {
		t.Errorf("Slots at(): %v", got)
	}
}

func TestBounded(t *testing.T) {
	e := mustParse(t, "cron(0 12 * * ? *)", "")
	start, end := mustTime(t, "2024-01-02T12:00:00Z"), mustTime(t, "2024-01-04T12:00:00Z")
	b := Bounded(e, &start, &end)
	got := Slots(b, mustTime(t, "2024-01-01T00:00:00Z"), mustTime(t, "2024-02-01T00:00:00Z"), 100)
	want := []string{"2024-01-02T12:00:00Z", "2024-01-03T12:00:00Z"} // start inclusive, end exclusive
	if len(got) != len(want) {
		t.Fatalf("Bounded: got %v", got)
	}
	for i := range want {
		if !got[i].Equal(mustTime(t, want[i])) {
			t.Errorf("Bounded[%d] = %s, want %s", i, got[i], want[i])
		}
	}
	if _, ok := b.Next(end); ok {
		t.Errorf("Next at end: want none")
	}
	onlyStart := Bounded(e, &start, nil)
	if got, _ := onlyStart.Next(time.Time{}); !got.Equal(start) {
		t.Errorf("start only: %s", got)
	}
	onlyEnd := Bounded(e, nil, &end)
	if got, _ := onlyEnd.Next(mustTime(t, "2024-01-01T00:00:00Z")); !got.Equal(mustTime(t, "2024-01-01T12:00:00Z")) {
		t.Errorf("end only: %s", got)
	}
	if Bounded(e, nil, nil) != e {
		t.Errorf("Bounded without bounds should return e")
	}
	// at(): StartDate and EndDate are ignored.
	a := mustParse(t, "at(2030-01-01T00:00:00)", "")
	if Bounded(a, &start, &end) != a {
		t.Errorf("Bounded(at) should return the at() unchanged")
	}
	// Mutating the caller's bounds afterwards has no effect.
	s2 := start
	b2 := Bounded(e, &s2, nil)
	s2 = s2.AddDate(1, 0, 0)
	if got, _ := b2.Next(time.Time{}); !got.Equal(start) {
		t.Errorf("bounds were not copied: %s", got)
	}
}

func TestForSchedule(t *testing.T) {
	created := mustTime(t, "2024-01-01T08:03:27Z")
	start := mustTime(t, "2024-01-01T09:30:00Z")
	end := mustTime(t, "2024-01-01T12:00:00Z")
	// Anchored at StartDate.
	e, err := ForSchedule("rate(1 hour)", "", &start, &end, created)
	if err != nil {
		t.Fatal(err)
	}
	got := Slots(e, time.Time{}, mustTime(t, "2025-01-01T00:00:00Z"), 10)
	want := []string{"2024-01-01T09:30:00Z", "2024-01-01T10:30:00Z", "2024-01-01T11:30:00Z"}
	if len(got) != len(want) {
		t.Fatalf("ForSchedule: got %v", got)
	}
	for i := range want {
		if !got[i].Equal(mustTime(t, want[i])) {
			t.Errorf("ForSchedule[%d] = %s, want %s", i, got[i], want[i])
		}
	}
	// No StartDate: anchored at creation, truncated to the minute.
	e, _ = ForSchedule("rate(10 minutes)", "", nil, nil, created)
	if got, _ := e.Next(created); !got.Equal(mustTime(t, "2024-01-01T08:13:00Z")) {
		t.Errorf("ForSchedule without StartDate: %s", got)
	}
	if _, err := ForSchedule("rate(10 minute)", "", nil, nil, created); err == nil {
		t.Errorf("ForSchedule: invalid expression accepted")
	}
}
