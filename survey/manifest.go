package survey

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ListInfo identifies the list a survey read.
type ListInfo struct {
	Name   string `json:"name"`   // the file's base name
	SHA256 string `json:"sha256"` // of its bytes
	Format Format `json:"format"`
	Lines  int    `json:"lines"`
}

// Settings are what a survey ran with.
type Settings struct {
	Shard          string `json:"shard"` // "I/N"
	Concurrency    int    `json:"concurrency"`
	Timeout        string `json:"timeout"`        // per site
	RequestTimeout string `json:"requestTimeout"` // per request
	PerHost        int    `json:"perHost"`        // concurrent requests to one host
	UserAgent      string `json:"userAgent"`
	AllowPrivate   bool   `json:"allowPrivate"`
	Allow          string `json:"allow,omitempty"`
	// Queue is the survey's name in Redis when workers pull its sites from
	// a queue (--queue), and Worker this worker's name there; Shard is then
	// empty.
	Queue  string `json:"queue,omitempty"`
	Worker string `json:"worker,omitempty"`
}

// Manifest is DIR/survey.json: what the directory holds a survey of. A
// resumed survey must read the same list for the same shard.
type Manifest struct {
	Version  string    `json:"version"` // agentready's
	List     ListInfo  `json:"list"`
	Sites    int       `json:"sites"` // distinct sites of the shard to scan
	Settings Settings  `json:"settings"`
	Started  time.Time `json:"started"` // the first run's start
	Runs     int       `json:"runs"`    // starts, resumes included
	// Finished: every site is done (a queue's worker: the queue is empty).
	Finished *time.Time `json:"finished,omitempty"`
	// Skipped are the list's duplicate and invalid lines as the queue's
	// loader counted them (a queue's worker: it may not have read the
	// list, so its skipped.ndjson may be absent).
	Skipped *SkipCounts `json:"skipped,omitempty"`
	// Workers are the names of every worker that joined the queue, as this
	// worker saw them when the queue was empty: merge names the missing ones.
	Workers []string `json:"workers,omitempty"`
}

// Methods are adoption.json's account of how the counts were made.
type Methods struct {
	Date     string     `json:"date"` // when this report was made (UTC)
	Version  string     `json:"version"`
	List     ListInfo   `json:"list"`
	Settings Settings   `json:"settings"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
	Runs     int        `json:"runs"`
	// Shards are the shards' own accounts, when the report merges them
	// (the workers' accounts, for a queue).
	Shards []Manifest `json:"shards,omitempty"`
	// Rescans are the sites of a queue that two workers scanned (one
	// stopped after writing its result and before acknowledging it): each
	// is counted once, from its earliest result.
	Rescans int `json:"rescans,omitempty"`
}

func readManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s is not a survey manifest: %v", filepath.Join(dir, ManifestFile), err)
	}
	return &m, nil
}

func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, ManifestFile), append(b, '\n'))
}

// writeFileAtomic replaces path with data whole or not at all.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// UserAgent is the survey's User-Agent: agentready, its version, and where
// a site's operator can learn who is surveying and how to reach them.
func UserAgent(version, contact string) string {
	return "agentready/" + version + " (+" + contact + "; agent-readiness survey)"
}

// DefaultContact is the contact a survey names without --contact: the
// scanner's own page, which says what the bot does but not who runs it.
const DefaultContact = "https://agentready.dev/bot"

// CheckContact accepts an absolute http(s) URL or a mailto: address that
// can stand in a User-Agent comment.
func CheckContact(s string) error {
	if s == "" || len(s) > 256 || strings.ContainsAny(s, " ()\\;\"") || strings.IndexFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		return fmt.Errorf("the contact must be a URL of printable ASCII without spaces, parentheses, quotes or semicolons, at most 256 bytes (e.g. https://example.org/survey or mailto:survey@example.org)")
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("the contact %q is not a URL", s)
	}
	switch {
	case u.Scheme == "mailto" && u.Opaque != "":
		return nil
	case (u.Scheme == "https" || u.Scheme == "http") && u.Host != "":
		return nil
	}
	return fmt.Errorf("the contact %q is neither an http(s) URL nor a mailto: address", s)
}
