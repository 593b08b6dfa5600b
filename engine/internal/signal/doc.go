// Package signal holds what the identity and commerce signals share: the
// verdict a parser hands to the report (pass, partial or na, never fail: the
// standards are opt-in, so an absent document is not a defect), the rule that
// decides a well-known document is absent (404, HTML soft 404, empty body),
// and the list of library phrases that must never reach a user.
//
// Signals sit beside the 48 scored checks; nothing here feeds the score.
package signal
