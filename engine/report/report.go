package report

import "time"

// Status of a check.
type Status string

const (
	Pass    Status = "pass"
	Partial Status = "partial"
	Fail    Status = "fail"
	NA      Status = "na"
)

// Level describes one of the five levels.
type Level struct {
	Number      int    `json:"number"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Levels are the five levels of CHECKS.md, index = number-1.
var Levels = []Level{
	{1, "Discoverable", "Agents can find what the site offers."},
	{2, "Usable", "The API works for agents."},
	{3, "Optimized", "Agents spend few tokens and round trips."},
	{4, "Indexable", "AI search can crawl, index and ground answers in the site."},
	{5, "Agent-Native", "The codebase treats agents as first-class users."},
}

// LevelName names current-level values 0–3 as the score reports them.
func LevelName(n int) string {
	if n <= 0 || n > len(Levels) {
		return "Not Ready"
	}
	return Levels[n-1].Name
}

// Check is one check's result: the ten fields of service-spec.md §2.3.
type Check struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Passed         bool   `json:"passed"`
	Status         Status `json:"status"`
	Level          int    `json:"level"`
	Category       string `json:"category"`
	Message        string `json:"message"`
	Recommendation string `json:"recommendation"`
	Details        string `json:"details"`
	FoundAt        string `json:"foundAt"`
}

// LevelProgress is one entry of levels[].
type LevelProgress struct {
	Level    Level `json:"level"`
	Passed   int   `json:"passed"`
	Failed   int   `json:"failed"` // fail and partial
	NA       int   `json:"na"`
	Total    int   `json:"total"`
	Complete bool  `json:"complete"`
}

// Tally counts outcomes.
type Tally struct {
	Value   int `json:"value"`
	Passed  int `json:"passed"`
	Partial int `json:"partial"`
	Failed  int `json:"failed"`
	NA      int `json:"na"`
	Total   int `json:"total"`
}

// Score is the top-level summary.
type Score struct {
	Value     int    `json:"value"`
	Grade     string `json:"grade"`
	Level     int    `json:"level"`
	LevelName string `json:"levelName"`
	Passed    int    `json:"passed"`
	Partial   int    `json:"partial"`
	Failed    int    `json:"failed"`
	NA        int    `json:"na"`
	Total     int    `json:"total"`
	Indexable Tally  `json:"indexable"`
}

// Result is a full scan report (ScanResult).
type Result struct {
	URL          string          `json:"url"`
	Timestamp    time.Time       `json:"timestamp"`
	CurrentLevel int             `json:"currentLevel"`
	Score        Score           `json:"score"`
	Levels       []LevelProgress `json:"levels"`
	Checks       []Check         `json:"checks"`
}

// BriefCheck is the reduced check of the POST /api/scan body.
type BriefCheck struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Passed  bool   `json:"passed"`
	Status  Status `json:"status"`
	Level   int    `json:"level"`
	Message string `json:"message"`
}

// Brief is the POST /api/scan body: url, timestamp, currentLevel, checks.
type Brief struct {
	URL          string       `json:"url"`
	Timestamp    time.Time    `json:"timestamp"`
	CurrentLevel int          `json:"currentLevel"`
	Checks       []BriefCheck `json:"checks"`
}

// Brief reduces a result to the POST body.
func (r *Result) Brief() Brief {
	b := Brief{URL: r.URL, Timestamp: r.Timestamp, CurrentLevel: r.CurrentLevel, Checks: make([]BriefCheck, len(r.Checks))}
	for i, c := range r.Checks {
		b.Checks[i] = BriefCheck{ID: c.ID, Name: c.Name, Passed: c.Passed, Status: c.Status, Level: c.Level, Message: c.Message}
	}
	return b
}

// Check returns the result of check id, if present.
func (r *Result) Check(id string) (Check, bool) {
	for _, c := range r.Checks {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}
