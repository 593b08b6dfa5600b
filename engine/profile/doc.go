// Package profile decides which kind of site a report judges (content,
// docs, api, commerce or application) and which checks do not apply to
// that kind. Detect reads what a scan gathered; Apply turns a result's
// detection, the site's declaration and any caller's choice into the
// report's profile block: the 48 checks' score with the checks that do not
// apply counted as not applicable. checks[] and score are never changed,
// so a report can be re-judged as another profile without a new scan.
package profile
