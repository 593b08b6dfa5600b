package survey

import "io"

// Item is an entry of this shard to scan, with the list line naming it.
type Item struct {
	Line int
	Entry
}

// Skip is a line the survey does not scan, as DIR/skipped.ndjson lists it.
type Skip struct {
	Line    int    `json:"line"`
	Reason  string `json:"reason"` // SkipInvalid or SkipDuplicate
	Entry   string `json:"entry"`  // the line as written (clipped), or the duplicate's target
	Message string `json:"message,omitempty"`
}

// Reasons a line is skipped.
const (
	SkipInvalid   = "invalid"
	SkipDuplicate = "duplicate"
)

// source yields this shard's items and skips in list order: duplicates go
// with their site's shard, an invalid line with the shard its text hashes
// to, so that the shards' skips add up to the whole list's.
type source struct {
	lr    *ListReader
	seen  *seenFilter
	shard Shard
	// elsewhere counts the entries (lines naming a site, duplicates
	// included) that belong to other shards.
	elsewhere int
}

func newSource(r io.Reader, shard Shard) *source {
	return &source{lr: NewListReader(r), seen: &seenFilter{}, shard: shard}
}

// next returns the next item or skip of the shard, or io.EOF.
func (s *source) next() (*Item, *Skip, error) {
	for {
		ln, err := s.lr.Next()
		if err != nil {
			return nil, nil, err
		}
		switch {
		case ln.Ignored:
			continue
		case ln.Invalid != "":
			if s.shard.Holds(ln.Text) {
				return nil, &Skip{Line: ln.Number, Reason: SkipInvalid, Entry: ln.Text, Message: ln.Invalid}, nil
			}
			continue
		case !s.shard.Holds(ln.Entry.Site):
			s.elsewhere++
			continue
		case !s.seen.add(ln.Entry.URL):
			return nil, &Skip{Line: ln.Number, Reason: SkipDuplicate, Entry: ln.Entry.URL, Message: "an earlier line names the same site"}, nil
		}
		return &Item{Line: ln.Number, Entry: ln.Entry}, nil, nil
	}
}
