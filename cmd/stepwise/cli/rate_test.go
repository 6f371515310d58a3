package cli

// minPassRate is the lowest acceptable conformance pass rate.
const minPassRate = 97.0
