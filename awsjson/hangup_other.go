//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package awsjson

import "syscall"

// hungUp cannot look at the connection here: the request's context alone
// says when the client hung up.
func hungUp(syscall.RawConn) bool { return false }
