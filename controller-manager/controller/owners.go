package controller

import (
	"reflect"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/informer"
)

// Selecting returns the objects of a namespace whose label selector
// matches objLabels. A selector that is missing (nil selects nothing),
// empty or invalid selects nothing: an empty selector would claim every
// object of the namespace, which kube's controllers refuse.
func Selecting[O any](l cache.NamespaceLister[O], selector func(*O) *api.LabelSelector, objLabels map[string]string) []*O {
	var out []*O
	for _, o := range l.List(nil) {
		sel, err := labels.SelectorFromLabelSelector(selector(o))
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(objLabels)) {
			continue
		}
		out = append(out, o)
	}
	return out
}

// Owners finds, for an object that controllers of kind O own (a pod, a
// ReplicaSet), the owners a change to it concerns: its controller, named
// by its controllerRef, or, for an orphan, every owner whose selector
// matches it and that may adopt it.
type Owners[O any] struct {
	lister   cache.Lister[O]
	resolve  func(ns string, ref *api.OwnerReference) *O
	selector func(*O) *api.LabelSelector
	key      func(*O) string
}

// NewOwners reads the owners from inf's cache; apiVersion and kind are
// what a controllerRef to one of them carries, selector their selector of
// owned objects.
func NewOwners[O any, PO interface {
	*O
	api.Object
}](inf *informer.Informer[O], apiVersion, kind string, selector func(*O) *api.LabelSelector) Owners[O] {
	lister := inf.Lister()
	resolve := func(ns string, ref *api.OwnerReference) *O {
		return ResolveControllerRef[O, PO](lister.Namespace(ns), ref, apiVersion, kind)
	}
	return Owners[O]{lister: lister, resolve: resolve, selector: selector, key: Key[O, PO]}
}

// Key is the owner's namespace/name, the key its controller queues.
func (o Owners[O]) Key(owner *O) string { return o.key(owner) }

// Resolve returns the owner ref names in namespace ns, if ref is of the
// owners' kind and the owner is still the object referenced.
func (o Owners[O]) Resolve(ns string, ref *api.OwnerReference) *O {
	return o.resolve(ns, ref)
}

// ControllerOf returns the owner that controls obj, or nil (no
// controllerRef, another kind, or an owner since deleted or replaced).
func (o Owners[O]) ControllerOf(obj *api.ObjectMeta) *O {
	return o.Resolve(obj.Namespace, api.GetControllerOf(obj))
}

// Selecting returns the owners in obj's namespace whose selector matches
// obj's labels.
func (o Owners[O]) Selecting(obj *api.ObjectMeta) []*O {
	return Selecting(o.lister.Namespace(obj.Namespace), o.selector, obj.Labels)
}

// Each calls f with obj's controller (controls true) if it is one of the
// owners, or, when obj has no controllerRef at all, with every owner whose
// selector matches it (controls false). An object controlled by something
// else, or by an owner that is gone, concerns no owner.
func (o Owners[O]) Each(obj *api.ObjectMeta, f func(owner *O, controls bool)) {
	ref := api.GetControllerOf(obj)
	if ref != nil {
		if owner := o.Resolve(obj.Namespace, ref); owner != nil {
			f(owner, true)
		}
		return
	}
	for _, owner := range o.Selecting(obj) {
		f(owner, false)
	}
}

// OwnedEvents adjusts OnOwned's mapping for one controller.
type OwnedEvents[T, O any] struct {
	// Created is told that an owned object controlled by the owner with
	// ownerKey was seen created (expectations' CreationObserved).
	Created func(ownerKey string, obj *T)
	// Deleted is told that an owned object controlled by the owner with
	// ownerKey was seen deleted, or terminating when TerminatingIsDeleted
	// (expectations' DeletionObserved).
	Deleted func(ownerKey string, obj *T)
	// Updated is called with the controller of an updated object once its
	// key was queued, to queue it again later (pods becoming available
	// minReadySeconds after they became ready).
	Updated func(owner *O, old, cur *T)
	// TerminatingIsDeleted handles an update that marks the object for
	// deletion as its delete: a terminating pod is already gone for a
	// ReplicaSet, whose replacement is made at once.
	TerminatingIsDeleted bool
}

// OnOwned is kube's handler of the objects a controller owns
// (the ReplicaSet controller's pods), queuing owner keys:
//   - add: the controller's key (an object seen first already terminating
//     is handled as deleted); for an orphan, every owner selecting it, one
//     of which may adopt it;
//   - update (resync excepted): the former controller's key if the
//     controllerRef changed, then the current controller's; for an orphan
//     whose labels or controllerRef changed, every owner selecting it;
//   - delete: the controller's key.
func OnOwned[T any, PT interface {
	*T
	api.Object
}, O any](l *Loop[string], owners Owners[O], ev OwnedEvents[T, O]) informer.Handler[T] {
	deleted := func(obj *T) {
		meta := PT(obj).GetObjectMeta()
		owner := owners.ControllerOf(meta)
		if owner == nil {
			return
		}
		key := owners.Key(owner)
		if ev.Deleted != nil {
			ev.Deleted(key, obj)
		}
		l.Add(key)
	}
	return informer.Handler[T]{
		OnAdd: func(obj *T, _ bool) {
			meta := PT(obj).GetObjectMeta()
			if meta.DeletionTimestamp != nil {
				deleted(obj)
				return
			}
			if api.GetControllerOf(meta) != nil {
				owner := owners.ControllerOf(meta)
				if owner == nil {
					return
				}
				key := owners.Key(owner)
				if ev.Created != nil {
					ev.Created(key, obj)
				}
				l.Add(key)
				return
			}
			for _, owner := range owners.Selecting(meta) {
				l.Add(owners.Key(owner))
			}
		},
		OnUpdate: func(old, cur *T) {
			oldMeta, curMeta := PT(old).GetObjectMeta(), PT(cur).GetObjectMeta()
			if oldMeta.ResourceVersion == curMeta.ResourceVersion {
				return // a resync
			}
			labelsChanged := !reflect.DeepEqual(oldMeta.Labels, curMeta.Labels)
			if ev.TerminatingIsDeleted && curMeta.DeletionTimestamp != nil {
				deleted(cur)
				if labelsChanged {
					deleted(old)
				}
				return
			}
			curRef, oldRef := api.GetControllerOf(curMeta), api.GetControllerOf(oldMeta)
			refChanged := !reflect.DeepEqual(curRef, oldRef)
			if refChanged && oldRef != nil {
				if owner := owners.Resolve(oldMeta.Namespace, oldRef); owner != nil {
					l.Add(owners.Key(owner))
				}
			}
			if curRef != nil {
				owner := owners.Resolve(curMeta.Namespace, curRef)
				if owner == nil {
					return
				}
				l.Add(owners.Key(owner))
				if ev.Updated != nil {
					ev.Updated(owner, old, cur)
				}
				return
			}
			if labelsChanged || refChanged {
				for _, owner := range owners.Selecting(curMeta) {
					l.Add(owners.Key(owner))
				}
			}
		},
		OnDelete: func(obj *T, _ bool) { deleted(obj) },
	}
}

// AvailableAfter is when a pod that has just become ready (old not
// ready, cur ready) becomes available to a controller with
// minReadySeconds: a second past them, so that the sync then sees it
// available. ok is false when there is nothing to wait for.
func AvailableAfter(old, cur *api.Pod, minReadySeconds int32) (after time.Duration, ok bool) {
	if minReadySeconds <= 0 || IsPodReady(old) || !IsPodReady(cur) {
		return 0, false
	}
	return time.Duration(minReadySeconds)*time.Second + time.Second, true
}

// QueueKeysForgetting is QueueKeys for owners whose controller remembers
// things per owner between syncs (expectations): a deleted owner's key is
// passed to forget before it is queued, so that the sync that finds it gone
// starts from nothing if the name is reused.
func QueueKeysForgetting[T any, PT interface {
	*T
	api.Object
}](l *Loop[string], forget func(key string)) informer.Handler[T] {
	h := QueueKeys[T, PT](l)
	h.OnDelete = func(obj *T, _ bool) {
		key := Key[T, PT](obj)
		forget(key)
		l.Add(key)
	}
	return h
}
