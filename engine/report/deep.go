package report

// Deep is what the paid deep scan adds to a report: the site's documents
// used the way an agent would use them (connect, authenticate, call safe
// methods, walk several pages), and what broke. It is not scored.
type Deep struct {
	Deadline   string      `json:"deadline"` // the deep scan's deadline, e.g. "60s"
	Requests   int         `json:"requests"` // every request the deep scan made, the free scan's included
	DurationMS int64       `json:"durationMs"`
	Probes     []DeepProbe `json:"probes"` // in ID order
	// Screenshot is where the homepage's capture is served, when the
	// service took one (GET /api/screenshot).
	Screenshot string `json:"screenshot,omitempty"`
}

// DeepProbe is one thing the deep scan tried.
type DeepProbe struct {
	ID      string         `json:"id"` // e.g. "mcp.live", "oauth.challenge", "pages.sample"
	Name    string         `json:"name"`
	Status  Status         `json:"status"` // pass, partial, fail, or na when the site declares nothing to try
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}
