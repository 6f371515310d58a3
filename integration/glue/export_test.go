package glue

import (
	"time"

	"stepwise/integration/sdkjob"
)

// Tests wait for jobs that end in milliseconds.
func init() { sdkjob.PollFirst, sdkjob.PollMax = 5*time.Millisecond, 20*time.Millisecond }
