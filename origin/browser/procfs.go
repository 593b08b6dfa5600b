package browser

import (
	"bytes"
	"os"
	"strconv"
)

var pageSize = int64(os.Getpagesize())

// treeRSS is the resident memory of pid and all its descendants, read from
// /proc (0 where /proc is missing). Shared pages are counted once per
// process, so for Chromium (a process per renderer, GPU, network and zygote,
// all mapping one large binary) it over-states use about threefold; the
// memory budget uses treePSS.
func treeRSS(pid int) int64 {
	var total int64
	for _, p := range treePIDs(pid) {
		total += processRSS(p)
	}
	return total
}

// treePIDs is pid and its descendants.
func treePIDs(pid int) []int {
	if pid <= 0 {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid := parentPID(child); ppid > 0 {
			children[ppid] = append(children[ppid], child)
		}
	}
	var out []int
	seen := map[int]bool{}
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		queue = append(queue, children[p]...)
	}
	return out
}

// parentPID reads the fourth field of /proc/pid/stat; the second (the
// command name, in parentheses) may itself contain spaces and parentheses.
func parentPID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	return ppid
}

// processRSS is the resident set of one process, from /proc/pid/statm.
func processRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(string(f[1]), 10, 64)
	return pages * pageSize
}

// treePSS is the proportional set size of pid's process tree: shared pages
// are divided among the processes that map them, so the sum is what the tree
// really costs (treeRSS counts Chromium's shared binary once per process).
func treePSS(pid int) int64 {
	var total int64
	for _, p := range treePIDs(pid) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/smaps_rollup")
		if err != nil {
			total += processRSS(p) // no smaps_rollup (old kernel): over-state
			continue
		}
		for line := range bytes.SplitSeq(b, []byte{'\n'}) {
			if rest, ok := bytes.CutPrefix(line, []byte("Pss:")); ok {
				f := bytes.Fields(rest)
				if len(f) > 0 {
					kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
					total += kb << 10
				}
				break
			}
		}
	}
	return total
}
