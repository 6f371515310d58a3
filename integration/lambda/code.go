package lambda

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// A function's code
//
// A handler's code is its folder, or the folder a .zip of it was
// extracted to (zip.go). Its stamp sums it up cheaply: the number of
// files and folders under it and the newest modification time (for a
// zip, the zip file's size and time), so that an edit, an added or a
// removed file is seen without reading the files. A warm process whose
// code's stamp is no longer the current one is not used again: the next
// invoke starts another, which loads the code anew. The stamp is taken
// at most once every stampEvery per function, so an invoke does not walk
// the folder.

// stampEvery is how often a function's code is looked at.
const stampEvery = time.Second

// code is where a function's code is, and its stamp.
type code struct {
	// src is the Handler's Dir: a folder or a .zip file.
	src string
	zip bool

	mu      sync.Mutex
	dir     string // where the code runs from
	stamp   string
	checked time.Time
}

func newCode(src string) *code { return &code{src: src, zip: isZip(src)} }

// current returns the folder the code runs from and its stamp, looking
// at the code again when it was last looked at stampEvery ago or more; a
// changed zip is extracted again.
func (c *code) current() (dir, stamp string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dir != "" && time.Since(c.checked) < stampEvery {
		return c.dir, c.stamp, nil
	}
	if !c.zip {
		c.dir, c.stamp, c.checked = c.src, folderStamp(c.src), time.Now()
		return c.dir, c.stamp, nil
	}
	st, err := os.Stat(c.src)
	if err != nil {
		return "", "", fmt.Errorf("the handler's code: %w", err)
	}
	stamp = fmt.Sprintf("zip %d %d", st.Size(), st.ModTime().UnixNano())
	if stamp != c.stamp || c.dir == "" {
		dir, err := extractZip(c.src)
		if err != nil {
			return "", "", err
		}
		c.dir, c.stamp = dir, stamp
	}
	c.checked = time.Now()
	return c.dir, c.stamp, nil
}

// folderStamp sums up what is under dir: how many entries and the newest
// modification time of its files. Python's byte-code caches and version control
// folders are not the code.
func folderStamp(dir string) string {
	var count int
	var newest int64
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		name := d.Name()
		if path != dir && d.IsDir() && (name == "__pycache__" || name == ".git") {
			return filepath.SkipDir
		}
		if filepath.Ext(name) == ".pyc" {
			return nil
		}
		count++
		if d.IsDir() {
			// A folder's time changes with what is written in it (a
			// cache the runtime writes, say): its files tell the edits.
			return nil
		}
		if info, err := d.Info(); err == nil {
			newest = max(newest, info.ModTime().UnixNano())
		}
		return nil
	})
	return fmt.Sprintf("%d %d", count, newest)
}
