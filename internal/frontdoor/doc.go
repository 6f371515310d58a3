// Package frontdoor is what every request to one of the server's AWS APIs
// passes through before and after its operation, written once for the
// Step Functions API (AWS JSON 1.0, package awsjson) and the EventBridge
// Scheduler API (REST-JSON, package scheduler/restjson):
//
//	request ──► Door.Serve: x-amzn-RequestId on the answer, the id in ctx
//	            │
//	            ├─ Door.ReadBody: at most Door.Limit bytes, or the API's
//	            │  TooLarge error, unread past the limit
//	            ├─ the API's routing and its operation
//	            │    ├─ an answer ──► WriteJSON
//	            │    ├─ an error  ──► Door.Fail ──► the API's Shape
//	            │    └─ a panic   ──► logged with its stack; a 500 in the
//	            │                     API's Shape (Door.Internal)
//	            └─ (before the API: Door.Refuse, same shape, same id)
//
// # Error shapes
//
// A Failure (status, code, message) is written in one of two shapes:
//
//	JSON10    AWS JSON 1.0   {"__type": "<prefix>#<code>", "message": "..."}
//	RESTJSON  REST-JSON      x-amzn-ErrorType: <code>   {"Message": "..."}
//
// Each API tells the door, once, which of its errors are its own and how
// they read (Door.Answer); any other error is an internal failure: logged
// with the request id, and answered with only that id.
//
// # Page tokens
//
// A list's NextToken is PageToken(kind, scope, position): opaque to the
// client (base64 of a small JSON), it names the list it was given for
// (kind) and what was listed (scope: the resource and the filters), and
// ReadPageToken refuses it for any other list or scope, so that a token
// never pages a list it was not made for. Each API words the refusal as
// AWS does (InvalidToken, ValidationException).
package frontdoor
