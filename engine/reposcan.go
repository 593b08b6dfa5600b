package engine

import (
	"context"
	"path/filepath"
	"time"

	"github.com/agentready/agentready/engine/checks"
	"github.com/agentready/agentready/engine/gather"
	"github.com/agentready/agentready/engine/repo"
	"github.com/agentready/agentready/engine/score"
)

// ScanRepo runs the ten level-5 checks over the codebase at root: the walk
// (package repo) is the gatherer, its Findings the one artifact, and the
// checks are judged like the web checks. It lives here rather than in repo
// because checks import repo for the artifact's type.
func ScanRepo(ctx context.Context, root string, opts repo.Options) (*repo.Result, error) {
	found, stats, err := repo.Walk(ctx, root, opts)
	if err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	abs, _ := filepath.Abs(root)
	res := &repo.Result{Path: abs, Timestamp: now().UTC().Truncate(time.Second), Stats: stats}
	set := gather.NewSet(gather.Site{})
	gather.Put(set, repo.Evidence, found)
	for _, c := range checks.Repo() {
		res.Checks = append(res.Checks, c.Judge(set))
	}
	res.Levels = score.Levels(res.Checks)
	return res, nil
}
