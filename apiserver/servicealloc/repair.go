package servicealloc

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/minik8s/minik8s/apiserver/storage"
)

// Held is what one existing Service holds.
type Held struct {
	Owner
	IPs   []string
	Ports []int
}

// RepairResult counts what a repair pass changed.
type RepairResult struct {
	// Freed are allocations whose Service no longer exists (an apiserver
	// that crashed between allocating and storing the Service leaves one).
	Freed int
	// Restored are values a Service holds that had no allocation key.
	Restored int
}

// Repair makes the allocation keys agree with the Services that exist, as
// Kubernetes' repair controllers do. Keys younger than grace are left
// alone: their Service may still be on its way to etcd.
func (a *Allocator) Repair(ctx context.Context, services []Held, grace time.Duration) (RepairResult, error) {
	var res RepairResult
	want := map[string]string{} // key -> owner uid
	for _, h := range services {
		for _, ip := range h.IPs {
			want[ipPrefix+ip] = h.UID
		}
		for _, p := range h.Ports {
			want[portPrefix+strconv.Itoa(p)] = h.UID
		}
	}
	now := a.now()
	for _, prefix := range []string{ipPrefix, portPrefix} {
		list, err := a.st.List(ctx, prefix, storage.ListOptions{})
		if err != nil {
			return res, err
		}
		for _, kv := range list.KVs {
			r, ok := decode(kv.Value)
			if uid, wanted := want[kv.Key]; wanted && ok && uid == r.UID {
				continue
			}
			if ok && now.Sub(r.Allocated) < grace {
				continue
			}
			if _, _, err := a.st.Delete(ctx, kv.Key, kv.ModRevision); err == nil {
				res.Freed++
			}
		}
	}
	for _, h := range services {
		keys := make([]string, 0, len(h.IPs)+len(h.Ports))
		for _, ip := range h.IPs {
			keys = append(keys, ipPrefix+ip)
		}
		for _, p := range h.Ports {
			keys = append(keys, portPrefix+strconv.Itoa(p))
		}
		for _, k := range keys {
			created, err := a.claim(ctx, k, h.Owner, false)
			if err != nil && !errors.Is(err, storage.ErrKeyExists) {
				return res, err
			}
			if created {
				res.Restored++
			}
		}
	}
	return res, nil
}
