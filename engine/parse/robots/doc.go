// Package robots parses robots.txt per RFC 9309 and answers, for a product
// token, which rule governs a path.
//
// It is written by hand because the checks need more than an allow/deny answer:
// which groups name a token explicitly (1.4, 4.2), the rule that decided (for
// details), and the Content-Signal records of each group (1.15). The common Go
// library matches user-agents by substring and has no notion of per-group
// extension records, so it cannot answer those questions.
package robots
