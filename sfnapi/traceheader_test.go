package sfnapi

import "testing"

func TestXRayTraceHeader(t *testing.T) {
	for in, want := range map[string]string{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01": "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736;Parent=00f067aa0ba902b7;Sampled=1",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00": "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736;Parent=00f067aa0ba902b7;Sampled=0",
		"":              "",
		"00-short-x-01": "",
	} {
		if got := XRayTraceHeader(in); got != want {
			t.Errorf("XRayTraceHeader(%q) = %q, want %q", in, got, want)
		}
	}
}
