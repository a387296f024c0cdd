// Package scheduling is the scheduler proper: informer handlers that feed
// the queue (pending pods) and the cache (nodes, assigned pods), and the
// loop that pops a pod, filters and scores the nodes of a snapshot, assumes
// the pod on the chosen node and binds it asynchronously, as
// kube-scheduler's schedule_one.go.
package scheduling
