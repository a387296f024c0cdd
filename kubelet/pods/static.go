package pods

import (
	"context"
	"reflect"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/runtime"
	"github.com/minik8s/minik8s/kubelet/staticpods"
)

// Static pods (kube's file source) enter the manager through
// SetStaticPods: they run through the same workers as the API's pods,
// keyed by their hash UID, also while the apiserver cannot be reached.
// Their mirror pods, the API's read-only copies, are kept by the workers
// (syncMirror) and never run; their status goes to the mirror pod.

// SetStaticPods replaces the node's static pods with pods (the file
// source's complete set): the workers of added, changed and removed pods
// are woken. A removed pod is stopped with its grace period and its mirror
// pod deleted. It may be called before Run.
func (m *Manager) SetStaticPods(pods []*api.Pod) {
	next := make(map[string]*api.Pod, len(pods))
	for _, p := range pods {
		next[string(p.UID)] = p
	}
	var kick []string
	m.staticMu.Lock()
	for uid, old := range m.static {
		if _, ok := next[uid]; !ok {
			m.removedStatic[uid] = old
			kick = append(kick, uid)
		}
	}
	for uid, p := range next {
		old, ok := m.static[uid]
		delete(m.removedStatic, uid)
		if !ok || !reflect.DeepEqual(old.Spec, p.Spec) || !reflect.DeepEqual(old.ObjectMeta, p.ObjectMeta) {
			kick = append(kick, uid)
		}
	}
	m.static = next
	m.staticMu.Unlock()
	for _, uid := range kick {
		m.kick(uid)
	}
	if len(kick) > 0 {
		m.kickMirrorCleanup()
	}
}

// staticPod is the static pod uid, or nil.
func (m *Manager) staticPod(uid string) *api.Pod {
	m.staticMu.Lock()
	defer m.staticMu.Unlock()
	return m.static[uid]
}

// isStaticUID reports whether uid is a static pod's, present or being
// removed.
func (m *Manager) isStaticUID(uid string) bool {
	m.staticMu.Lock()
	defer m.staticMu.Unlock()
	_, ok := m.static[uid]
	_, removed := m.removedStatic[uid]
	return ok || removed
}

// staticByName is the static pod namespace/name, or nil.
func (m *Manager) staticByName(namespace, name string) *api.Pod {
	m.staticMu.Lock()
	defer m.staticMu.Unlock()
	for _, p := range m.static {
		if p.Namespace == namespace && p.Name == name {
			return p
		}
	}
	return nil
}

func (m *Manager) staticPods() []*api.Pod {
	m.staticMu.Lock()
	defer m.staticMu.Unlock()
	out := make([]*api.Pod, 0, len(m.static))
	for _, p := range m.static {
		out = append(out, p)
	}
	return out
}

// allPods are the pods the kubelet runs: the API's bound to the node,
// less the mirror pods, and the static pods.
func (m *Manager) allPods() []*api.Pod {
	out := m.staticPods()
	if m.pods == nil {
		return out
	}
	for _, p := range m.pods.Store().List() {
		if !staticpods.IsMirror(p) {
			out = append(out, p)
		}
	}
	return out
}

// onAPIPod wakes the worker of an API pod, or for a mirror pod that of its
// static pod (a mirror deleted through the API is created again).
func (m *Manager) onAPIPod(p *api.Pod) {
	if !staticpods.IsMirror(p) {
		m.kick(string(p.UID))
		return
	}
	if s := m.staticByName(p.Namespace, p.Name); s != nil {
		m.kick(string(s.UID))
		return
	}
	m.kickMirrorCleanup()
}

// mirrorOf is the current mirror pod of static pod pod: the API's pod of
// the same name with its hash, not being deleted.
func (m *Manager) mirrorOf(pod *api.Pod) *api.Pod {
	mp := m.apiPodByName(pod.Namespace, pod.Name)
	if mp == nil || !staticpods.IsMirror(mp) || mp.DeletionTimestamp != nil ||
		mp.Annotations[staticpods.ConfigMirrorAnnotationKey] != staticpods.Hash(pod) {
		return nil
	}
	return mp
}

func (m *Manager) apiPodByName(namespace, name string) *api.Pod {
	if m.pods == nil {
		return nil
	}
	p, err := m.pods.Lister().Namespace(namespace).Get(name)
	if err != nil {
		return nil
	}
	return p
}

// syncMirror keeps the mirror pod of a static pod as kube's syncPod does:
// one being deleted or of another hash (the manifest changed) is deleted
// for good, and a missing one is created, owned by the Node. Without the
// API (or before the Node is known) it does nothing.
func (m *Manager) syncMirror(ctx context.Context, pod *api.Pod) {
	if !m.apiReady() {
		return
	}
	pods := client.Resource[api.Pod](m.client).Namespace(pod.Namespace)
	log := m.log.With("pod", pod.Namespace+"/"+pod.Name)
	if mp := m.apiPodByName(pod.Namespace, pod.Name); mp != nil {
		if !staticpods.IsMirror(mp) {
			// kube leaves a pod of the API alone; the mirror cannot exist.
			return
		}
		if mp.DeletionTimestamp == nil && mp.Annotations[staticpods.ConfigMirrorAnnotationKey] == staticpods.Hash(pod) {
			return
		}
		log.Info("deleting mirror pod", "reason", mirrorDeleteReason(mp), "mirrorUID", mp.UID)
		if err := deleteMirror(ctx, pods, mp); err != nil {
			log.Warn("delete mirror pod", "err", err)
			return
		}
	}
	node := m.node()
	if node == nil {
		return
	}
	mirror := api.DeepCopy(pod)
	mirror.UID, mirror.ResourceVersion = "", ""
	mirror.Annotations[staticpods.ConfigMirrorAnnotationKey] = staticpods.Hash(pod)
	yes := true
	mirror.OwnerReferences = []api.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: m.opts.NodeName, UID: node.UID, Controller: &yes}}
	created, err := pods.Create(ctx, mirror)
	switch {
	case apierrors.IsAlreadyExists(err):
		// The cache lags; the next sync sees it.
	case err != nil:
		log.Warn("create mirror pod", "err", err)
	default:
		log.Info("created mirror pod", "mirrorUID", created.UID)
	}
}

func mirrorDeleteReason(mp *api.Pod) string {
	if mp.DeletionTimestamp != nil {
		return "deleted through the API"
	}
	return "the static pod changed"
}

// deleteMirror deletes a mirror pod for good (grace 0, on its UID), as
// kube's mirror client.
func deleteMirror(ctx context.Context, pods interface {
	Delete(context.Context, string, *api.DeleteOptions) error
}, mp *api.Pod) error {
	zero := int64(0)
	uid := mp.UID
	err := pods.Delete(ctx, mp.Name, &api.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &api.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// kickMirrorCleanup asks for a pass over the orphaned mirror pods.
func (m *Manager) kickMirrorCleanup() {
	select {
	case m.mirrorCleanup <- struct{}{}:
	default:
	}
}

// runMirrorCleanup deletes the node's mirror pods whose static pod is gone
// (kube's HandlePodCleanups), on request and every period.
func (m *Manager) runMirrorCleanup(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.mirrorCleanup:
		case <-t.C:
		}
		m.cleanupMirrors(ctx)
	}
}

func (m *Manager) cleanupMirrors(ctx context.Context) {
	if !m.apiReady() {
		return
	}
	for _, mp := range m.pods.Store().List() {
		if !staticpods.IsMirror(mp) || mp.Spec.NodeName != m.opts.NodeName {
			continue
		}
		if s := m.staticByName(mp.Namespace, mp.Name); s != nil {
			continue
		}
		m.log.Info("deleting orphaned mirror pod", "pod", mp.Namespace+"/"+mp.Name, "mirrorUID", mp.UID)
		if err := deleteMirror(ctx, client.Resource[api.Pod](m.client).Namespace(mp.Namespace), mp); err != nil {
			m.log.Warn("delete orphaned mirror pod", "pod", mp.Namespace+"/"+mp.Name, "err", err)
		}
	}
}

// terminateRemovedStatic stops a static pod whose manifest went: its
// containers get the pod's grace period, then everything is removed.
func (m *Manager) terminateRemovedStatic(ctx context.Context, w *worker, pod *api.Pod) {
	cs, err := m.rt.ListPodContainers(ctx, w.uid)
	if err != nil {
		m.log.Warn("list pod containers", "podUID", w.uid, "err", err)
	}
	grace := api.DefaultTerminationGracePeriodSeconds
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	m.log.Info("stopping static pod: its manifest was removed or changed", "pod", pod.Namespace+"/"+pod.Name, "podUID", w.uid)
	m.killPod(ctx, pod, cs, time.Duration(grace)*time.Second)
	m.probes.RemovePod(w.uid)
	m.stopSandboxes(ctx, pod, cs)
	m.teardown(ctx, w.uid, pod.Namespace, pod.Name, nil, 0)
	m.staticMu.Lock()
	delete(m.removedStatic, w.uid)
	m.staticMu.Unlock()
	m.kickMirrorCleanup()
}

func (m *Manager) removedStaticPod(uid string) *api.Pod {
	m.staticMu.Lock()
	defer m.staticMu.Unlock()
	return m.removedStatic[uid]
}

// apiReady: the API's pods are known (the informers synced and the
// containers adopted); before, only static pods run.
func (m *Manager) apiReady() bool { return m.apiSynced.Load() }

// startBlocked: a static pod waits while a removed one of the same name
// (its previous manifest) is still stopping, as kube's pod workers hold
// back a static pod whose full name is terminating (host ports, files).
func (m *Manager) startBlocked(pod *api.Pod) bool {
	m.staticMu.Lock()
	defer m.staticMu.Unlock()
	if _, ok := m.static[string(pod.UID)]; !ok {
		return false
	}
	for uid, old := range m.removedStatic {
		if uid != string(pod.UID) && old.Namespace == pod.Namespace && old.Name == pod.Name {
			return true
		}
	}
	return false
}

// adoptStatic re-attaches to the running containers of the static pods
// (adopt does the API's pods and removes the orphans once the API is
// known).
func (m *Manager) adoptStatic(ctx context.Context) {
	a, ok := m.rt.(runtime.Adopter)
	if !ok {
		return
	}
	m.adoptedStatic = map[string]bool{}
	for _, p := range m.staticPods() {
		m.adoptedStatic[string(p.UID)] = true
		cs, err := m.rt.ListPodContainers(ctx, string(p.UID))
		if err != nil {
			m.log.Warn("list static pod containers", "pod", p.Namespace+"/"+p.Name, "err", err)
			continue
		}
		for _, c := range cs {
			if c.State != runtime.StateRunning {
				continue
			}
			if err := a.Adopt(ctx, c.ID); err != nil {
				m.log.Warn("re-adopt container", "pod", p.Namespace+"/"+p.Name, "container", c.Name, "id", c.ID, "err", err)
			}
		}
	}
}

// kickStaticNamed wakes the static pod namespace/name (one waiting for
// its predecessor to stop).
func (m *Manager) kickStaticNamed(namespace, name string) {
	if p := m.staticByName(namespace, name); p != nil {
		m.kick(string(p.UID))
	}
}
