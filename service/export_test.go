package service

// SetSearchScan sets how many executions one SearchExecutions reads at
// the most, until the returned function restores it.
func SetSearchScan(n int) (restore func()) {
	old := searchScan
	searchScan = n
	return func() { searchScan = old }
}
