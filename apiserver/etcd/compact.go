package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultCompactionInterval is kube-apiserver's default compaction interval.
const DefaultCompactionInterval = 5 * time.Minute

// compactRevKey is the key apiservers sharing an etcd use to agree on who
// compacts: its value is the last revision compacted, its version a logical
// compaction clock. Kubernetes uses the same key name.
const compactRevKey = "compact_rev_key"

// RunCompactor compacts etcd's history every interval until ctx ends. Each
// tick compacts to the revision observed at the previous tick, so about one
// interval of history stays available for watches that resume and for paged
// lists. interval 0 disables compaction.
//
// Several apiservers on one etcd coordinate as kube-apiserver's do: a tick
// only compacts if it wins a compare-and-swap on the version of
// compact_rev_key against the version it saw last; a loser adopts the
// winner's version and tries again next tick. So the cluster compacts about
// once per interval (at most every 2 intervals if an apiserver fails).
func (b *Backend) RunCompactor(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	var version, rev int64
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.done:
			return
		case <-t.C:
		}
		var compacted int64
		var err error
		version, rev, compacted, err = compact(ctx, b.client, version, rev)
		switch {
		case err != nil && ctx.Err() == nil:
			b.log.Warn("etcd compaction failed", "err", err)
		case compacted > 0:
			b.log.Debug("etcd compacted", "revision", compacted)
		}
	}
}

// compact runs one compaction round. version is the compaction clock this
// apiserver last saw and rev the store revision at its previous round. It
// returns the new clock, the current store revision (the next round's
// target) and the revision compacted (0 if none).
func compact(ctx context.Context, c *clientv3.Client, version, rev int64) (newVersion, curRev, compacted int64, err error) {
	resp, err := c.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(compactRevKey), "=", version)).
		Then(clientv3.OpPut(compactRevKey, strconv.FormatInt(rev, 10))).
		Else(clientv3.OpGet(compactRevKey)).
		Commit()
	if err != nil {
		return version, rev, 0, fmt.Errorf("compare-and-swap %s: %w", compactRevKey, err)
	}
	curRev = resp.Header.Revision
	if !resp.Succeeded {
		// Another apiserver compacted (or bootstrapped the clock): follow it.
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return 0, curRev, 0, nil
		}
		return kvs[0].Version, curRev, 0, nil
	}
	newVersion = version + 1
	if rev == 0 {
		// First round: nothing observed yet to compact to.
		return newVersion, curRev, 0, nil
	}
	if _, err := c.Compact(ctx, rev); err != nil {
		if errors.Is(err, rpctypes.ErrCompacted) {
			// Someone (an operator, etcd's own auto-compaction) got further.
			return newVersion, curRev, 0, nil
		}
		return newVersion, curRev, 0, fmt.Errorf("compact to revision %d: %w", rev, err)
	}
	return newVersion, curRev, rev, nil
}
