// Package score turns check results into level progress, the current level
// (0–3) and the score summary, by the rules of docs/check-rules.md, "Scoring".
package score
