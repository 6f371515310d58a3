package warnrule_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/internal/warnrule"
	"stepwise/jsonvalue"
)

func TestParseAndJudge(t *testing.T) {
	t.Parallel()
	type judged struct {
		result string
		warn   bool
		rc     int64 // -1: none
	}
	for _, tc := range []struct {
		rule   string
		err    string
		judged []judged
	}{
		{rule: "rc:1-8", judged: []judged{
			{`{"rc":0}`, false, 0}, {`{"rc":1}`, true, 1}, {`{"rc":8}`, true, 8}, {`{"rc":9}`, false, 9},
			{`{"Payload":{"rc":4}}`, true, 4}, {`{"rc":4,"Payload":{"rc":0}}`, true, 4},
			{`{"rc":"4"}`, false, -1}, {`{"rc":4.5}`, false, -1}, {`{"rc":4.0}`, true, 4},
			{`{}`, false, -1}, {`[1]`, false, -1}, {`"x"`, false, -1}, {`null`, false, -1},
		}},
		{rule: "rc:3", judged: []judged{{`{"rc":3}`, true, 3}, {`{"rc":2}`, false, 2}}},
		{rule: "rc: 1-2 , 20", judged: []judged{{`{"rc":20}`, true, 20}, {`{"rc":3}`, false, 3}}},
		{rule: "rc:$.Payload.code:1-8", judged: []judged{
			{`{"Payload":{"code":5}}`, true, 5}, {`{"Payload":{"rc":5}}`, false, -1}, {`{"Payload":{"code":9}}`, false, 9},
		}},
		{rule: "rc:$.exitCode:1-8,100-200", judged: []judged{{`{"exitCode":150}`, true, 150}}},
		{rule: "jsonata:rc >= 1 and rc <= 8", judged: []judged{
			{`{"rc":5}`, true, 5}, {`{"rc":0}`, false, 0}, {`{}`, false, -1},
		}},
		{rule: `jsonata:$contains(stdout, "WARN")`, judged: []judged{{`{"stdout":"a WARN b"}`, true, -1}, {`{"stdout":"ok"}`, false, -1}}},
		{rule: "jsonata:rc", judged: []judged{{`{"rc":1}`, false, 1}}}, // not true: no warning
		{rule: "jsonata:$error('x')", judged: []judged{{`{}`, false, -1}}},
		{rule: "", err: "neither"},
		{rule: "rc", err: "neither"},
		{rule: "exit:1-8", err: "neither"},
		{rule: "rc:", err: "has no codes"},
		{rule: "rc:8-1", err: "ends before it starts"},
		{rule: "rc:-1", err: "is not a return code"},
		{rule: "rc:1-", err: `"" is not a return code`},
		{rule: "rc:a-b", err: `"a" is not a return code`},
		{rule: "rc:1,,2", err: `"" is not a return code`},
		{rule: "rc:+1", err: "is not a return code"},
		{rule: "rc:99999999999", err: "is not a return code"},
		{rule: "rc:$.Payload.code", err: "names a path but no codes"},
		{rule: "rc:$.a[*]:1", err: "must name one value"},
		{rule: "rc:$$.Task:1", err: "must name one value"},
		{rule: "rc:$.[:1", err: "the rule's path"},
		{rule: "jsonata:", err: "has no expression"},
		{rule: "jsonata:(", err: "the jsonata rule's expression"},
		{rule: "rc:" + strings.Repeat("1,", 200), err: "at most 256"},
	} {
		r, err := warnrule.Parse(tc.rule)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.rule)
			continue
		}
		require.NoError(t, err, tc.rule)
		require.Equal(t, tc.rule, r.String())
		for _, j := range tc.judged {
			v, err := jsonvalue.ParseString(j.result)
			require.NoError(t, err)
			got := r.Judge(v)
			require.Equal(t, j.warn, got.Warning, "%s on %s", tc.rule, j.result)
			if j.rc < 0 {
				require.False(t, got.HasRC, "%s on %s", tc.rule, j.result)
			} else {
				require.True(t, got.HasRC, "%s on %s", tc.rule, j.result)
				require.Equal(t, j.rc, got.RC, "%s on %s", tc.rule, j.result)
			}
		}
	}
}

func TestFromTags(t *testing.T) {
	t.Parallel()
	rs, err := warnrule.FromTags(map[string]string{
		"stepwise:warning/Job A": "rc:1-8", "stepwise:policy/X": "finish-running", "other": "x",
	})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, "rc:1-8", rs["Job A"].String())

	_, err = warnrule.FromTags(map[string]string{"stepwise:warning/": "rc:1"})
	require.ErrorContains(t, err, `the tag "stepwise:warning/" names no state`)
	_, err = warnrule.FromTags(map[string]string{"stepwise:warning/Job": "rc:x"})
	require.ErrorContains(t, err, `the tag "stepwise:warning/Job": the rule "rc:x": "x" is not a return code`)
	rs, err = warnrule.FromTags(nil)
	require.NoError(t, err)
	require.Nil(t, rs)
}

func TestEmbed(t *testing.T) {
	t.Parallel()
	rs, err := warnrule.FromTags(map[string]string{"stepwise:warning/A": "rc:1-8", "stepwise:warning/B": "jsonata:x = 1"})
	require.NoError(t, err)
	for _, policies := range []string{"", `{"P":["finish-running"]}`} {
		text, err := warnrule.Embed(policies, rs)
		require.NoError(t, err)
		back, err := warnrule.FromPolicies(text)
		require.NoError(t, err)
		require.Len(t, back, 2)
		require.Equal(t, "rc:1-8", back["A"].String())
		require.Equal(t, "jsonata:x = 1", back["B"].String())
		if policies != "" {
			require.Contains(t, text, `"P":["finish-running"]`)
		}
	}
	text, err := warnrule.Embed(`{"P":["finish-running"]}`, nil)
	require.NoError(t, err)
	require.Equal(t, `{"P":["finish-running"]}`, text)
	back, err := warnrule.FromPolicies(text)
	require.NoError(t, err)
	require.Nil(t, back)
	_, err = warnrule.FromPolicies(`{"":{"A":"rc:x"}}`)
	require.ErrorContains(t, err, `the warning rule of "A"`)
}

// FuzzParse: any text either parses to a rule that judges any result
// without panicking, and whose text is what was written, or is refused.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"rc:1-8", "rc:$.Payload.code:1-8,20", "jsonata:rc > 0", "rc:", "rc:$:1", "jsonata:$$", "rc:0-0,1-1"} {
		f.Add(s, `{"rc":3,"Payload":{"rc":5,"code":7}}`)
	}
	f.Fuzz(func(t *testing.T, rule, result string) {
		r, err := warnrule.Parse(rule)
		if err != nil {
			require.NotEmpty(t, err.Error())
			return
		}
		require.Equal(t, rule, r.String())
		v, err := jsonvalue.ParseString(result)
		if err != nil {
			return
		}
		j := r.Judge(v)
		if strings.HasPrefix(rule, "rc:") && j.Warning {
			require.True(t, j.HasRC)
		}
	})
}
