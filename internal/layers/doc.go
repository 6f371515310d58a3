// Package layers holds no code: its test is the table of the module's
// layering. For every package of the module it lists the module packages
// that package may import (non-test imports), and the test fails on any
// other import, naming the importer, the imported package and the rule. The
// imports that go against the layers of docs/design/README.md are listed there as
// named exceptions, each with its reason, and the test fails too when one
// of them no longer happens, so the list stays the list of what is left to
// fix. The same test checks that no two top-level folders import each other
// and that the engine reaches nothing above it even indirectly.
package layers
