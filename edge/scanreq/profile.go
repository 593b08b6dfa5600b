package scanreq

// Profiles are the kinds of site a report can be judged as (profile= on
// /api/scan, /api/report and the report page; the MCP tools' profile),
// in the order reports list them. engine/report.Profiles is the same list;
// the origin's tests keep the two alike (the edge cannot import engine).
var Profiles = []string{"content", "docs", "api", "commerce", "application"}

// ValidProfile reports whether p names a profile exactly as Profiles
// spells it. The empty string is not a profile: a missing profile= keeps
// the one the site declared, else the detected one.
func ValidProfile(p string) bool {
	for _, x := range Profiles {
		if p == x {
			return true
		}
	}
	return false
}

// ProfileMessage is the refusal of an unknown profile: it never repeats
// the value asked for.
const ProfileMessage = "profile must be one of content, docs, api, commerce or application; leave it out to judge the site as the kind it declares, or else as detected."
