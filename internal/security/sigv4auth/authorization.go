package sigv4auth

import (
	"strings"
)

// Algorithm is the only signing algorithm verified.
const Algorithm = "AWS4-HMAC-SHA256"

// Terminator ends every credential scope.
const Terminator = "aws4_request"

// Authorization is a parsed SigV4 Authorization header:
//
//	AWS4-HMAC-SHA256 Credential=AKID/20260102/us-east-1/states/aws4_request,
//	  SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=6f1c…
type Authorization struct {
	// Algorithm is the word before the parameters.
	Algorithm string
	// Credential is the Credential parameter as sent.
	Credential string
	// SignedHeaders is the SignedHeaders parameter as sent, and its names.
	SignedHeaders string
	Headers       []string
	// Signature is the hex signature as sent.
	Signature string
}

// params are the parameters of an Authorization header, in the order AWS
// names the missing ones.
var params = []string{"Credential", "Signature", "SignedHeaders"}

// ParseAuthorization parses an Authorization header. A header without one
// of the three parameters is an *Error with Reason Incomplete that names
// them.
func ParseAuthorization(h string) (*Authorization, error) {
	h = strings.TrimSpace(h)
	alg, rest, _ := strings.Cut(h, " ")
	a := &Authorization{Algorithm: alg}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(rest, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, &Error{Reason: Incomplete, Detail: "'" + part + "' not a valid key=value pair (missing equal-sign) in Authorization header: '" + h + "'."}
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "Credential":
			a.Credential = v
		case "SignedHeaders":
			a.SignedHeaders = v
		case "Signature":
			a.Signature = v
		default:
			continue // unknown parameters are ignored
		}
		if seen[k] {
			return nil, &Error{Reason: Incomplete, Detail: "Authorization header has the '" + k + "' parameter twice: '" + h + "'."}
		}
		seen[k] = true
	}
	var missing strings.Builder
	for _, p := range params {
		if !seen[p] || (p != "SignedHeaders" && paramValue(a, p) == "") {
			missing.WriteString("Authorization header requires '" + p + "' parameter. ")
		}
	}
	if missing.Len() > 0 {
		return nil, &Error{Reason: Incomplete, Detail: missing.String() + "Authorization=" + h}
	}
	if a.SignedHeaders != "" {
		a.Headers = strings.Split(a.SignedHeaders, ";")
	}
	return a, nil
}

func paramValue(a *Authorization, name string) string {
	switch name {
	case "Credential":
		return a.Credential
	case "Signature":
		return a.Signature
	}
	return a.SignedHeaders
}

// String writes the header back, as the AWS SDKs write it.
func (a *Authorization) String() string {
	return a.Algorithm + " Credential=" + a.Credential + ", SignedHeaders=" + a.SignedHeaders + ", Signature=" + a.Signature
}

// Scope is a credential: the access key id and the scope it signs for.
type Scope struct {
	AccessKeyID, Date, Region, Service, Terminator string
}

// ParseCredential splits a Credential parameter into its five parts,
// keyid/date/region/service/aws4_request (trailing slashes ignored).
func ParseCredential(c string) (Scope, error) {
	parts := strings.Split(strings.TrimRight(c, "/"), "/")
	if len(parts) != 5 {
		return Scope{}, &Error{Reason: Incomplete, Detail: "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '" + c + "'"}
	}
	return Scope{AccessKeyID: parts[0], Date: parts[1], Region: parts[2], Service: parts[3], Terminator: parts[4]}, nil
}
