package commerce

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/agentready/agentready/engine/clip"
	"github.com/agentready/agentready/engine/internal/signal"
	"github.com/agentready/agentready/engine/weburl"
)

// ACPPath is where a platform publishes its discovery document.
const ACPPath = "/.well-known/acp.json"

// ACPDiscovery is what the `acp` signal needs from a discovery document.
type ACPDiscovery struct {
	Shape             string   `json:"shape"` // "discovery", "pre-spec" or "unknown"
	ProtocolName      string   `json:"protocolName,omitempty"`
	Version           string   `json:"version,omitempty"`
	SupportedVersions []string `json:"supportedVersions,omitempty"`
	APIBaseURL        string   `json:"apiBaseUrl,omitempty"`
	// SameSite is true when api_base_url is on the registrable domain of the
	// document's own URL; false too when no base was given.
	SameSite     bool     `json:"sameSite"`
	Transports   []string `json:"transports,omitempty"`
	Services     []string `json:"services,omitempty"`
	Extensions   []string `json:"extensions,omitempty"`
	Endpoints    []string `json:"endpoints,omitempty"` // pre-spec `endpoints` map keys
	Missing      []string `json:"missing,omitempty"`   // what the discovery RFC requires and the document lacks
	Findings     []string `json:"findings,omitempty"`
	LegacyMarker string   `json:"legacyMarker,omitempty"` // pre-spec `protocol` string or top-level `version`
}

// ParseACP reads a discovery document; base (the document's URL) decides
// whether api_base_url is on the same site. Only a body that is not a JSON
// object is an error.
func ParseACP(body []byte, base *url.URL) (*ACPDiscovery, error) {
	m, err := object(body)
	if err != nil {
		return nil, err
	}
	d := &ACPDiscovery{Shape: "unknown"}
	proto := sub(m, "protocol")
	switch {
	case proto != nil:
		d.Shape = "discovery"
		d.ProtocolName = str(proto, "name")
		d.Version = str(proto, "version")
		d.SupportedVersions = strings1(proto["supported_versions"])
	case acpDraft(m):
		d.Shape = "pre-spec"
	}
	if s := str(m, "protocol"); s != "" {
		d.LegacyMarker = fmt.Sprintf("`protocol` is the string %q", clip.To(s, maxQuoted))
	} else if v := str(m, "version"); v != "" && proto == nil {
		d.LegacyMarker = fmt.Sprintf("top-level `version` %q", clip.To(v, maxQuoted))
	}
	d.APIBaseURL = str(m, "api_base_url")
	if d.APIBaseURL != "" && base != nil {
		d.SameSite = weburl.SameSite(base, d.APIBaseURL)
	}
	d.Transports = strings1(m["transports"])
	if raw, ok := m["transports"]; ok && d.Transports == nil {
		d.Findings = append(d.Findings, "`transports` is "+kind(raw)+", not an array of names")
	}
	caps := sub(m, "capabilities")
	d.Services = strings1(caps["services"])
	for _, e := range list(caps["extensions"]) {
		var o map[string]json.RawMessage
		if json.Unmarshal(e, &o) == nil && str(o, "name") != "" {
			d.Extensions = append(d.Extensions, clip.To(str(o, "name"), maxQuoted))
		}
	}
	d.Endpoints = sortedKeys(sub(m, "endpoints"))

	need := func(ok bool, what string) {
		if !ok {
			d.Missing = append(d.Missing, what)
		}
	}
	need(d.ProtocolName == "acp", "`protocol.name` \"acp\"")
	need(d.Version != "", "`protocol.version`")
	need(d.APIBaseURL != "", "`api_base_url`")
	need(len(d.Transports) > 0, "`transports`")
	if d.ProtocolName != "" && d.ProtocolName != "acp" {
		d.Findings = append(d.Findings, fmt.Sprintf("`protocol.name` is %q; the RFC fixes it to \"acp\"", clip.To(d.ProtocolName, maxQuoted)))
	}
	if d.Version != "" && !ValidDate(d.Version) {
		d.Findings = append(d.Findings, fmt.Sprintf("`protocol.version` %q is not a YYYY-MM-DD API version", clip.To(d.Version, maxQuoted)))
	}
	if d.APIBaseURL != "" {
		if u, err := url.Parse(d.APIBaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			d.Findings = append(d.Findings, fmt.Sprintf("`api_base_url` %q is not an absolute http(s) URL", clip.To(d.APIBaseURL, maxQuoted)))
		} else if base != nil && !d.SameSite {
			d.Findings = append(d.Findings, fmt.Sprintf("`api_base_url` %q is on another site than the document", clip.To(d.APIBaseURL, maxQuoted)))
		}
	}
	if proto != nil && len(d.Services) == 0 {
		d.Findings = append(d.Findings, "`capabilities.services` is empty or missing")
	}
	return d, nil
}

func strings1(raw json.RawMessage) []string {
	var out []string
	for _, e := range list(raw) {
		var s string
		if json.Unmarshal(e, &s) == nil && s != "" {
			out = append(out, clip.To(s, maxQuoted))
		}
	}
	return out
}

// Valid reports a document meeting the discovery RFC's required members,
// with api_base_url on the document's own site.
func (d *ACPDiscovery) Valid() bool {
	return len(d.Missing) == 0 && d.SameSite
}

// GradeACP decides the `acp` signal from the response to docURL.
func GradeACP(docURL string, status int, contentType string, body []byte) signal.Verdict {
	if absent, why := signal.Absent(status, contentType, body); absent {
		return signal.NA("No ACP discovery document is published at " + ACPPath + ": " + why + ".")
	}
	base, _ := url.Parse(docURL)
	if base != nil && base.Host == "" {
		base = nil
	}
	v := gradeACP(body, base)
	v.FoundAt = docURL
	return v
}

const acpRec = `Publish the discovery document of the ACP discovery RFC: {"protocol": {"name": "acp", "version": "YYYY-MM-DD", "supported_versions": [...]}, "api_base_url": "https://<this site>/...", "transports": ["rest"], "capabilities": {"services": ["checkout"]}}.`

func gradeACP(body []byte, base *url.URL) signal.Verdict {
	d, err := ParseACP(body, base)
	if err != nil {
		return signal.Partial("A document is served at "+ACPPath+" but it is not an ACP discovery document: "+err.Error()+".", acpRec)
	}
	details := d.Details()
	if k := Sniff(body); d.Shape == "unknown" && k != KindUnknown {
		return signal.Partial("A JSON document is served at "+ACPPath+" but it is "+k.Describe()+".", acpRec, details...)
	}
	if len(d.Missing) > 0 {
		msg := "The ACP discovery document lacks " + strings.Join(d.Missing, ", ") + "."
		if d.Shape == "pre-spec" {
			msg = "The ACP document predates the discovery RFC and lacks " + strings.Join(d.Missing, ", ") + "."
		}
		return signal.Partial(msg, acpRec, details...)
	}
	if !d.SameSite {
		return signal.Partial(fmt.Sprintf("The ACP discovery document's `api_base_url` %q is not on this site.", clip.To(d.APIBaseURL, maxQuoted)),
			"Point `api_base_url` at the API this site serves, or publish the document on the platform that serves it.", details...)
	}
	return signal.Pass(fmt.Sprintf("ACP discovery document (version %s) with API %s over %s.", clip.To(d.Version, maxQuoted), clip.To(d.APIBaseURL, maxQuoted), strings.Join(d.Transports, ", ")), details...)
}

// Details lists the document's verdict-relevant members.
func (d *ACPDiscovery) Details() []string {
	var out []string
	if d.ProtocolName != "" || d.Version != "" {
		out = append(out, fmt.Sprintf("protocol %s %s", clip.To(d.ProtocolName, maxQuoted), clip.To(d.Version, maxQuoted)))
	}
	if d.LegacyMarker != "" {
		out = append(out, d.LegacyMarker)
	}
	if len(d.SupportedVersions) > 0 {
		out = append(out, "supported versions: "+clipJoin(d.SupportedVersions))
	}
	if d.APIBaseURL != "" {
		out = append(out, "api_base_url: "+clip.To(d.APIBaseURL, maxQuoted))
	}
	if len(d.Transports) > 0 {
		out = append(out, "transports: "+clipJoin(d.Transports))
	}
	if len(d.Services) > 0 {
		out = append(out, "services: "+clipJoin(d.Services))
	}
	if len(d.Extensions) > 0 {
		out = append(out, "extensions: "+clipJoin(d.Extensions))
	}
	if len(d.Endpoints) > 0 {
		out = append(out, "endpoints (pre-spec): "+clipJoin(d.Endpoints))
	}
	return append(out, d.Findings...)
}
