// Package sfnapi names the Step Functions API's vocabulary that every
// layer shares: its 37 operations and its errors (an AWS error code and a
// message, which the transport turns into the wire's error shape). It
// imports only the standard library.
package sfnapi
