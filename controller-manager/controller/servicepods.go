package controller

import (
	"maps"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/cache"
	"github.com/minik8s/minik8s/internal/informer"
)

// OnServicePods is the pod handler of the controllers that keep a
// service's endpoints (endpoints, endpointslice): it queues the keys of
// the services whose selector matches the pod on its add and delete, and
// on an update (resync excepted) those matching it now and, when its
// labels changed, those that matched it before and must drop it.
func OnServicePods(l *Loop[string], services cache.Lister[api.Service]) informer.Handler[api.Pod] {
	queue := func(pods ...*api.Pod) {
		for _, p := range pods {
			for _, k := range ServiceKeysForPod(services, p) {
				l.Add(k)
			}
		}
	}
	return informer.Handler[api.Pod]{
		OnAdd: func(p *api.Pod, _ bool) { queue(p) },
		OnUpdate: func(old, p *api.Pod) {
			if old.ResourceVersion == p.ResourceVersion {
				return // a resync
			}
			if maps.Equal(old.Labels, p.Labels) {
				queue(p)
				return
			}
			queue(old, p)
		},
		OnDelete: func(p *api.Pod, _ bool) { queue(p) },
	}
}
