package console

// Messages are the console's language tables, for the tests.
var Messages = messages
