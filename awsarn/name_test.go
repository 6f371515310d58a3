package awsarn

import "testing"

func TestValidName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"nightly-2026_11_27": true, "日次バッチ": true, "a\uFFFDb": true, // U+FFFD written out is text
		"a b": false, "a\tb": false, "a<b": false, "a/b": false, "a:b": false, "a$b": false,
		"a\u0085b": false, "a\x00b": false,
		"a\xed\xa0\x80": false, // an unpaired surrogate kept as sent
		"a\xffb":        false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}
