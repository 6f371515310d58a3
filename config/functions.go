package config

// FunctionGroupsDir is the folder where the server records the process
// groups of its local functions, to kill those a server that died left
// (see integration/lambda): next to a SQLite file, its path with
// ".functions" added; "" (a folder of the user's) for an in-memory or a
// PostgreSQL database.
func (s *Serve) FunctionGroupsDir() string {
	if s.DB == ":memory:" || s.Postgres() {
		return ""
	}
	return s.DB + ".functions"
}
