package scheduler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"stepwise/sfnapi"
	"stepwise/store"
)

// File-arrival triggers (Stepwise's own, beside the Scheduler API): a
// trigger watches a local folder, or an S3 bucket's prefix at the s3
// endpoint, and starts an execution of its state machine for each file
// that arrives there, once:
//
//	poll (every PollSeconds, on the leader) ──► a regular file matching Pattern
//	   ──► unchanged for StableSeconds? ── no ──► next poll
//	   └─ yes ──► recorded already? ── yes ──► nothing
//	              └─ no ──► StartExecution, named from the file ──► recorded
//
// A file is the arrival of its path, size and modification time: written
// again, it arrives again. The execution's name is derived from the
// trigger and the file, so a stop between the start and its record starts
// nothing twice (the start again is refused as ExecutionAlreadyExists, and
// the file recorded); the record keeps the file from starting again once
// the execution is deleted. An object is its bucket, key, ETag and size.
// The input is
//
//	{"file": {"path": ..., "size": ..., "modified": RFC 3339}, "trigger": NAME}
//	{"file": {"bucket": ..., "key": ..., "size": ..., "etag": ..., "modified": RFC 3339}, "trigger": NAME}
type FileTrigger struct {
	Name string `json:"Name"`
	// Folder is the local folder watched (absolute); its files only, not
	// those of its subfolders. A trigger has a Folder or a Bucket.
	Folder string `json:"Folder,omitempty"`
	// Bucket and Prefix are the S3 objects watched: those of Bucket whose
	// keys begin with Prefix (every key below it, "folders" included).
	Bucket string `json:"Bucket,omitempty"`
	Prefix string `json:"Prefix,omitempty"`
	// Pattern is a glob of the files' base names (path.Match; "*" when
	// empty); an object's base name is its key's last part after "/".
	Pattern         string `json:"Pattern,omitempty"`
	StateMachineArn string `json:"StateMachineArn"`
	// PollSeconds is the time between two looks at the folder (default
	// 10); StableSeconds how long a file's size and modification time
	// must stay as they are before it starts (default 0: at once).
	PollSeconds   int `json:"PollSeconds,omitempty"`
	StableSeconds int `json:"StableSeconds,omitempty"`
	// State is ENABLED (the default) or DISABLED.
	State                string `json:"State,omitempty"`
	CreationDate         *Epoch `json:"CreationDate,omitempty"`
	LastModificationDate *Epoch `json:"LastModificationDate,omitempty"`
}

// FileArrival is a file a trigger started an execution for.
type FileArrival struct {
	Key          string `json:"Key"`
	ExecutionArn string `json:"ExecutionArn"`
	StartedAt    Epoch  `json:"StartedAt"`
}

const defaultPollSeconds = 10

var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// Object is an S3 object as a listing shows it.
type Object struct {
	Key      string
	ETag     string
	Size     int64
	Modified time.Time
}

// ObjectLister lists the objects of a bucket whose keys begin with
// prefix, every page of them.
type ObjectLister func(ctx context.Context, bucket, prefix string) ([]Object, error)

// Watched is where a trigger looks: its folder, or s3://bucket/prefix.
func (t *FileTrigger) Watched() string {
	if t.Bucket != "" {
		return "s3://" + t.Bucket + "/" + t.Prefix
	}
	return t.Folder
}

var triggerName = regexp.MustCompile(`^[0-9a-zA-Z_.-]{1,40}$`)

func (t *FileTrigger) normalize() error {
	var v checks
	if !triggerName.MatchString(t.Name) {
		v.add(t.Name, "name", "satisfy regular expression pattern: [0-9a-zA-Z_.-]{1,40}")
	}
	switch {
	case t.Folder != "" && t.Bucket != "":
		v.add(t.Bucket, "Bucket", "be empty when Folder is given (a trigger watches a folder or a bucket's prefix)")
	case t.Bucket != "":
		if !bucketName.MatchString(t.Bucket) {
			v.add(t.Bucket, "Bucket", "be a bucket's name (3 to 63 lowercase letters, digits, dots and hyphens)")
		}
		if len(t.Prefix) > 1024 {
			v.add(t.Prefix, "Prefix", "have length less than or equal to 1024")
		}
	default:
		if t.Prefix != "" {
			v.add(t.Prefix, "Prefix", "be empty without a Bucket")
		}
		if !filepath.IsAbs(t.Folder) {
			v.add(t.Folder, "Folder", "be an absolute path (or give a Bucket instead)")
		}
	}
	if t.Pattern == "" {
		t.Pattern = "*"
	}
	if _, err := filepath.Match(t.Pattern, "x"); err != nil {
		v.add(t.Pattern, "Pattern", "be a glob of file names")
	}
	if !smArnPattern.MatchString(t.StateMachineArn) {
		v.add(t.StateMachineArn, "StateMachineArn", "be a state machine's ARN")
	}
	if t.PollSeconds == 0 {
		t.PollSeconds = defaultPollSeconds
	}
	if t.PollSeconds < 1 || t.PollSeconds > 86400 {
		v.add(t.PollSeconds, "PollSeconds", "be between 1 and 86400")
	}
	if t.StableSeconds < 0 || t.StableSeconds > 86400 {
		v.add(t.StableSeconds, "StableSeconds", "be between 0 and 86400")
	}
	if t.State == "" {
		t.State = "ENABLED"
	}
	if !oneOf(t.State, "ENABLED", "DISABLED") {
		v.add(t.State, "State", "satisfy enum value set: [DISABLED, ENABLED]")
	}
	return v.err()
}

// smArnPattern is a state machine's ARN, or its version's or alias's.
var smArnPattern = regexp.MustCompile(`^(arn:aws(?:-[a-z]+)?:states:[a-z0-9-]+:\d{12}):stateMachine:([0-9A-Za-z_-]{1,80})(?::[0-9A-Za-z_-]{1,128})?$`)

// PutFileTrigger creates a trigger, or replaces the settings of the one of
// its name (CreateFileTrigger).
func (s *Service) PutFileTrigger(ctx context.Context, t *FileTrigger) error {
	t.CreationDate, t.LastModificationDate = nil, nil
	if err := t.normalize(); err != nil {
		return err
	}
	if err := s.sourceAllowed(t); err != nil {
		return err
	}
	body, err := json.Marshal(t)
	if err != nil {
		return err
	}
	now := s.now()
	return s.exec.FileTriggerPut(ctx, &store.FileTrigger{Name: t.Name, Body: string(body), CreatedAt: now, UpdatedAt: now})
}

func decodeTrigger(row *store.FileTrigger) (*FileTrigger, error) {
	var t FileTrigger
	if err := json.Unmarshal([]byte(row.Body), &t); err != nil {
		return nil, err
	}
	t.Name, t.CreationDate, t.LastModificationDate = row.Name, epochPtr(row.CreatedAt), epochPtr(row.UpdatedAt)
	return &t, nil
}

// GetFileTrigger returns a trigger.
func (s *Service) GetFileTrigger(ctx context.Context, name string) (*FileTrigger, error) {
	row, err := s.exec.FileTriggerGet(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundError("File trigger %s does not exist.", name)
	} else if err != nil {
		return nil, err
	}
	return decodeTrigger(row)
}

// ListFileTriggers returns every trigger, by name.
func (s *Service) ListFileTriggers(ctx context.Context) ([]*FileTrigger, error) {
	rows, err := s.exec.FileTriggerList(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*FileTrigger, 0, len(rows))
	for _, row := range rows {
		t, err := decodeTrigger(row)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// DeleteFileTrigger deletes a trigger and the record of its files.
func (s *Service) DeleteFileTrigger(ctx context.Context, name string) error {
	err := s.exec.FileTriggerDelete(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return notFoundError("File trigger %s does not exist.", name)
	}
	return err
}

// ListFileArrivals returns a trigger's latest files started (at most
// 100), newest first.
func (s *Service) ListFileArrivals(ctx context.Context, name string) ([]FileArrival, error) {
	if _, err := s.GetFileTrigger(ctx, name); err != nil {
		return nil, err
	}
	rows, err := s.exec.FileArrivalList(ctx, name, 100)
	if err != nil {
		return nil, err
	}
	out := make([]FileArrival, len(rows))
	for i, a := range rows {
		out[i] = FileArrival{Key: a.Key, ExecutionArn: a.ExecutionArn, StartedAt: Epoch{a.StartedAt}}
	}
	return out, nil
}

// fileState is what the polls saw of a file: its key, since when, and
// whether it is recorded as started.
type fileState struct {
	key   string
	since time.Time
	done  bool
}

// PollFiles looks at the folders of the ENABLED triggers whose poll is
// due at cfg.Now() and starts the executions of the files arrived.
func (s *Service) PollFiles(ctx context.Context, cfg FireConfig) error {
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	if s.files == nil {
		s.files, s.polled = map[string]map[string]*fileState{}, map[string]time.Time{}
	}
	triggers, err := s.ListFileTriggers(ctx)
	if err != nil {
		return err
	}
	now := cfg.Now()
	var errs []error
	for _, t := range triggers {
		if t.State != "ENABLED" {
			continue
		}
		if last, ok := s.polled[t.Name]; ok && now.Sub(last) < time.Duration(t.PollSeconds)*time.Second {
			continue
		}
		s.polled[t.Name] = now
		if err := s.pollTrigger(ctx, cfg, t, now); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.cfg.Logger.Warn("scheduler: file trigger not polled", "trigger", t.Name, "watched", t.Watched(), "error", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// sourceAllowed refuses a folder not allowed, or a bucket without an s3
// endpoint.
func (s *Service) sourceAllowed(t *FileTrigger) error {
	if t.Bucket == "" {
		return s.folderAllowed(t.Folder)
	}
	if s.cfg.Objects == nil {
		return validationError("File trigger bucket %s is refused: no endpoint is given for s3 (serve --aws-endpoint or --endpoint s3=URL)", t.Bucket)
	}
	return nil
}

// folderAllowed refuses a local folder outside the server's
// --file-trigger-root folders (symbolic links followed, so that a link
// does not lead out of them), or any without such a folder.
func (s *Service) folderAllowed(folder string) error {
	if len(s.cfg.FileTriggerRoots) == 0 {
		return validationError("File trigger folder %s is refused: this server takes no local folder triggers; start it with --file-trigger-root DIR (repeatable) to let triggers watch the folders under DIR", folder)
	}
	real := filepath.Clean(folder)
	if r, err := filepath.EvalSymlinks(real); err == nil {
		real = r
	}
	for _, root := range s.cfg.FileTriggerRoots {
		root = filepath.Clean(root)
		if r, err := filepath.EvalSymlinks(root); err == nil {
			root = r
		}
		if rel, err := filepath.Rel(root, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return nil
		}
	}
	return validationError("File trigger folder %s is refused: it is not under a folder the server was started with --file-trigger-root (%s)", folder, strings.Join(s.cfg.FileTriggerRoots, ", "))
}

// arrival is a file a poll found: where it is (its path, or its
// bucket's key), what makes it this arrival, and the input's "file".
type arrival struct {
	where, key string
	file       map[string]any
}

func (s *Service) pollTrigger(ctx context.Context, cfg FireConfig, t *FileTrigger, now time.Time) error {
	if err := s.sourceAllowed(t); err != nil {
		return err
	}
	var found []arrival
	var err error
	if t.Bucket != "" {
		found, err = s.listBucket(ctx, t)
	} else {
		found, err = listFolder(t)
	}
	if err != nil {
		return err
	}
	seen := s.files[t.Name]
	if seen == nil {
		seen = map[string]*fileState{}
		s.files[t.Name] = seen
	}
	present := map[string]bool{}
	var errs []error
	for _, a := range found {
		present[a.where] = true
		st := seen[a.where]
		if st == nil || st.key != a.key {
			st = &fileState{key: a.key, since: now}
			seen[a.where] = st
		}
		if st.done || now.Sub(st.since) < time.Duration(t.StableSeconds)*time.Second {
			continue
		}
		if err := s.startFile(ctx, cfg, t, a); err != nil {
			errs = append(errs, err)
			continue
		}
		st.done = true
	}
	for where := range seen {
		if !present[where] {
			delete(seen, where)
		}
	}
	return errors.Join(errs...)
}

// listFolder returns the regular files of a trigger's folder that match
// its pattern, by name.
func listFolder(t *FileTrigger) ([]arrival, error) {
	entries, err := os.ReadDir(t.Folder)
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	var out []arrival
	for _, e := range entries {
		if ok, _ := filepath.Match(t.Pattern, e.Name()); !ok {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		path := filepath.Join(t.Folder, e.Name())
		mod := info.ModTime().UTC().Truncate(time.Millisecond)
		out = append(out, arrival{
			where: path,
			key:   path + " " + strconv.FormatInt(info.Size(), 10) + " " + strconv.FormatInt(mod.UnixMilli(), 10),
			file:  map[string]any{"path": path, "size": info.Size(), "modified": mod.Format(time.RFC3339Nano)},
		})
	}
	return out, nil
}

// listBucket returns the objects under a trigger's prefix whose base
// names match its pattern, by key; "folder" markers (keys ending in "/")
// are not files.
func (s *Service) listBucket(ctx context.Context, t *FileTrigger) ([]arrival, error) {
	objs, err := s.cfg.Objects(ctx, t.Bucket, t.Prefix)
	if err != nil {
		return nil, fmt.Errorf("list s3://%s/%s: %w", t.Bucket, t.Prefix, err)
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].Key < objs[j].Key })
	var out []arrival
	for _, o := range objs {
		if !strings.HasPrefix(o.Key, t.Prefix) || strings.HasSuffix(o.Key, "/") {
			continue
		}
		if ok, _ := path.Match(t.Pattern, path.Base(o.Key)); !ok {
			continue
		}
		mod := o.Modified.UTC().Truncate(time.Millisecond)
		where := "s3://" + t.Bucket + "/" + o.Key
		out = append(out, arrival{
			where: where,
			key:   where + " " + o.ETag + " " + strconv.FormatInt(o.Size, 10),
			file:  map[string]any{"bucket": t.Bucket, "key": o.Key, "size": o.Size, "etag": o.ETag, "modified": mod.Format(time.RFC3339Nano)},
		})
	}
	return out, nil
}

// FileExecutionName is the name of the execution a trigger starts for a
// file (key: its path, size and modification time; an object's
// s3://bucket/key, ETag and size).
func FileExecutionName(trigger, key string) string {
	sum := sha256.Sum256([]byte(trigger + "\x00" + key))
	return trigger + "-" + hex.EncodeToString(sum[:12])
}

// startFile starts a file's execution unless it is recorded, and records
// it.
func (s *Service) startFile(ctx context.Context, cfg FireConfig, t *FileTrigger, a arrival) error {
	key := a.key
	if _, err := s.exec.FileArrivalGet(ctx, t.Name, key); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	input, err := json.Marshal(map[string]any{
		"file":    a.file,
		"trigger": t.Name,
	})
	if err != nil {
		return err
	}
	name, in := FileExecutionName(t.Name, key), string(input)
	err = cfg.Starter.StartExecution(ctx, &StartExecution{StateMachineArn: t.StateMachineArn, Name: &name, Input: &in})
	var refused *sfnapi.Error
	switch {
	case err == nil:
		s.cfg.Logger.Info("scheduler: file arrived, execution started", "trigger", t.Name, "file", a.where, "execution_name", name)
	case errors.As(err, &refused) && refused.Code == sfnapi.CodeExecutionAlreadyExists:
		// Started before its record (a stop between the two).
	default:
		return fmt.Errorf("start the execution of %s: %w", a.where, err)
	}
	arn := executionArn(t.StateMachineArn, name)
	err = s.exec.FileArrivalInsert(ctx, &store.FileArrival{Trigger: t.Name, Key: key, ExecutionArn: arn, StartedAt: s.now()})
	if errors.Is(err, store.ErrAlreadyExists) {
		return nil
	}
	return err
}

// executionArn is the ARN of the execution name of a state machine (of
// its version or alias: the state machine's).
func executionArn(smArn, name string) string {
	m := smArnPattern.FindStringSubmatch(smArn)
	if m == nil {
		return ""
	}
	return m[1] + ":execution:" + m[2] + ":" + name
}
