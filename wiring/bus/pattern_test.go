package bus

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const docEvent = `{
  "version": "0", "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718", "detail-type": "EC2 Instance State-change Notification",
  "source": "aws.ec2", "account": "111122223333", "time": "2017-12-22T18:43:48Z", "region": "us-west-1",
  "resources": ["arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0"],
  "detail": {"instance-id": "i-1234567890abcdef0", "state": "terminated", "c-count": 5, "d-count": 3, "x-limit": 301.8,
    "source-ip": "10.0.0.123", "location": "eu-west-1", "filename": "invoice.png", "tags": ["a", "b"],
    "nested": {"deep": {"flag": true}}, "nothing": null, "items": [{"kind": "x", "n": 1}, {"kind": "y", "n": 2}]}
}`

func TestPatternMatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pattern string
		match   bool
	}{
		{`{"source": ["aws.ec2"]}`, true},
		{`{"source": ["aws.s3"]}`, false},
		{`{"source": ["aws.s3", "aws.ec2"]}`, true},
		{`{"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]}`, true},
		{`{"source": ["aws.ec2"], "detail-type": ["other"]}`, false},
		{`{"detail": {"state": ["terminated"]}}`, true},
		{`{"detail": {"state": ["running"]}}`, false},
		{`{"detail": {"nested": {"deep": {"flag": [true]}}}}`, true},
		{`{"detail": {"nested": {"deep": {"flag": [false]}}}}`, false},
		{`{"detail": {"nothing": [null]}}`, true},
		{`{"detail": {"state": [null]}}`, false},
		{`{"detail": {"c-count": [5]}}`, true},
		{`{"detail": {"c-count": [5.0]}}`, true},
		{`{"detail": {"c-count": ["5"]}}`, false},
		{`{"detail": {"tags": ["b"]}}`, true},
		{`{"detail": {"tags": ["c"]}}`, false},
		{`{"resources": ["arn:aws:ec2:us-west-1:123456789012:instance/i-1234567890abcdef0"]}`, true},
		{`{"time": [{"prefix": "2017-12-22"}]}`, true},
		{`{"time": [{"prefix": "2018"}]}`, false},
		{`{"detail": {"location": [{"prefix": {"equals-ignore-case": "EU-"}}]}}`, true},
		{`{"detail": {"filename": [{"suffix": ".png"}]}}`, true},
		{`{"detail": {"filename": [{"suffix": ".jpg"}]}}`, false},
		{`{"detail": {"filename": [{"suffix": {"equals-ignore-case": ".PNG"}}]}}`, true},
		{`{"detail": {"state": [{"equals-ignore-case": "TERMINATED"}]}}`, true},
		{`{"detail": {"filename": [{"wildcard": "inv*.png"}]}}`, true},
		{`{"detail": {"filename": [{"wildcard": "*voice*"}]}}`, true},
		{`{"detail": {"filename": [{"wildcard": "inv*.jpg"}]}}`, false},
		{`{"detail": {"state": [{"anything-but": "initializing"}]}}`, true},
		{`{"detail": {"state": [{"anything-but": "terminated"}]}}`, false},
		{`{"detail": {"state": [{"anything-but": ["stopped", "terminated"]}]}}`, false},
		{`{"detail": {"c-count": [{"anything-but": [4, 6]}]}}`, true},
		{`{"detail": {"c-count": [{"anything-but": 5}]}}`, false},
		{`{"detail": {"state": [{"anything-but": {"prefix": "term"}}]}}`, false},
		{`{"detail": {"state": [{"anything-but": {"prefix": "init"}}]}}`, true},
		{`{"detail": {"filename": [{"anything-but": {"suffix": ".png"}}]}}`, false},
		{`{"detail": {"state": [{"anything-but": {"equals-ignore-case": ["STOPPED", "TERMINATED"]}}]}}`, false},
		{`{"detail": {"missing": [{"anything-but": "x"}]}}`, false},
		{`{"detail": {"c-count": [{"numeric": [">", 0, "<=", 5]}], "d-count": [{"numeric": ["<", 10]}], "x-limit": [{"numeric": ["=", 301.8]}]}}`, true},
		{`{"detail": {"c-count": [{"numeric": [">", 5]}]}}`, false},
		{`{"detail": {"c-count": [{"numeric": [">=", 5]}]}}`, true},
		{`{"detail": {"state": [{"numeric": [">", 0]}]}}`, false},
		{`{"detail": {"state": [{"exists": true}]}}`, true},
		{`{"detail": {"missing": [{"exists": false}]}}`, true},
		{`{"detail": {"state": [{"exists": false}]}}`, false},
		{`{"detail": {"missing": [{"exists": true}]}}`, false},
		{`{"detail": {"nested": [{"exists": true}]}}`, false},
		{`{"detail": {"source-ip": [{"cidr": "10.0.0.0/24"}]}}`, true},
		{`{"detail": {"source-ip": [{"cidr": "10.0.1.0/24"}]}}`, false},
		{`{"detail": {"$or": [{"c-count": [{"numeric": [">", 10]}]}, {"d-count": [3]}]}}`, true},
		{`{"detail": {"$or": [{"c-count": [{"numeric": [">", 10]}]}, {"d-count": [4]}]}}`, false},
		{`{"source": ["aws.ec2"], "$or": [{"detail-type": ["x"]}, {"detail": {"state": ["terminated"]}}]}`, true},
		{`{"detail": {"items": {"kind": ["y"], "n": [2]}}}`, true},
		{`{"detail": {"items": {"kind": ["z"]}}}`, false},
		{`{"nope": {"deeper": [{"exists": false}]}}`, true},
		{`{"detail": {"state": ["terminated", {"prefix": "zzz"}]}}`, true},
	}
	for _, c := range cases {
		p, err := ParsePattern(c.pattern)
		require.NoError(t, err, c.pattern)
		require.Equal(t, c.match, p.Match([]byte(docEvent)), c.pattern)
	}
}

func TestPatternRefused(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`[]`:                                               "Filter is not an object",
		`{"source": "aws.ec2"}`:                            `"source" must be an object or an array`,
		`{"source": []}`:                                   "Empty arrays are not allowed",
		`{}`:                                               "Empty objects are not allowed",
		`{"detail": {}}`:                                   "Empty objects are not allowed",
		`{"source": [["a"]]}`:                              "Match value must be String, number, true, false, or null",
		`{"source": [{"prefix": 1}]}`:                      "prefix match pattern must be a string",
		`{"source": [{"prefix": "a", "x": 1}]}`:            "Only one key allowed in match expression",
		`{"source": [{"bogus": "a"}]}`:                     "Unrecognized match type bogus",
		`{"source": [{"exists": "yes"}]}`:                  "exists match pattern must be either true or false",
		`{"n": [{"numeric": [">", "a"]}]}`:                 "Value of > must be numeric",
		`{"n": [{"numeric": ["!", 1]}]}`:                   "Unrecognized numeric range operator: !",
		`{"n": [{"numeric": [">", 5, "<", 1]}]}`:           "Bottom must be less than top",
		`{"n": [{"numeric": [">", 5, ">", 1]}]}`:           "Invalid member in numeric match",
		`{"ip": [{"cidr": "10.0.0.300/24"}]}`:              "Nonstandard IP address",
		`{"s": [{"anything-but": [true]}]}`:                "Inside anything but list",
		`{"s": [{"anything-but": {"numeric": [">", 1]}}]}`: "Unsupported anything-but pattern: numeric",
		`{"s": [{"wildcard": "a**b"}]}`:                    "Consecutive wildcard characters",
		`{"$or": [{"a": ["b"]}]}`:                          `"$or" must have at least 2 alternatives`,
		`{"$or": {"a": ["b"]}}`:                            `"$or" must be an array of objects`,
		`{"source": ["a"]`:                                 "Filter is not valid JSON",
	}
	for pattern, want := range cases {
		_, err := ParsePattern(pattern)
		require.Error(t, err, pattern)
		var pe *PatternError
		require.ErrorAs(t, err, &pe)
		require.Contains(t, err.Error(), "Event pattern is not valid. Reason: ")
		require.Contains(t, err.Error(), want, pattern)
	}
}

// FuzzParsePattern: any text is parsed without panicking; a pattern
// taken matches any event without panicking and the same way twice.
func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{`{"source": ["aws.ec2"]}`, `{"detail": {"n": [{"numeric": [">", 0, "<=", 5]}]}}`,
		`{"$or": [{"a": [{"prefix": "x"}]}, {"b": [{"anything-but": {"suffix": "y"}}]}]}`, `{"ip": [{"cidr": "10.0.0.0/8"}]}`,
		`{"w": [{"wildcard": "a*b\\*c"}], "e": [{"exists": false}]}`, `{"s": [{"equals-ignore-case": "X"}, null, true, 1.5]}`} {
		f.Add(s, docEvent)
	}
	f.Fuzz(func(t *testing.T, pattern, event string) {
		p, err := ParsePattern(pattern)
		if err != nil {
			var pe *PatternError
			require.ErrorAs(t, err, &pe)
			return
		}
		require.Equal(t, p.Match([]byte(event)), p.Match([]byte(event)))
		p.Match([]byte(docEvent))
	})
}
