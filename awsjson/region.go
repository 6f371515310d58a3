package awsjson

import (
	"net/http"
	"regexp"

	"stepwise/internal/security/sigv4auth"
	"stepwise/sfnapi"
)

// A client configured for another region than the server's gets AWS's
// answer, with a hint naming the server's region: a request signed for
// another region is refused as a regional endpoint of AWS refuses it
// (InvalidSignatureException), and a "does not exist" for an ARN of
// another region says that the server hands out ARNs of its own region.

// regionHint is the hint added to an error for a client of region.
func regionHint(server, client string) string {
	return " (Stepwise: this server serves " + server + ", the request is for " + client +
		": set the client's region to " + server + ", or start the server with `stepwise serve --region " + client + "`)"
}

// signedRegion refuses a request signed for another region than server:
// nil when it is not signed, or signed for server.
func signedRegion(r *http.Request, server string) error {
	h := r.Header.Get("Authorization")
	if h == "" || server == "" {
		return nil
	}
	a, err := sigv4auth.ParseAuthorization(h)
	if err != nil || a == nil {
		return nil // worded by the authenticator, when there is one
	}
	scope, err := sigv4auth.ParseCredential(a.Credential)
	if err != nil || scope.Region == "" || scope.Region == server {
		return nil
	}
	return sfnapi.NewError(sfnapi.CodeInvalidSignature, "Credential should be scoped to a valid region. %s", regionHint(server, scope.Region)[1:])
}

// missingCodes are the errors of a resource that does not exist.
var missingCodes = map[string]bool{sfnapi.CodeStateMachineDoesNotExist: true, sfnapi.CodeExecutionDoesNotExist: true,
	sfnapi.CodeActivityDoesNotExist: true, sfnapi.CodeResourceNotFound: true}

var arnRegion = regexp.MustCompile(`arn:[a-z-]+:states:([a-z0-9-]+):`)

// hintRegion adds the hint to a "does not exist" whose ARN names another
// region than server; the error's code stays.
func hintRegion(err error, server string) error {
	e, ok := err.(*sfnapi.Error)
	if server == "" || !ok || !missingCodes[e.Code] {
		return err
	}
	m := arnRegion.FindStringSubmatch(e.Message)
	if m == nil || m[1] == server {
		return err
	}
	hinted := *e
	hinted.Message += regionHint(server, m[1])
	return &hinted
}
