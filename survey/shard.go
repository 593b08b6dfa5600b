package survey

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is the share of a list one machine surveys: the entries whose
// site (Entry.Site: the registrable domain, or host:port for an IP address
// or localhost) hashes to Index modulo Count. The zero value (and
// 0/1) is the whole list.
type Shard struct {
	Index, Count int
}

// MaxShards bounds --shard's N.
const MaxShards = 1 << 16

// ParseShard reads "I/N" with 0 ≤ I < N (Kubernetes' JOB_COMPLETION_INDEX
// counts from 0 too).
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	switch {
	case ok && err1 == nil && err2 == nil && count >= 1 && count <= MaxShards && index == count:
		// N/N: shards count from 0, but a split counted from 1 (GitLab's
		// CI_NODE_INDEX, a matrix of 1…N) ends at N/N. Read as 0/N, both
		// ways of counting cover the whole list: 1/N…(N-1)/N are the same
		// shards either way, and N/N is the one left, 0/N.
		return Shard{Index: 0, Count: count}, nil
	case ok && err1 == nil && err2 == nil && count >= 1 && count <= MaxShards && (index < 0 || index > count):
		which := fmt.Sprintf("the %d shards of this split are %s", count, shardNames(count))
		if count == 1 {
			which = "the one shard of a list not split is 0/1"
		}
		return Shard{}, fmt.Errorf("%q is not a shard: shards count from 0, so %s (N/N is read as 0/N, for splits counted from 1)", s, which)
	case !ok || err1 != nil || err2 != nil || count < 1 || count > MaxShards || index < 0 || index >= count:
		return Shard{}, fmt.Errorf("%q is not a shard: write I/N with 0 ≤ I < N ≤ %d, e.g. 0/4 for the first of four machines", s, MaxShards)
	}
	return Shard{Index: index, Count: count}, nil
}

// shardNames names the shards of a split in n > 1: "0/2 and 1/2",
// "0/3, 1/3 and 2/3", "0/16, 1/16, … 15/16".
func shardNames(n int) string {
	if n <= 4 {
		names := make([]string, n)
		for i := range names {
			names[i] = Shard{i, n}.String()
		}
		return strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return fmt.Sprintf("0/%d, 1/%d, … %d/%d", n, n, n-1, n)
}

func (s Shard) norm() Shard {
	if s.Count < 1 {
		return Shard{0, 1}
	}
	return s
}

// String is "I/N".
func (s Shard) String() string {
	s = s.norm()
	return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count)
}

// Whole reports the shard that is the whole list.
func (s Shard) Whole() bool { return s.norm().Count == 1 }

// Holds reports whether key (an entry's site, or an invalid line's text)
// belongs to this shard.
func (s Shard) Holds(key string) bool {
	s = s.norm()
	return ShardOf(key, s.Count) == s.Index
}

// ShardOf is the shard of key among n: FNV-1a (64-bit) of its bytes modulo
// n. It is fixed by the key's bytes alone, so every machine and every Go
// version draws the same partition.
func ShardOf(key string, n int) int {
	if n <= 1 {
		return 0
	}
	return int(fnv1a(key) % uint64(n))
}

func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// seenFilter remembers the targets already listed, as 64-bit hashes in an
// open-addressing table of 8-byte slots kept between 3/8 and 3/4 full:
// 10.7 to 21.3 bytes per site, the only state a survey keeps per site
// (about 4 MiB for a million sites). A collision would report a distinct
// site as a duplicate; among a million sites its odds are about 3 in 100
// million.
type seenFilter struct {
	slots []uint64 // 0 is an empty slot
	n     int
}

// add reports whether target is new, and remembers it.
func (f *seenFilter) add(target string) bool {
	h := mix(fnv1a(target))
	if h == 0 {
		h = 1
	}
	if 4*(f.n+1) > 3*len(f.slots) {
		f.grow()
	}
	mask := uint64(len(f.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch f.slots[i] {
		case h:
			return false
		case 0:
			f.slots[i] = h
			f.n++
			return true
		}
	}
}

func (f *seenFilter) grow() {
	old := f.slots
	f.slots = make([]uint64, max(2*len(old), 1024))
	mask := uint64(len(f.slots) - 1)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := h & mask
		for f.slots[i] != 0 {
			i = (i + 1) & mask
		}
		f.slots[i] = h
	}
}

// mix is SplitMix64's finaliser: FNV-1a alone leaves the high bits of
// similar short strings close together.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
