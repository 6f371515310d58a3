package awsarn

import (
	"errors"
	"testing"
)

func TestBuildAndParse(t *testing.T) {
	t.Parallel()
	p := Prefix{Partition: "aws-cn", Region: "cn-north-1", Account: "123456789012"}
	for _, c := range []struct {
		arn, resource string
		parts         int
	}{
		{p.StateMachine("sm"), StateMachine, 1},
		{p.StateMachine("sm") + ":3", StateMachine, 2},
		{p.Execution("sm", "x"), Execution, 2},
		{p.Express("sm", "x", "id"), Express, 3},
		{p.Activity("a"), Activity, 1},
		{p.MapRun("sm", "Map", "id"), MapRun, 2},
		{p.MapRunChild("sm", "Map", "c"), Execution, 2},
	} {
		a, err := Parse(c.arn)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.arn, err)
		}
		if a.Prefix != p || a.Resource != c.resource || len(a.Parts) != c.parts || a.Text != c.arn {
			t.Errorf("Parse(%q) = %+v, want prefix %v, resource %s, %d parts", c.arn, a, p, c.resource, c.parts)
		}
	}
	if got := (Prefix{Region: "r", Account: "1"}).StateMachine("m"); got != "arn:aws:states:r:1:stateMachine:m" {
		t.Errorf("an empty partition is aws: got %s", got)
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]error{
		"":                                   ErrPrefix,
		"stateMachine:x":                     ErrPrefix,
		"arn:aws:states:r:1:stateMachine":    ErrInvalid,
		"arn:aws:lambda:r:1:function:f":      ErrInvalid,
		"arn::states:r:1:stateMachine:m":     ErrInvalid,
		"arn:aws:states::1:stateMachine:m":   ErrInvalid,
		"arn:aws:states:r:1:stateMachine:m:": ErrInvalid,
		"arn:aws:states:r:1:execution:m::x":  ErrInvalid,
		"arn:aws:states:r:1::m":              ErrInvalid,
	} {
		if _, err := Parse(s); !errors.Is(err, want) {
			t.Errorf("Parse(%q) = %v, want %v", s, err, want)
		}
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	for arn, want := range map[string]string{
		"arn:aws:states:r:1:stateMachine:m":      "m",
		"arn:aws:states:r:1:stateMachine:m:prod": "m",
		"arn:aws:states:r:1:execution:m:x":       "m",
		"arn:aws:states:r:1:express:m:x:id":      "m",
		"arn:aws:states:r:1:mapRun:m/Map:id":     "m/Map",
		"not-an-arn":                             "not-an-arn",
	} {
		if got := StateMachineName(arn); got != want {
			t.Errorf("StateMachineName(%q) = %q, want %q", arn, got, want)
		}
	}
	if got := Unqualified("arn:aws:states:r:1:stateMachine:m:7"); got != "arn:aws:states:r:1:stateMachine:m" {
		t.Errorf("Unqualified: got %s", got)
	}
	if got := Unqualified("arn:aws:states:r:1:stateMachine:m"); got != "arn:aws:states:r:1:stateMachine:m" {
		t.Errorf("Unqualified of an unqualified ARN: got %s", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("arn:aws:states:us-east-1:123456789012:stateMachine:m:1")
	f.Add("arn:aws:states:r:1:express:m:x:id")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if err != nil {
			return
		}
		if a.Text != s || len(a.Parts) == 0 {
			t.Fatalf("Parse(%q) = %+v", s, a)
		}
		for _, p := range a.Parts {
			if p == "" {
				t.Fatalf("Parse(%q) kept an empty part", s)
			}
		}
		// What parses is rebuilt from its parts.
		rebuilt := a.Prefix.String() + a.Resource
		for _, p := range a.Parts {
			rebuilt += ":" + p
		}
		if rebuilt != s {
			t.Fatalf("Parse(%q) rebuilds %q", s, rebuilt)
		}
	})
}

func TestDerivedID(t *testing.T) {
	t.Parallel()
	a, b := DerivedID([]byte("run\x001")), DerivedID([]byte("run\x002"))
	if a != DerivedID([]byte("run\x001")) {
		t.Fatal("the same key must give the same id")
	}
	if a == b {
		t.Fatal("two keys gave one id")
	}
	if len(a) != 36 || a[8] != '-' || a[13] != '-' || a[18] != '-' || a[23] != '-' {
		t.Fatalf("not in a UUID's form: %s", a)
	}
	// sha256("abc") begins ba7816bf8f01cfea414140de5dae2223.
	if got := DerivedID([]byte("abc")); got != "ba7816bf-8f01-cfea-4141-40de5dae2223" {
		t.Fatalf("DerivedID(abc) = %s", got)
	}
}
