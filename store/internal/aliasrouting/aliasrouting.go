// Package aliasrouting is the layout of an alias's routing that the store
// drivers share: a JSON array of {"version": n, "weight": w}, in the
// alias's order.
package aliasrouting

import (
	"encoding/json"
	"fmt"

	"stepwise/store"
)

// route is one element of the array. The names are the column's, fixed
// whatever store.AliasRoute becomes.
type route struct {
	Version int64 `json:"version"`
	Weight  int   `json:"weight"`
}

// Encode is the routing's text: "[]" for none.
func Encode(routes []store.AliasRoute) string {
	rs := make([]route, len(routes))
	for i, r := range routes {
		rs[i] = route{Version: r.Version, Weight: r.Weight}
	}
	b, err := json.Marshal(rs)
	if err != nil { // two integers always marshal
		panic(err)
	}
	return string(b)
}

// Decode reads Encode's text back; none is nil.
func Decode(text string) ([]store.AliasRoute, error) {
	var rs []route
	if err := json.Unmarshal([]byte(text), &rs); err != nil {
		return nil, fmt.Errorf("alias routing %q: %w", text, err)
	}
	if len(rs) == 0 {
		return nil, nil
	}
	routes := make([]store.AliasRoute, len(rs))
	for i, r := range rs {
		routes[i] = store.AliasRoute{Version: r.Version, Weight: r.Weight}
	}
	return routes, nil
}

// Named is an alias's name and its stored routing text.
type Named struct {
	Name    string
	Routing string
}

// InUse returns VersionDelete's refusal when one of aliases (in name
// order) routes to version n, or nil.
func InUse(aliases []Named, n int64) error {
	var names []string
	for _, a := range aliases {
		routes, err := Decode(a.Routing)
		if err != nil {
			return err
		}
		for _, r := range routes {
			if r.Version == n {
				names = append(names, a.Name)
				break
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	return &store.VersionInUseError{Aliases: names}
}

// Missing returns AliasInsert's and AliasUpdate's refusal of the first
// version routes name that exists reports missing, or nil.
func Missing(routes []store.AliasRoute, exists func(n int64) (bool, error)) error {
	for _, r := range routes {
		ok, err := exists(r.Version)
		if err != nil {
			return err
		}
		if !ok {
			return &store.VersionMissingError{Number: r.Version}
		}
	}
	return nil
}
