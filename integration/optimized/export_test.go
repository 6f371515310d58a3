package optimized

import (
	"time"

	"stepwise/integration/sdkjob"
)

func init() { sdkjob.PollFirst, sdkjob.PollMax = 5*time.Millisecond, 20*time.Millisecond }
