package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/cacher"
	"github.com/minik8s/minik8s/apiserver/registry"
)

// quotaAccess is the ResourceQuota admission plugin's view of the
// resourcequotas store: lists from the watch cache (live: a consistent
// read), status writes conditional on the resourceVersion.
type quotaAccess struct{ store *registry.Store }

var _ admission.QuotaAccess = (*quotaAccess)(nil)

func (q *quotaAccess) ListQuotas(ctx context.Context, ns string, live bool) ([]*api.ResourceQuota, error) {
	if q.store == nil {
		return nil, nil
	}
	if !live {
		return cachedValues[api.ResourceQuota](q.store, cacher.Predicate{Namespace: ns}), nil
	}
	res, err := q.store.List(ctx, ns, registry.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*api.ResourceQuota, 0, len(res.Items))
	for _, it := range res.Items {
		rq, ok := it.Object.(*api.ResourceQuota)
		if !ok {
			return nil, fmt.Errorf("resourcequotas store returned %T", it.Object)
		}
		out = append(out, rq)
	}
	return out, nil
}

func (q *quotaAccess) UpdateQuotaStatus(ctx context.Context, rq *api.ResourceQuota) (*api.ResourceQuota, error) {
	out, _, err := q.store.Update(ctx, rq.Namespace, rq.Name, rq, registry.WriteOptions{Subresource: "status"})
	if err != nil {
		return nil, err
	}
	w, ok := out.(*api.ResourceQuota)
	if !ok {
		return nil, fmt.Errorf("resourcequotas store returned %T", out)
	}
	return w, nil
}

// limitRanges is the LimitRanger admission plugin's view of the
// limitranges watch cache. A namespace the cache shows without LimitRanges
// is read once more from storage, as kube's LimitRanger does (its live
// lookup): a LimitRange created a moment before a pod may not have reached
// the watch cache yet, and the pod must still get its defaults. The live
// answer is kept for liveTTL, so a namespace without LimitRanges costs one
// storage read per liveTTL, not one per pod.
type limitRanges struct {
	store *registry.Store
	now   func() time.Time

	mu   sync.Mutex
	live map[string]liveLimitRanges
}

// liveTTL and liveMax are kube's LimitRanger live-lookup TTL and size.
const (
	liveTTL = 30 * time.Second
	liveMax = 10000
)

type liveLimitRanges struct {
	items  []*api.LimitRange
	expiry time.Time
}

var _ admission.LimitRangeLister = (*limitRanges)(nil)

func (l *limitRanges) ListLimitRanges(ctx context.Context, ns string) ([]*api.LimitRange, error) {
	if l.store == nil {
		return nil, nil
	}
	if cached := cachedValues[api.LimitRange](l.store, cacher.Predicate{Namespace: ns}); len(cached) > 0 {
		return cached, nil
	}
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	l.mu.Lock()
	e, ok := l.live[ns]
	l.mu.Unlock()
	if ok && now().Before(e.expiry) {
		return e.items, nil
	}
	res, err := l.store.List(ctx, ns, registry.ListOptions{})
	if err != nil {
		return nil, err
	}
	items := make([]*api.LimitRange, 0, len(res.Items))
	for _, it := range res.Items {
		lr, ok := it.Object.(*api.LimitRange)
		if !ok {
			return nil, fmt.Errorf("limitranges store returned %T", it.Object)
		}
		items = append(items, lr)
	}
	l.mu.Lock()
	if l.live == nil || len(l.live) >= liveMax {
		l.live = map[string]liveLimitRanges{} // bounded: start over rather than grow
	}
	l.live[ns] = liveLimitRanges{items: items, expiry: now().Add(liveTTL)}
	l.mu.Unlock()
	return items, nil
}
