package app

import (
	"context"
	"fmt"

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
// limitranges watch cache.
type limitRanges struct{ store *registry.Store }

var _ admission.LimitRangeLister = (*limitRanges)(nil)

func (l *limitRanges) ListLimitRanges(_ context.Context, ns string) ([]*api.LimitRange, error) {
	if l.store == nil {
		return nil, nil
	}
	return cachedValues[api.LimitRange](l.store, cacher.Predicate{Namespace: ns}), nil
}
