package notify

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
)

// Webhook POSTs each event as JSON to a URL. With a secret, each request
// carries X-Stepwise-Timestamp (Unix seconds) and X-Stepwise-Signature:
// "sha256=" and the hex HMAC-SHA256, keyed by the secret, of the
// timestamp, a ".", and the body. X-Stepwise-Event-Id is the event's id
// (the same on a redelivery). Any 2xx answer is success.
type Webhook struct {
	URL    string
	Secret []byte
	Client *http.Client // nil: a client with a 10 s timeout
}

// Name is the webhook's cursor key.
func (w *Webhook) Name() string { return "webhook:" + w.URL }

// Deliver posts the events one by one.
func (w *Webhook) Deliver(ctx context.Context, events []Delivery) error {
	client := w.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	for _, ev := range events {
		body := ev.Body
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "stepwise-notify")
		req.Header.Set("X-Stepwise-Event-Id", ev.ID)
		if len(w.Secret) > 0 {
			ts := strconv.FormatInt(time.Now().Unix(), 10)
			req.Header.Set("X-Stepwise-Timestamp", ts)
			req.Header.Set("X-Stepwise-Signature", "sha256="+Sign(w.Secret, ts, body))
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("webhook %s answered %s", w.URL, resp.Status)
		}
	}
	return nil
}

// Sign is the signature of a webhook request: the hex HMAC-SHA256 of
// timestamp + "." + body.
func Sign(secret []byte, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp))
	mac.Write([]byte("."))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// Bus puts the events on an Amazon EventBridge event bus (its name or
// ARN), ten at a time, as AWS's own status-change events.
type Bus struct {
	Bus    string
	Client *eventbridge.Client
}

// Name is the bus's cursor key.
func (b *Bus) Name() string { return "bus:" + b.Bus }

// Deliver calls PutEvents; an entry that failed fails the batch.
func (b *Bus) Deliver(ctx context.Context, events []Delivery) error {
	for start := 0; start < len(events); start += 10 {
		var entries []types.PutEventsRequestEntry
		for _, d := range events[start:min(start+10, len(events))] {
			// The detail goes as rendered: only the envelope is read.
			var ev struct {
				DetailType string          `json:"detail-type"`
				Time       string          `json:"time"`
				Resources  []string        `json:"resources"`
				Detail     json.RawMessage `json:"detail"`
			}
			if err := json.Unmarshal(d.Body, &ev); err != nil {
				return err
			}
			t, _ := time.Parse("2006-01-02T15:04:05Z", ev.Time)
			entries = append(entries, types.PutEventsRequestEntry{
				EventBusName: aws.String(b.Bus), Source: aws.String(Source), DetailType: aws.String(cmp.Or(ev.DetailType, DetailType)),
				Detail: aws.String(string(ev.Detail)), Resources: ev.Resources, Time: aws.Time(t),
			})
		}
		out, err := b.Client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
		if err != nil {
			return err
		}
		if out.FailedEntryCount > 0 {
			for _, e := range out.Entries {
				if e.ErrorCode != nil {
					return fmt.Errorf("event bus %s refused an event: %s: %s", b.Bus, aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage))
				}
			}
			return fmt.Errorf("event bus %s refused %d events", b.Bus, out.FailedEntryCount)
		}
	}
	return nil
}

// File appends each event as a line of JSON to a file, synced to disk
// before the events count as delivered.
type File struct {
	Path string
	mu   sync.Mutex
}

// Name is the file's cursor key.
func (f *File) Name() string {
	abs, err := filepath.Abs(f.Path)
	if err != nil {
		abs = f.Path
	}
	return "file:" + abs
}

// BatchSize is the most events appended (and synced) at once: a file
// takes many as cheaply as one.
func (f *File) BatchSize() int { return 1000 }

// Deliver appends the events.
func (f *File) Deliver(_ context.Context, events []Delivery) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	size := 0
	for _, ev := range events {
		size += len(ev.Body) + 1
	}
	buf := make([]byte, 0, size)
	for _, ev := range events {
		buf = append(append(buf, ev.Body...), '\n')
	}
	file, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := file.Write(buf)
	serr := file.Sync()
	return errors.Join(werr, serr, file.Close())
}
