package app

import (
	"context"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/admission/matching"
	"github.com/minik8s/minik8s/apiserver/admission/webhook"
	"github.com/minik8s/minik8s/apiserver/cacher"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/serviceresolver"
)

// admissionSource gives the dynamic admission plugins what they read, from
// the watch caches: the webhook configurations, namespaces' labels, and
// the Services and EndpointSlices webhooks are reached through.
type admissionSource struct {
	mutating, validating, namespaces, services, slices *registry.Store
}

var (
	_ webhook.Source         = (*admissionSource)(nil)
	_ matching.Namespaces    = (*admissionSource)(nil)
	_ serviceresolver.Lister = (*admissionSource)(nil)
)

func (s *admissionSource) MutatingWebhookConfigurations() []*api.MutatingWebhookConfiguration {
	return cachedValues[api.MutatingWebhookConfiguration](s.mutating, cacher.Predicate{})
}

func (s *admissionSource) ValidatingWebhookConfigurations() []*api.ValidatingWebhookConfiguration {
	return cachedValues[api.ValidatingWebhookConfiguration](s.validating, cacher.Predicate{})
}

// Namespace reads the watch cache, and etcd for a namespace the cache has
// not seen yet, as kube's namespace matcher falls back to a live read.
func (s *admissionSource) Namespace(ctx context.Context, name string) (*api.Namespace, bool, error) {
	return lookup[api.Namespace](ctx, s.namespaces, "", name, false)
}

func (s *admissionSource) Service(ns, name string) (*api.Service, bool) {
	return cachedValue[api.Service](s.services, ns, name)
}

func (s *admissionSource) EndpointSlices(ns, name string) []*api.EndpointSlice {
	return cachedValues[api.EndpointSlice](s.slices, cacher.Predicate{Namespace: ns,
		Label: func(l map[string]string) bool { return l[api.LabelServiceName] == name }})
}
