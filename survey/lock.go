package survey

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrBusy is wrapped by the error of a run whose output directory another
// run (a survey, a queue's worker, a merge) is writing to.
var ErrBusy = errors.New("another survey is writing to the output directory")

// dirLock is a run's exclusive hold on its output directory: an advisory
// lock (flock) on DIR/survey.lock, which the kernel drops when the process
// ends however it ends, so a killed run never leaves the directory locked.
// The file names the holder for the message a second run gets; it is left
// in place, since removing it would let a third run lock a new file while
// the second still holds the old one.
type dirLock struct{ f *os.File }

// lockDir takes dir for this run, or says which run holds it.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the output directory cannot be locked for this run: %w", err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("the output directory cannot be locked for this run: %w", err)
	}
	if !held {
		holder := "another process"
		if b, err := os.ReadFile(path); err == nil {
			if h := describeHolder(string(b)); h != "" {
				holder = h
			}
		}
		f.Close()
		return nil, fmt.Errorf("%w: %s is in use by %s; wait for it to finish (or stop it: the same command continues it later), or give this run another --out", ErrBusy, dir, holder)
	}
	// Written only once the lock is ours: the holder's line is never
	// overwritten by a run that is about to be refused.
	if err := f.Truncate(0); err == nil {
		host, _ := os.Hostname()
		fmt.Fprintf(f, "pid %d\nhost %s\nsince %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	}
	return &dirLock{f: f}, nil
}

// describeHolder words the lock file's content ("pid 123 on host h since
// t"); "" when it names no process.
func describeHolder(s string) string {
	fields := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	pid, err := strconv.Atoi(fields["pid"])
	if err != nil || pid <= 0 {
		return ""
	}
	out := "the survey run with pid " + strconv.Itoa(pid)
	if h := fields["host"]; h != "" && len(h) <= 255 && !strings.ContainsAny(h, "\x00\r\n") {
		out += " on " + h
	}
	if t, err := time.Parse(time.RFC3339, fields["since"]); err == nil {
		out += ", started " + t.Format(time.RFC3339)
	}
	return out
}

// unlock ends the hold (closing the file releases the lock).
func (l *dirLock) unlock() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
