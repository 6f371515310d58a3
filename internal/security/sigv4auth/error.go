package sigv4auth

import (
	"time"
)

// Reason says why a request was not verified.
type Reason int

// Reasons a request is refused, in the order they are checked.
const (
	// Missing: the request has no Authorization header of SigV4.
	Missing Reason = iota + 1
	// Incomplete: the header or the date is malformed; Detail says how.
	Incomplete
	// Expired: X-Amz-Date is more than MaxSkew before Now.
	Expired
	// NotYetCurrent: X-Amz-Date is more than MaxSkew after Now.
	NotYetCurrent
	// HostNotSigned: SignedHeaders does not name host.
	HostNotSigned
	// BadScope: the credential scope is not for this service, or its
	// date is not X-Amz-Date's; Detail says how.
	BadScope
	// UnknownKey: no credentials hold the access key id.
	UnknownKey
	// Mismatch: the signature is not the one the secret gives.
	Mismatch
)

// Error is a request that failed verification.
type Error struct {
	Reason Reason
	// Detail describes a malformed header (Incomplete) or scope
	// (BadScope), in AWS's words.
	Detail string
	// SignedAt, Now and MaxSkew are the times compared (Expired,
	// NotYetCurrent).
	SignedAt, Now time.Time
	MaxSkew       time.Duration
	// AccessKeyID is the key the request named (UnknownKey, Mismatch).
	AccessKeyID string
	// CanonicalRequest and StringToSign are what the server signed
	// (Mismatch), for the client to compare with its own.
	CanonicalRequest, StringToSign string
}

func (e *Error) Error() string {
	switch e.Reason {
	case Missing:
		return "sigv4: the request is not signed"
	case Incomplete, BadScope:
		return "sigv4: " + e.Detail
	case Expired:
		return "sigv4: signed at " + e.SignedAt.Format(TimeFormat) + ", more than " + e.MaxSkew.String() + " before " + e.Now.Format(TimeFormat)
	case NotYetCurrent:
		return "sigv4: signed at " + e.SignedAt.Format(TimeFormat) + ", more than " + e.MaxSkew.String() + " after " + e.Now.Format(TimeFormat)
	case HostNotSigned:
		return "sigv4: host is not a signed header"
	case UnknownKey:
		return "sigv4: unknown access key " + e.AccessKeyID
	case Mismatch:
		return "sigv4: signature mismatch for access key " + e.AccessKeyID
	}
	return "sigv4: request refused"
}

// TimeFormat is X-Amz-Date's format (ISO 8601 basic, UTC).
const TimeFormat = "20060102T150405Z"
