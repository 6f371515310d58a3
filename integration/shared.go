package integration

import (
	"io"
	"sync"
)

// Shared values
//
// The modules of one registry may keep a value between tasks that they
// share with each other and that the server reaches through the registry
// (the local Lambda functions, which lambda:invoke and function ARNs both
// run, and which a deployment adds to while the server runs). The
// registry owns it: Close closes it.

// shared holds the values of one registry.
type shared struct {
	mu    sync.Mutex
	of    map[any]any
	order []any
}

// Shared returns the value the modules of this configuration's registry
// share under key, made by make the first time it is asked for (an error
// is not kept: the next call makes it again). A value with a Close method
// is closed by the registry's Close. A Config that was not given to New
// keeps nothing: make runs at every call.
func (c *Config) Shared(key any, make func() (any, error)) (any, error) {
	s := c.shared
	if s == nil {
		return make()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.of[key]; ok {
		return v, nil
	}
	v, err := make()
	if err != nil {
		return nil, err
	}
	if s.of == nil {
		s.of = map[any]any{}
	}
	s.of[key] = v
	s.order = append(s.order, key)
	return v, nil
}

// Shared returns the value the registry's modules keep under key (see
// Config.Shared), nil when none does.
func (r *Registry) Shared(key any) any {
	s := r.cfg.shared
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.of[key]
}

// Close closes what the registry's modules keep between tasks (it stops
// the processes of local Lambda functions), the last made first. It is
// called once the engine stopped: no task runs after it.
func (r *Registry) Close() {
	s := r.cfg.shared
	if s == nil {
		return
	}
	s.mu.Lock()
	values := make([]any, 0, len(s.order))
	for i := len(s.order) - 1; i >= 0; i-- {
		values = append(values, s.of[s.order[i]])
	}
	s.mu.Unlock()
	for _, v := range values {
		switch c := v.(type) {
		case interface{ Close() }:
			c.Close()
		case io.Closer:
			_ = c.Close()
		}
	}
}
