package console

// Messages are the console's language tables, for the tests.
var Messages = messages

// Median is the median of durations.
var Median = median
