package aggregator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/registry"
)

// GroupVersion is one group/version the apiserver serves itself.
type GroupVersion struct{ Group, Version string }

// AutoManagedLabel marks the APIServices the apiserver keeps itself
// (kube-aggregator's autoregister controller): "onstart" for its own
// group versions, registered on start, "true" for those of CRDs, kept
// while a CRD serves them.
const AutoManagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// RegisterLocal creates the Local APIService of each served group/version
// kube-apiserver has a priority for (v1., v1.apps, ...), and corrects the
// spec of one that exists with another; the aggregator's own group is
// always among them.
func (a *Aggregator) RegisterLocal(ctx context.Context, served []GroupVersion) error {
	for _, g := range served {
		p, ok := priorities[gv{g.Group, g.Version}]
		if !ok {
			continue
		}
		want := api.APIService{ObjectMeta: api.ObjectMeta{Name: g.Version + "." + g.Group, Labels: map[string]string{AutoManagedLabel: "onstart"}},
			Spec: api.APIServiceSpec{Group: g.Group, Version: g.Version, GroupPriorityMinimum: p.group, VersionPriority: p.version}}
		if err := a.ensure(ctx, &want, true); err != nil {
			return err
		}
	}
	return nil
}

// ensure creates want, or makes an existing APIService of its name say
// want's spec and automanaged label; one that is not automanaged is left
// alone unless force (the apiserver's own group versions are its own).
func (a *Aggregator) ensure(ctx context.Context, want *api.APIService, force bool) error {
	cur, found := a.get(want.Name)
	if !found {
		_, err := a.cfg.APIServices.Create(ctx, "", want, registry.WriteOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("register APIService %s: %w", want.Name, err)
		}
		return nil
	}
	managed := cur.Labels[AutoManagedLabel]
	if managed == "" && !force {
		return nil
	}
	if managed == want.Labels[AutoManagedLabel] && cur.Spec.Service == nil &&
		cur.Spec.GroupPriorityMinimum == want.Spec.GroupPriorityMinimum && cur.Spec.VersionPriority == want.Spec.VersionPriority {
		return nil
	}
	upd := api.DeepCopy(cur)
	upd.Spec = want.Spec
	if upd.Labels == nil {
		upd.Labels = map[string]string{}
	}
	upd.Labels[AutoManagedLabel] = want.Labels[AutoManagedLabel]
	if _, _, err := a.cfg.APIServices.Update(ctx, "", upd.Name, upd, registry.WriteOptions{}); err != nil {
		return fmt.Errorf("register APIService %s: %w", want.Name, err)
	}
	return nil
}

// crdPriority is the priority of a CRD's APIService (kube's crdregistration
// controller): below every built-in group, versions in Kubernetes order.
var crdPriority = priority{group: 1000, version: 100}

// syncCRDs keeps an APIService for each group version a CRD serves, as
// kube's crd-autoregister does (whether the CRD is established or not),
// and deletes the CRD APIServices no CRD serves any more.
func (a *Aggregator) syncCRDs(ctx context.Context, svcs []*api.APIService) error {
	if a.cfg.CRDs == nil {
		return nil
	}
	res, err := a.cfg.CRDs.List(ctx, "", registry.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return fmt.Errorf("list CRDs: %w", err)
	}
	want := map[string]GroupVersion{}
	for _, it := range res.Items {
		crd := it.Object.(*api.CustomResourceDefinition)
		for _, v := range crd.Spec.Versions {
			if v.Served {
				want[v.Name+"."+crd.Spec.Group] = GroupVersion{Group: crd.Spec.Group, Version: v.Name}
			}
		}
	}
	var errs []error
	for name, g := range want {
		s := api.APIService{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{AutoManagedLabel: "true"}},
			Spec: api.APIServiceSpec{Group: g.Group, Version: g.Version, GroupPriorityMinimum: crdPriority.group, VersionPriority: crdPriority.version}}
		if err := a.ensure(ctx, &s, false); err != nil {
			errs = append(errs, err)
		}
	}
	for _, s := range svcs {
		if _, ok := want[s.Name]; ok || s.Labels[AutoManagedLabel] != "true" {
			continue
		}
		uid := s.UID
		_, _, err := a.cfg.APIServices.Delete(ctx, "", s.Name, &api.DeleteOptions{Preconditions: &api.Preconditions{UID: &uid}}, false)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("remove APIService %s: %w", s.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (a *Aggregator) get(name string) (*api.APIService, bool) {
	group, version := "", name
	if i := strings.IndexByte(name, '.'); i >= 0 {
		version, group = name[:i], name[i+1:]
	}
	return a.apiService(group, version)
}

// Run keeps every APIService's Available condition until ctx ends: an
// APIService is checked when it, its service or its endpoints change
// (seen each second in the watch caches), and every CheckInterval.
func (a *Aggregator) Run(ctx context.Context) {
	type state struct {
		fingerprint string
		checked     time.Time
		available   bool
	}
	seen := map[string]state{}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		svcs, err := a.apiServices(ctx)
		if err != nil && ctx.Err() == nil {
			a.log.Warn("listing APIServices", "err", err)
		}
		if err == nil {
			if err := a.syncCRDs(ctx, svcs); err != nil && ctx.Err() == nil {
				a.log.Warn("registering the APIServices of CRDs", "err", err)
			}
		}
		live := map[string]bool{}
		for _, s := range svcs {
			live[s.Name] = true
			fp := a.fingerprint(s)
			st := seen[s.Name]
			// An unavailable one is retried sooner, as kube-aggregator
			// requeues a failed check.
			every := a.cfg.CheckInterval
			if !st.available {
				every = min(every, 5*time.Second)
			}
			if st.fingerprint == fp && time.Since(st.checked) < every {
				continue
			}
			cur, err := a.sync(ctx, s)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				a.log.Warn("updating APIService status", "apiservice", s.Name, "err", err)
				continue // retried on the next tick
			}
			if cur == nil {
				continue // changed meanwhile: its new version is checked next
			}
			// Discovery follows the condition as written, not the watch
			// cache's copy, which may not have the status write yet (an
			// APIService seen Available with its group missing from /apis);
			// the written version is the base the cache catches up to.
			c := cur.AvailableCondition()
			available := c != nil && c.Status == api.ConditionTrue
			a.refreshDiscovery(ctx, cur)
			seen[s.Name] = state{fingerprint: a.fingerprint(cur), checked: time.Now(), available: available}
		}
		for name := range seen {
			if !live[name] {
				delete(seen, name)
				a.forgetDiscovery(name)
				a.mu.Lock()
				if t, ok := a.transports[name]; ok {
					t.rt.CloseIdleConnections()
					delete(a.transports, name)
				}
				a.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// fingerprint changes when anything an APIService's availability depends
// on does: the APIService, its service and the service's endpoint slices.
func (a *Aggregator) fingerprint(s *api.APIService) string {
	fp := s.ResourceVersion
	ref := s.Spec.Service
	if ref == nil {
		return fp
	}
	if o, ok := a.cfg.Services.Cacher().Get(a.cfg.Services.Key(ref.Namespace, ref.Name)); ok {
		fp += "/" + o.Decoded().(*api.Service).ResourceVersion
	}
	ess, _ := a.endpointSlices(ref.Namespace, ref.Name)
	for _, es := range ess {
		fp += "/" + es.ResourceVersion
	}
	return fp
}

// sync checks one APIService and records the outcome; it returns the
// APIService as it now is (as written when its status changed), or nil
// when it changed or went meanwhile.
func (a *Aggregator) sync(ctx context.Context, s *api.APIService) (*api.APIService, error) {
	cond := a.check(ctx, s)
	cond.LastTransitionTime = api.Now()
	upd := api.DeepCopy(s)
	if !setCondition(upd, cond) {
		return s, nil
	}
	if cond.Status != api.ConditionTrue || s.AvailableCondition() == nil || s.AvailableCondition().Status != cond.Status {
		a.log.Info("changing APIService availability", "name", s.Name, "status", cond.Status, "reason", cond.Reason, "message", cond.Message)
	}
	out, _, err := a.cfg.APIServices.Update(ctx, "", upd.Name, upd, registry.WriteOptions{Subresource: "status"})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	written, ok := out.(*api.APIService)
	if !ok {
		return nil, fmt.Errorf("status update of APIService %s returned %T", s.Name, out)
	}
	return written, nil
}

// check is the Available condition an APIService has now, as
// kube-aggregator's local and remote availability controllers decide it.
func (a *Aggregator) check(ctx context.Context, s *api.APIService) api.APIServiceCondition {
	cond := api.APIServiceCondition{Type: api.APIServiceAvailable, Status: api.ConditionTrue}
	if s.Spec.Service == nil {
		cond.Reason, cond.Message = "Local", "Local APIServices are always available"
		return cond
	}
	host, err := a.resolve(s)
	if err != nil {
		var u *errUnavailable
		cond.Status, cond.Reason, cond.Message = api.ConditionFalse, "FailedDiscoveryCheck", err.Error()
		if errors.As(err, &u) {
			cond.Reason = u.reason
			if strings.HasSuffix(u.reason, "AccessError") {
				cond.Status = api.ConditionUnknown
			}
		}
		return cond
	}
	if err := a.discoveryCheck(ctx, s, host); err != nil {
		cond.Status, cond.Reason, cond.Message = api.ConditionFalse, "FailedDiscoveryCheck", err.Error()
		return cond
	}
	cond.Reason, cond.Message = "Passed", "all checks passed"
	return cond
}

// discoveryCheck asks the server for the group/version's discovery
// document as system:kube-aggregator in system:masters, within 5 s.
func (a *Aggregator) discoveryCheck(ctx context.Context, s *api.APIService, host string) error {
	rt, err := a.transport(s)
	if err != nil {
		return err
	}
	u := "https://" + host + "/apis/" + s.Spec.Group + "/" + s.Spec.Version
	if s.Name == "v1." {
		u = "https://" + host + "/api/" + s.Spec.Version
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Remote-User", "system:kube-aggregator")
	req.Header.Set("X-Remote-Group", "system:masters")
	resp, err := (&http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		rt.CloseIdleConnections()
		if ctx.Err() != nil {
			return fmt.Errorf("timed out waiting for %s", u)
		}
		return fmt.Errorf("failing or missing response from %s: %w", u, err)
	}
	resp.Body.Close()
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusMultipleChoices {
		return fmt.Errorf("bad status from %s: %d", u, resp.StatusCode)
	}
	return nil
}

// setCondition sets the Available condition as kube-aggregator's
// SetAPIServiceCondition does (the transition time moves only with the
// status) and reports whether anything changed.
func setCondition(s *api.APIService, c api.APIServiceCondition) bool {
	cur := s.AvailableCondition()
	if cur == nil {
		s.Status.Conditions = append(s.Status.Conditions, c)
		return true
	}
	if cur.Status == c.Status && cur.Reason == c.Reason && cur.Message == c.Message {
		return false
	}
	if cur.Status != c.Status {
		cur.Status, cur.LastTransitionTime = c.Status, c.LastTransitionTime
	}
	cur.Reason, cur.Message = c.Reason, c.Message
	return true
}
