// Package controller defines what every controller of the controller-manager
// receives (a shared client, informer factory, event recorder and logger) and
// the interface it implements to be started by name.
//
// It also holds the halves that controllers share. Loop is the work loop
// (queue, cache waits, workers, metrics, shutdown) each controller embeds;
// QueueKeys, QueueKeysForgetting and OnChange map an object's events to its
// own key. Owners finds the owners an owned object's change concerns (its
// controller by controllerRef, else those whose selector matches the
// orphan), OnOwned is kube's add/update/delete rules over it for the
// replicaset-shaped controllers, Selecting the objects whose selector
// matches a set of labels, and OnServicePods the pod handler of the
// endpoints and endpointslice controllers. Periodic (with Every and
// EveryAfter) is the half of a controller that makes passes on a period
// instead of draining a queue (podgc, the node health monitor).
// WithSyncMetrics ends the constructors that build a controller without
// metrics for tests, FromFactory is the constructor of one built from the
// factory, a recorder, a logger and its metrics, and Cached is the first step of a sync: the cached
// object of a key, or nil when it is gone.
//
// A new controller is written as: an informer per kind it reads (from
// Context.Factory), one Loop whose Sync reconciles a key, handlers that
// only map events to keys (registered with Watch), and a New(ctx) that
// the manager's table in controller-manager/app names.
package controller
