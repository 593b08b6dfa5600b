package main

import (
	"slices"
	"testing"
)

// The list is what the test files hold: a package's targets, and none of
// a package without any (the Makefile's hand-kept list missed eight).
func TestListReadsTheTestFiles(t *testing.T) {
	got, err := list([]string{"../../../engine/parse/robots", "../../../survey", "../../../apierr"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range got {
		names = append(names, tg.pkg+":"+tg.name)
	}
	slices.Sort(names)
	want := []string{
		"github.com/agentready/agentready/engine/parse/robots:FuzzParse",
		"github.com/agentready/agentready/survey:FuzzParseList",
		"github.com/agentready/agentready/survey:FuzzParseQueueEntry",
		"github.com/agentready/agentready/survey:FuzzParseQueueMeta",
	}
	if !slices.Equal(names, want) {
		t.Errorf("list = %v, want %v", names, want)
	}
}
