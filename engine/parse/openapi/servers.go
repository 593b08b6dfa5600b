package openapi

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentready/agentready/engine/clip"
)

// MaxListed caps the unusable servers and the media types of one response
// kept from a description.
const MaxListed = 20

// Servers are the servers a description declares, read the way a client
// reaches them. It is what every consumer of a description's servers uses:
// the deep scan's API probes try them, Spec.ServerURL is the first.
type Servers struct {
	Declared int // servers declared (Swagger 2.0: one, for a host)
	// URLs are the declared servers a client can request: resolved against
	// the description's URL, variables filled with their defaults, absolute
	// http(s) with a host and no credentials, query and fragment dropped,
	// deduplicated, in order.
	URLs []string
	// Unusable are declared servers that cannot be requested (a variable
	// without a default, another scheme), as written: at most MaxListed,
	// each at most 200 characters.
	Unusable []string
	// Implicit is the base when no server is declared: "/" of the
	// description's URL (Swagger 2.0: its scheme and host with basePath);
	// "" without a base URL.
	Implicit string
	// first is the first declared server as written, resolved against the
	// description's URL (variables left in place): Spec.ServerURL.
	first string
}

var templateVar = regexp.MustCompile(`\{[^{}]*\}`)

// readServers reads the servers of a decoded description (OpenAPI 3.x
// servers[], Swagger 2.0 host, basePath and schemes). base is the
// description's URL; it may be nil.
func readServers(root map[string]any, swagger2 bool, base *url.URL) Servers {
	var s Servers
	seen := map[string]bool{}
	add := func(raw, resolved string) {
		if resolved == "" {
			if len(s.Unusable) < MaxListed {
				s.Unusable = append(s.Unusable, clip.To(raw, 200))
			}
			return
		}
		if !seen[resolved] {
			seen[resolved] = true
			s.URLs = append(s.URLs, resolved)
		}
	}
	if swagger2 {
		basePath := str(root["basePath"])
		if basePath != "" && !strings.HasPrefix(basePath, "/") {
			basePath = "/" + basePath
		}
		// Swagger 2.0: without schemes, the scheme the description itself
		// was fetched with; with several, https when it is one of them.
		scheme := "https"
		if base != nil && base.Scheme != "" {
			scheme = base.Scheme
		}
		if schemes, _ := root["schemes"].([]any); len(schemes) > 0 {
			scheme = str(schemes[0])
			for _, sc := range schemes {
				if str(sc) == "https" {
					scheme = "https"
				}
			}
		}
		host := str(root["host"])
		switch {
		case host != "":
			s.Declared = 1
			s.first = scheme + "://" + host + basePath
			add(host, absolute(s.first, nil))
		case basePath != "":
			s.first = resolve(basePath, base)
		}
		if base != nil {
			s.Implicit = absolute(scheme+"://"+base.Host+basePath, nil)
		}
		return s
	}
	servers, _ := root["servers"].([]any)
	s.Declared = len(servers)
	for i, sv := range servers {
		so, _ := sv.(map[string]any)
		raw := str(so["url"])
		if i == 0 {
			s.first = resolve(raw, base)
		}
		add(raw, absolute(substitute(raw, obj(so["variables"])), base))
	}
	if base != nil {
		s.Implicit = absolute("/", base)
	}
	return s
}

// substitute fills server variables with their defaults; a variable
// without one is left in place (and makes the URL unusable).
func substitute(raw string, vars map[string]any) string {
	return templateVar.ReplaceAllStringFunc(raw, func(m string) string {
		if def := str(obj(vars[m[1:len(m)-1]])["default"]); def != "" {
			return def
		}
		return m
	})
}

// absolute resolves raw against base and keeps it only as an absolute
// http(s) URL with a host, no credentials and no template left.
func absolute(raw string, base *url.URL) string {
	if raw == "" || strings.ContainsAny(raw, "{} \t\r\n") {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	u.Fragment, u.RawQuery = "", ""
	return u.String()
}

// resolve is raw resolved against base, as written otherwise ("" when it
// does not parse).
func resolve(raw string, base *url.URL) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	return u.String()
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

// str is a scalar as YAML or JSON gave it (YAML numbers stay numbers).
func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	}
	return ""
}
