package admission

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/quota"
)

// QuotaAccess reads and charges a namespace's ResourceQuotas.
type QuotaAccess interface {
	// ListQuotas lists a namespace's quotas; live reads storage rather
	// than a cache.
	ListQuotas(ctx context.Context, namespace string, live bool) ([]*api.ResourceQuota, error)
	// UpdateQuotaStatus writes q's status, failing with a Conflict when q's
	// resourceVersion is no longer current; it returns the quota written.
	UpdateQuotaStatus(ctx context.Context, q *api.ResourceQuota) (*api.ResourceQuota, error)
}

// quotaRetries bounds the rounds of re-reading quotas that changed under
// a charge.
const quotaRetries = 5

// ResourceQuota is Kubernetes' ResourceQuota admission plugin: a write
// that would take a namespace's usage past a quota's status.hard is
// refused (403 "exceeded quota: ..."), a pod that does not state the cpu
// or memory a quota restricts is refused ("failed quota: ..."), and an
// admitted write is charged to every quota that covers it at once, by a
// status update conditional on the quota's resourceVersion (re-read and
// retried when another write charged it first), so concurrent writes
// cannot together exceed it. Dry runs are checked but not charged. The
// resourcequota controller recomputes usage from storage, releasing what
// deletions free and what a refused-after-charge write took.
type ResourceQuota struct {
	Quotas QuotaAccess
	// Now is the clock of pods' deletion grace periods (time.Now if nil).
	Now func() time.Time

	mu sync.Mutex
	// locks serialises the charges of one namespace (a one-slot channel,
	// so waiting for it ends with the request).
	locks map[string]*nsLock
	// written is the last version of each quota this plugin wrote, until
	// the watch cache has it: the next charge starts from it rather than
	// from a cache that lags its own write.
	written map[string]*api.ResourceQuota
}

type nsLock struct {
	ch   chan struct{}
	refs int
}

var _ Validator = (*ResourceQuota)(nil)

// Name implements Plugin.
func (*ResourceQuota) Name() string { return "ResourceQuota" }

// Handles implements Plugin.
func (*ResourceQuota) Handles(op Operation) bool { return op == Create || op == Update }

// lock takes namespace ns's lock, or gives up when ctx ends; release
// returns it.
func (p *ResourceQuota) lock(ctx context.Context, ns string) (release func(), err error) {
	p.mu.Lock()
	if p.locks == nil {
		p.locks = map[string]*nsLock{}
	}
	l := p.locks[ns]
	if l == nil {
		l = &nsLock{ch: make(chan struct{}, 1)}
		p.locks[ns] = l
	}
	l.refs++
	p.mu.Unlock()
	done := func() {
		p.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(p.locks, ns)
		}
		p.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; done() }, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}

// freshest replaces in quotas (all of namespace ns) the ones this plugin
// wrote a newer version of, and forgets written versions the list has
// caught up with or no longer has.
func (p *ResourceQuota) freshest(ns string, quotas []*api.ResourceQuota) []*api.ResourceQuota {
	p.mu.Lock()
	defer p.mu.Unlock()
	listed := map[string]bool{}
	for _, q := range quotas {
		listed[q.Name] = true
	}
	for key, w := range p.written {
		if w.Namespace == ns && !listed[w.Name] {
			delete(p.written, key)
		}
	}
	out := make([]*api.ResourceQuota, len(quotas))
	for i, q := range quotas {
		out[i] = q
		key := q.Namespace + "/" + q.Name
		w, ok := p.written[key]
		if !ok {
			continue
		}
		if w.UID == q.UID && rvNewer(w.ResourceVersion, q.ResourceVersion) {
			out[i] = w
		} else {
			delete(p.written, key)
		}
	}
	return out
}

func (p *ResourceQuota) remember(q *api.ResourceQuota) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.written == nil {
		p.written = map[string]*api.ResourceQuota{}
	}
	p.written[q.Namespace+"/"+q.Name] = q
}

// rvNewer compares two etcd-revision resourceVersions.
func rvNewer(a, b string) bool {
	x, err1 := strconv.ParseInt(a, 10, 64)
	y, err2 := strconv.ParseInt(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}

// Validate implements Validator.
func (p *ResourceQuota) Validate(ctx context.Context, a *Attributes) error {
	if a.Namespace == "" || (a.Resource.Group == "" && a.Resource.Resource == "namespaces") {
		return nil
	}
	gr := quota.GroupResource{Group: a.Resource.Group, Resource: a.Resource.Resource}
	if !quota.Tracked(gr, string(a.Operation), a.Subresource, a.Object, a.OldObject) {
		return nil
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	release, err := p.lock(ctx, a.Namespace)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("resource quota evaluation timed out"))
	}
	defer release()
	charged := map[string]bool{}
	for attempt := range quotaRetries {
		if ctx.Err() != nil {
			break
		}
		all, err := p.Quotas.ListQuotas(ctx, a.Namespace, attempt > 0)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("list resource quotas: %w", err))
		}
		all = p.freshest(a.Namespace, all)
		var quotas []*api.ResourceQuota
		for _, q := range all {
			if !charged[q.Name] {
				quotas = append(quotas, q)
			}
		}
		if len(quotas) == 0 {
			return nil
		}
		updated, err := p.check(quotas, gr, a, now())
		if err != nil || a.DryRun || len(updated) == 0 {
			return err
		}
		conflict := false
		for _, q := range updated {
			switch w, err := p.Quotas.UpdateQuotaStatus(ctx, q); {
			case err == nil:
				charged[q.Name] = true
				p.remember(w)
			case apierrors.IsConflict(err):
				conflict = true
			case apierrors.IsNotFound(err):
				// Deleted meanwhile: nothing to charge.
			default:
				return apierrors.NewInternalError(fmt.Errorf("update resource quota %s: %w", q.Name, err))
			}
		}
		if !conflict {
			return nil
		}
	}
	return apierrors.NewInternalError(fmt.Errorf("resource quota evaluation timed out"))
}

// check is Kubernetes' CheckRequest: it refuses a write some quota does
// not allow, and returns copies of the quotas it charges with their new
// usage.
func (p *ResourceQuota) check(quotas []*api.ResourceQuota, gr quota.GroupResource, a *Attributes, now time.Time) ([]*api.ResourceQuota, error) {
	forbidden := func(err error) error { return NewForbidden(a, err) }
	var interesting []*api.ResourceQuota
	for _, q := range quotas {
		match, err := quota.Matches(q, gr, a.Object)
		if err != nil {
			return nil, forbidden(fmt.Errorf("error matching scopes of quota %s, err: %v", q.Name, err))
		}
		if !match {
			continue
		}
		restricted := quota.MatchingResources(gr, quota.ResourceNames(q.Status.Hard))
		if err := quota.Constraints(gr, restricted, a.Object); err != nil {
			return nil, forbidden(fmt.Errorf("failed quota: %s: %v", q.Name, err))
		}
		for _, r := range restricted {
			if _, ok := q.Status.Used[r]; !ok {
				return nil, forbidden(fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, quota.NamesString(restricted)))
			}
		}
		interesting = append(interesting, q)
	}
	if len(interesting) == 0 {
		return nil, nil
	}
	usage := quota.Usage(gr, a.Object, now)
	if neg := quota.Negative(usage); len(neg) > 0 {
		return nil, forbidden(fmt.Errorf("quota usage is negative for resource(s): %s", quota.NamesString(neg)))
	}
	delta := map[string]api.ResourceList{}
	for _, q := range interesting {
		delta[q.Name] = usage
	}
	if a.Operation == Update {
		if a.OldObject == nil {
			return nil, forbidden(fmt.Errorf("unable to get previous usage since prior version of object was not found"))
		}
		prev := quota.SubtractNonNegative(usage, quota.Usage(gr, a.OldObject, now))
		for _, q := range interesting {
			// What the old object already consumed of a quota that covered
			// it is not charged again.
			if was, err := quota.Matches(q, gr, a.OldObject); err == nil && was {
				delta[q.Name] = prev
			}
		}
	}
	var out []*api.ResourceQuota
	for _, q := range interesting {
		d := quota.RemoveZeros(delta[q.Name])
		if len(d) == 0 {
			continue
		}
		requested := quota.Mask(d, quota.ResourceNames(q.Status.Hard))
		if len(requested) == 0 {
			continue
		}
		used := quota.Add(q.Status.Used, requested)
		if a.Subresource != "status" {
			if ok, exceeded := quota.LessThanOrEqual(quota.Mask(used, quota.ResourceNames(requested)), q.Status.Hard); !ok {
				return nil, forbidden(fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
					quota.String(quota.Mask(requested, exceeded)), quota.String(quota.Mask(q.Status.Used, exceeded)),
					quota.String(quota.Mask(q.Status.Hard, exceeded))))
			}
		}
		c := api.DeepCopy(q)
		c.Status.Used = used
		out = append(out, c)
	}
	return out, nil
}
