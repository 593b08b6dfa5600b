package report

// Signal groups.
const (
	GroupIdentity = "identity"
	GroupCommerce = "commerce"
)

// Signal is one identity or commerce signal: the fields of a check result
// with a group in place of level and category. Signals follow opt-in
// standards, so their status is only pass, partial or na (an absent document
// is na, never a failure), and nothing here feeds the score, the levels or
// the badge.
type Signal struct {
	ID             string  `json:"id"`
	Name           string  `json:"name"`
	Group          string  `json:"group"` // GroupIdentity or GroupCommerce
	Passed         bool    `json:"passed"`
	Status         Status  `json:"status"` // pass, partial or na
	Message        string  `json:"message"`
	Recommendation string  `json:"recommendation"`
	Details        Details `json:"details"`
	FoundAt        string  `json:"foundAt"`
}
