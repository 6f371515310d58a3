package interp_test

// minPassRate is the lowest acceptable pass rate of the conformance cases.
const minPassRate = 97.0
