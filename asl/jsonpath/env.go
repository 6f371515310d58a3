package jsonpath

// Env is what a path is evaluated against: the roots "$", "$$" and "$name".
type Env struct {
	// Input is the value of "$": the state's effective input, or the value
	// being filtered (ResultSelector reads the task result through "$").
	Input any
	// Context is the value of "$$", the context object.
	Context any
	// Vars returns the value of the variable "$name". Nil means no variable
	// is in scope.
	Vars func(name string) (any, bool)
}

// Root says which value a path starts from.
type Root uint8

const (
	RootInput    Root = iota // $
	RootContext              // $$
	RootVariable             // $name
)
