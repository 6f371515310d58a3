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
