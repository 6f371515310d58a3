package sfnapi

import "strings"

// XRayTraceHeader writes a W3C traceparent (00-TRACEID-SPANID-FLAGS) as
// X-Ray's trace header (Root=1-…;Parent=…;Sampled=…), the form
// StartExecution's traceHeader and Lambda's X-Amzn-Trace-Id take; "" for
// anything else.
func XRayTraceHeader(traceparent string) string {
	p := strings.Split(traceparent, "-")
	if len(p) != 4 || len(p[1]) != 32 || len(p[2]) != 16 {
		return ""
	}
	sampled := "0"
	if p[3] == "01" {
		sampled = "1"
	}
	return "Root=1-" + p[1][:8] + "-" + p[1][8:] + ";Parent=" + p[2] + ";Sampled=" + sampled
}
