// Package sigv4auth verifies requests signed with AWS Signature Version 4,
// as AWS checks the requests of its JSON-protocol services, against the
// access keys of a shared-credentials file.
//
// # Verifying a request
//
// The server does not write its own canonical request: it rebuilds the
// request the client signed (the method, path and query, exactly the
// headers named in SignedHeaders, the SHA-256 of the body as received,
// the X-Amz-Date time, the region and service of the credential scope)
// and signs it with the AWS SDK for Go's signer and the secret of the
// access key; the signatures are compared in constant time.
//
//	Authorization ──► parse ──► X-Amz-Date within MaxSkew? ──► host signed?
//	     │               │               │                          │
//	   absent        malformed      expired / not yet           no: refused
//	 (ErrMissing)  (Incomplete)      (Expired, NotYetCurrent)
//	                                                                │
//	  ──► scope is <date>/<region>/<service>/aws4_request ──► key known?
//	              │                                              │
//	           BadScope                                     UnknownKey
//	  ──► rebuild, sign with the SDK, compare ──► the access key id
//	                                     │
//	                                  Mismatch (with the canonical request
//	                                  and string to sign the server used)
//
// The SDK's signer always signs host and x-amz-date, signs content-length
// only for a non-empty body, and never signs the headers it ignores
// (user-agent, x-amzn-trace-id, expect, transfer-encoding): a client that
// signs differently (botocore, for one, does not sign content-length)
// is matched by giving the signer only the headers the client named,
// and content-length only when the client named it. A client that signed
// a header the SDK never signs cannot be verified this way, and is
// answered a mismatch. An X-Amz-Security-Token (a session token) is a
// signed header like any other: the access key decides, as the server
// has no token service to check it against.
//
// Errors are *Error values whose Reason says what was wrong; the API
// words them as AWS does (awsjson).
package sigv4auth
