// Package clip shortens text a site wrote (names, values, error strings)
// before it reaches a message or a detail: cut by runes, never inside a UTF-8
// sequence, so a quoted value stays one readable line (To makes control
// characters spaces; Quote escapes them inside double quotes). Every engine
// package that quotes a site's text uses it instead of its own
// slice-and-ellipsis.
package clip
