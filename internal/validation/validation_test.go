package validation

import "testing"

func TestMessage(t *testing.T) {
	t.Parallel()
	var e Errors
	if m := e.Message(); m != "" {
		t.Fatalf("no violation is no message: got %q", m)
	}
	e.Add(Quote("1001"), "maxResults", "Member must have value less than or equal to 1000")
	if m, want := e.Message(), "1 validation error detected: Value '1001' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 1000"; m != want {
		t.Fatalf("one violation:\n got %s\nwant %s", m, want)
	}
	e.Add("null", "name", "Member must not be null")
	if m, want := e.Message(), "2 validation errors detected: Value '1001' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 1000; Value null at 'name' failed to satisfy constraint: Member must not be null"; m != want {
		t.Fatalf("two violations:\n got %s\nwant %s", m, want)
	}
}
