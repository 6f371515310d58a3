package lambda

// MaxUnzipped is the bound on a zip's extracted code, for tests.
var MaxUnzipped = &maxUnzipped

// CodeRoot is where zips are extracted, for tests.
var CodeRoot = &codeRoot

// SetEndpoints makes functions call these endpoints, for tests.
func (l *Local) SetEndpoints(endpoint string, endpoints map[string]string) {
	l.setEndpoints(endpoint, endpoints)
}
