package sigv4auth_test

import (
	"errors"
	"strings"
	"testing"

	"stepwise/internal/security/sigv4auth"
)

// FuzzParseAuthorization: the parser of Authorization headers never
// panics, refuses only with an Incomplete *Error, and what it accepts
// writes back to a header it parses the same way.
func FuzzParseAuthorization(f *testing.F) {
	for _, seed := range []string{
		"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260102/us-east-1/states/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=17d63a24ed9945431e28bcb48690952d759d33d7be5fc93a3cec576352b9d77a",
		"AWS4-HMAC-SHA256 Credential=a/b/c/d/e,SignedHeaders=host,Signature=00",
		"AWS4-HMAC-SHA256 Signature=x, Credential=y",
		"AWS4-HMAC-SHA256 Credential, SignedHeaders=, Signature=",
		"AWS4-HMAC-SHA256 Credential=a=b, Credential=c",
		"AWS4-HMAC-SHA256",
		"Bearer abc",
		"",
		" , ,= ,",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, h string) {
		a, err := sigv4auth.ParseAuthorization(h)
		if err != nil {
			var e *sigv4auth.Error
			if !errors.As(err, &e) || e.Reason != sigv4auth.Incomplete || e.Detail == "" {
				t.Fatalf("ParseAuthorization(%q): error %v", h, err)
			}
			return
		}
		if a.Credential == "" || a.Signature == "" {
			t.Fatalf("ParseAuthorization(%q) = %+v: a required parameter is empty", h, a)
		}
		if a.SignedHeaders != strings.Join(a.Headers, ";") {
			t.Fatalf("ParseAuthorization(%q): headers %q of %q", h, a.Headers, a.SignedHeaders)
		}
		if strings.ContainsAny(a.Credential+a.SignedHeaders+a.Signature, ",") || strings.ContainsAny(a.Algorithm, " ") {
			return // such values do not survive being written back
		}
		b, err := sigv4auth.ParseAuthorization(a.String())
		if err != nil {
			t.Fatalf("ParseAuthorization(%q) = %+v, whose String %q does not parse: %v", h, a, a.String(), err)
		}
		if b.Algorithm != a.Algorithm || b.Credential != a.Credential || b.SignedHeaders != a.SignedHeaders || b.Signature != a.Signature {
			t.Fatalf("round trip of %q: %+v != %+v", h, b, a)
		}
		if _, err := sigv4auth.ParseCredential(a.Credential); err != nil {
			var e *sigv4auth.Error
			if !errors.As(err, &e) || e.Reason != sigv4auth.Incomplete {
				t.Fatalf("ParseCredential(%q): %v", a.Credential, err)
			}
		}
	})
}
