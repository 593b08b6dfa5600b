// Package weburl turns what a user typed into the origin a scan targets, and
// decides whether two URLs belong to the same site (registrable domain).
package weburl
