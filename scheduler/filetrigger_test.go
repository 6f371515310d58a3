package scheduler_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
	"stepwise/scheduler"
)

// triggerCall sends a file-trigger request and returns its status and
// JSON body.
func triggerCall(t *testing.T, b *bundle, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, b.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out), string(data))
	return resp.StatusCode, out
}

// TestFileTrigger: a trigger made through the API starts one execution a
// file that arrives in its folder, once its size has stayed the same for
// StableSeconds, with the file in the input; a scheduler started again
// (a restart, another node) starts none of them again; a file written
// again arrives again; a stop between a start and its record starts
// nothing twice.
func TestFileTrigger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	b := setupConfig(t, func(c *scheduler.Config) { c.FileTriggerRoots = []string{filepath.Dir(dir)} })
	status, out := triggerCall(t, b, http.MethodPost, "/file-triggers/ledger",
		`{"Folder": "`+dir+`", "Pattern": "*.csv", "StateMachineArn": "`+smArn+`", "PollSeconds": 5, "StableSeconds": 10}`)
	require.Equal(t, http.StatusOK, status, out)
	status, out = triggerCall(t, b, http.MethodPost, "/file-triggers/bad", `{"Folder": "in", "StateMachineArn": "x"}`)
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, out["Message"], "'in' at 'Folder' failed to satisfy constraint: Member must be an absolute path")
	require.Contains(t, out["Message"], "at 'StateMachineArn' failed to satisfy constraint: Member must be a state machine's ARN")

	sfn := &fakeSFN{}
	now := b.now
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return now }}
	svc := b.svc
	poll := func(after time.Duration) {
		t.Helper()
		now = now.Add(after)
		require.NoError(t, svc.PollFiles(ctx, cfg))
	}
	a := filepath.Join(dir, "a.csv")
	require.NoError(t, os.WriteFile(a, []byte("1,2\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "note.txt"), []byte("x"), 0o600))
	poll(0)
	require.Empty(t, sfn.names_(), "not stable yet")
	poll(5 * time.Second)
	require.Empty(t, sfn.names_())
	require.NoError(t, os.WriteFile(a, []byte("1,2\n3,4\n"), 0o600)) // still being written
	poll(5 * time.Second)
	require.Empty(t, sfn.names_(), "its size changed: stable from now")
	poll(5 * time.Second)
	require.Empty(t, sfn.names_())
	poll(5 * time.Second)
	require.Len(t, sfn.names_(), 1)
	info, err := os.Stat(a)
	require.NoError(t, err)
	var in map[string]any
	require.NoError(t, json.Unmarshal([]byte(sfn.started[0]["input"]), &in))
	require.Equal(t, map[string]any{"path": a, "size": float64(8), "modified": info.ModTime().UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano)}, in["file"])
	require.Equal(t, "ledger", in["trigger"])
	require.True(t, strings.HasPrefix(sfn.names_()[0], "ledger-"))

	// Restarted: nothing starts again, even once the stability is seen again.
	svc = scheduler.New(b.exec, b.cfg)
	poll(time.Minute)
	poll(time.Minute)
	require.Len(t, sfn.names_(), 1)

	// Written again: a new arrival. A stop between its start and its
	// record: started already (ExecutionAlreadyExists), recorded, once.
	require.NoError(t, os.WriteFile(a, []byte("5,6\n"), 0o600))
	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(a, later, later))
	info, err = os.Stat(a)
	require.NoError(t, err)
	key := a + " 4 " + strconv.FormatInt(info.ModTime().UTC().Truncate(time.Millisecond).UnixMilli(), 10)
	name := scheduler.FileExecutionName("ledger", key)
	require.NoError(t, sfn.StartExecution(ctx, &scheduler.StartExecution{StateMachineArn: smArn, Name: &name}))
	poll(time.Minute)
	poll(time.Minute)
	require.Equal(t, []string{sfn.names_()[0], name}, sfn.names_())
	svc = scheduler.New(b.exec, b.cfg)
	poll(time.Minute)
	poll(time.Minute)
	require.Len(t, sfn.names_(), 2)

	status, out = triggerCall(t, b, http.MethodGet, "/file-triggers/ledger", "")
	require.Equal(t, http.StatusOK, status)
	require.Len(t, out["Started"], 2)
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:execution:jobnet:"+name, out["Started"].([]any)[0].(map[string]any)["ExecutionArn"])
	status, out = triggerCall(t, b, http.MethodGet, "/file-triggers", "")
	require.Equal(t, http.StatusOK, status)
	require.Len(t, out["FileTriggers"], 1)
	status, _ = triggerCall(t, b, http.MethodDelete, "/file-triggers/ledger", "")
	require.Equal(t, http.StatusOK, status)
	status, out = triggerCall(t, b, http.MethodGet, "/file-triggers/ledger", "")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "File trigger ledger does not exist.", out["Message"])
}

// TestFileTriggerRoots: a local folder trigger is taken only under a
// folder the server was started with --file-trigger-root: without one,
// or outside them (through a symbolic link too), it is refused, saying
// so; one stored before the roots changed is not polled.
func TestFileTriggerRoots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, outside := t.TempDir(), t.TempDir()
	inside := filepath.Join(root, "in")
	require.NoError(t, os.Mkdir(inside, 0o700))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "link")))
	body := func(folder string) string {
		return `{"Folder": "` + folder + `", "StateMachineArn": "` + smArn + `"}`
	}

	none := setup(t)
	status, out := triggerCall(t, none, http.MethodPost, "/file-triggers/ledger", body(inside))
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "File trigger folder "+inside+" is refused: this server takes no local folder triggers; start it with --file-trigger-root DIR (repeatable) to let triggers watch the folders under DIR", out["Message"])

	b := setupConfig(t, func(c *scheduler.Config) { c.FileTriggerRoots = []string{root} })
	for _, folder := range []string{outside, filepath.Join(root, "link"), filepath.Join(root, "..", filepath.Base(outside)), "/"} {
		status, out = triggerCall(t, b, http.MethodPost, "/file-triggers/ledger", body(folder))
		require.Equal(t, http.StatusBadRequest, status, folder)
		require.Equal(t, "File trigger folder "+folder+" is refused: it is not under a folder the server was started with --file-trigger-root ("+root+")", out["Message"])
	}
	for _, folder := range []string{root, inside} {
		status, out = triggerCall(t, b, http.MethodPost, "/file-triggers/ledger", body(folder))
		require.Equal(t, http.StatusOK, status, out)
	}

	// Stored, then the server started without the root: not polled.
	require.NoError(t, os.WriteFile(filepath.Join(inside, "a.csv"), []byte("x"), 0o600))
	sfn := &fakeSFN{}
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return b.now }}
	err := scheduler.New(b.exec, scheduler.Config{Region: region, Account: account, Now: cfg.Now}).PollFiles(ctx, cfg)
	require.ErrorContains(t, err, "--file-trigger-root")
	require.Empty(t, sfn.names_())
	require.NoError(t, b.svc.PollFiles(ctx, cfg))
	require.Len(t, sfn.names_(), 1)
}

// TestFileTriggerBucket: a trigger on an S3 prefix (at moto_server)
// starts one execution an object whose key is under the prefix and whose
// base name matches, once its ETag and size have stayed the same for
// StableSeconds, with the object in the input; a restart in the middle
// (before and after the start) starts it once; an object written again
// arrives again. Without an s3 endpoint, a bucket trigger is refused.
func TestFileTriggerBucket(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := integrationtest.Moto(t)
	awsCfg, err := config.LoadDefaultConfig(ctx, config.WithRegion(region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	require.NoError(t, err)
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(url)
		o.UsePathStyle = true
	})
	_, err = client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("drops")})
	require.NoError(t, err)
	put := func(key, body string) {
		t.Helper()
		_, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("drops"), Key: aws.String(key), Body: strings.NewReader(body)})
		require.NoError(t, err)
	}

	none := setup(t)
	status, out := triggerCall(t, none, http.MethodPost, "/file-triggers/ledger", `{"Bucket": "drops", "StateMachineArn": "`+smArn+`"}`)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "File trigger bucket drops is refused: no endpoint is given for s3 (serve --aws-endpoint or --endpoint s3=URL)", out["Message"])

	b := setupConfig(t, func(c *scheduler.Config) { c.Objects = scheduler.S3Objects(client) })
	status, out = triggerCall(t, b, http.MethodPost, "/file-triggers/both", `{"Folder": "/x", "Bucket": "drops", "StateMachineArn": "`+smArn+`"}`)
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, out["Message"], "at 'Bucket' failed to satisfy constraint: Member must be empty when Folder is given")
	status, out = triggerCall(t, b, http.MethodPost, "/file-triggers/ledger",
		`{"Bucket": "drops", "Prefix": "in/", "Pattern": "*.csv", "StateMachineArn": "`+smArn+`", "PollSeconds": 5, "StableSeconds": 10}`)
	require.Equal(t, http.StatusOK, status, out)

	sfn := &fakeSFN{}
	now := b.now
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return now }}
	svc := b.svc
	poll := func(after time.Duration) {
		t.Helper()
		now = now.Add(after)
		require.NoError(t, svc.PollFiles(ctx, cfg))
	}
	put("in/day/a.csv", "1,2\n")
	put("in/note.txt", "x")
	put("out/b.csv", "3,4\n")
	put("in/empty/", "")
	poll(0)
	require.Empty(t, sfn.names_(), "not stable yet")
	svc = scheduler.New(b.exec, b.cfg) // restarted before the start: stable from now
	poll(5 * time.Second)
	poll(5 * time.Second)
	require.Empty(t, sfn.names_())
	poll(5 * time.Second)
	require.Len(t, sfn.names_(), 1)
	head, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("drops"), Key: aws.String("in/day/a.csv")})
	require.NoError(t, err)
	var in map[string]any
	require.NoError(t, json.Unmarshal([]byte(sfn.started[0]["input"]), &in))
	file := in["file"].(map[string]any)
	require.Equal(t, "drops", file["bucket"])
	require.Equal(t, "in/day/a.csv", file["key"])
	require.Equal(t, float64(4), file["size"])
	require.Equal(t, strings.Trim(aws.ToString(head.ETag), `"`), file["etag"])
	modified, err := time.Parse(time.RFC3339Nano, file["modified"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, *head.LastModified, modified, time.Second)
	require.Equal(t, "ledger", in["trigger"])

	// Restarted after the start: nothing starts again.
	svc = scheduler.New(b.exec, b.cfg)
	poll(time.Minute)
	poll(time.Minute)
	require.Len(t, sfn.names_(), 1)

	// Written again: a new ETag, a new arrival.
	put("in/day/a.csv", "5,6\n")
	poll(time.Minute)
	poll(time.Minute)
	require.Len(t, sfn.names_(), 2)
	require.NotEqual(t, sfn.names_()[0], sfn.names_()[1])
	status, out = triggerCall(t, b, http.MethodGet, "/file-triggers/ledger", "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "drops", out["Bucket"])
	require.Len(t, out["Started"], 2)
}
