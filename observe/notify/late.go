package notify

import (
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// LateDetailType is the detail-type of the event of a job running late:
// a Task state running past twice its usual duration (the median of its
// last 20 completed runs). It is Stepwise's own; AWS sends none like it.
const LateDetailType = "Step Functions Job Running Late"

// LateJob is a job running late.
type LateJob struct {
	ExecutionArn, StateMachineArn, Name, State string
	// Entered is when the state was entered: with the execution and the
	// state, it names the job's run, and so the event's id.
	Entered        time.Time
	Running, Usual time.Duration
}

// LateDetail is the detail of a job's late event.
type LateDetail struct {
	ExecutionArn    string `json:"executionArn"`
	StateMachineArn string `json:"stateMachineArn"`
	Name            string `json:"name"`
	State           string `json:"state"`
	EnteredDate     int64  `json:"enteredDate"`
	// How long it has run, and usually runs, in seconds (to the
	// millisecond).
	RunningSeconds float64 `json:"runningSeconds"`
	UsualSeconds   float64 `json:"usualSeconds"`
}

// LateNotice is the outbox notice of a job running late, at: the event
// rendered whole (Render passes it on as it is), its id derived from the
// job's run, so the same run's event has the same id whichever server
// writes it.
func LateNotice(j LateJob, at time.Time) []byte {
	sum := sha256.Sum256([]byte("late\x00" + j.ExecutionArn + "\x00" + j.State + "\x00" + j.Entered.UTC().Format(time.RFC3339Nano)))
	id, _ := uuid.FromBytes(sum[:16])
	region, account := arnRegionAccount(j.ExecutionArn)
	ev := struct {
		Version    string     `json:"version"`
		ID         string     `json:"id"`
		DetailType string     `json:"detail-type"`
		Source     string     `json:"source"`
		Account    string     `json:"account"`
		Time       string     `json:"time"`
		Region     string     `json:"region"`
		Resources  []string   `json:"resources"`
		Detail     LateDetail `json:"detail"`
	}{"0", id.String(), LateDetailType, Source, account, at.UTC().Format("2006-01-02T15:04:05Z"), region, []string{j.ExecutionArn},
		LateDetail{ExecutionArn: j.ExecutionArn, StateMachineArn: j.StateMachineArn, Name: j.Name, State: j.State,
			EnteredDate: j.Entered.UnixMilli(), RunningSeconds: j.Running.Round(time.Millisecond).Seconds(), UsualSeconds: j.Usual.Round(time.Millisecond).Seconds()}}
	b, _ := json.Marshal(ev)
	return b
}
