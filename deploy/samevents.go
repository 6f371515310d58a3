package deploy

// The state machine's SAM Events become schedules (schedule.go).
func init() { samEvents, samEventsRemove = applySAMEvents, removeSAMEvents }
