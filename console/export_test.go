package console

// Messages are the console's language tables, for the tests.
var Messages = messages

// Median is the median of durations.
var Median = median

// FormatDuration and ZoneLabel are the console's ways of writing a
// duration and naming a zone, for the tests.
var (
	FormatDuration = formatDuration
	ZoneLabel      = zoneLabel
)
