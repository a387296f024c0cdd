package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"k8s.io/apimachinery/pkg/runtime"
	k8sadmission "k8s.io/apiserver/pkg/admission"
	apiserverinstall "k8s.io/apiserver/pkg/apis/apiserver/install"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/apiserver/admission"
	"github.com/minik8s/minik8s/apiserver/admission/matching"
	"github.com/minik8s/minik8s/apiserver/admission/policy"
	"github.com/minik8s/minik8s/apiserver/admission/webhook"
	"github.com/minik8s/minik8s/apiserver/cacher"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/server"
	"github.com/minik8s/minik8s/apiserver/serviceresolver"
)

// admissionSource gives the dynamic admission plugins what they read, from
// the watch caches: the webhook configurations, namespaces' labels, and
// the Services and EndpointSlices webhooks are reached through.
type admissionSource struct {
	mutating, validating, policies, bindings, namespaces, pods, services, slices *registry.Store
	mutatingPolicies, mutatingBindings                                           *registry.Store
	// stores are every built-in resource's, custom the custom resources',
	// for policies' params.
	stores map[string]*registry.Store
	custom interface {
		Served() []*server.CustomResource
	}
}

var (
	_ webhook.Source         = (*admissionSource)(nil)
	_ matching.Namespaces    = (*admissionSource)(nil)
	_ serviceresolver.Lister = (*admissionSource)(nil)
	_ policy.Source          = (*admissionSource)(nil)
	_ policy.Params          = (*admissionSource)(nil)
	_ policy.MutatingSource  = (*admissionSource)(nil)

	_ admission.PodSecuritySource = (*admissionSource)(nil)
)

// newPodSecurity builds the PodSecurity plugin with its configuration from
// the admission control config file (none: kube's defaults).
func newPodSecurity(configFile string, src admission.PodSecuritySource, log *slog.Logger) (*admission.PodSecurity, error) {
	scheme := runtime.NewScheme()
	apiserverinstall.Install(scheme)
	provider, err := k8sadmission.ReadAdmissionConfiguration(AdmissionPlugins, configFile, scheme)
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %w", err)
	}
	cfg, err := provider.ConfigFor("PodSecurity")
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %w", err)
	}
	p, err := admission.NewPodSecurity(cfg, src, log)
	if err != nil {
		return nil, fmt.Errorf("--admission-control-config-file: %w", err)
	}
	return p, nil
}

// PodsInNamespace lists a namespace's pods from the watch cache, for
// PodSecurity's check of existing pods when a namespace's level tightens.
func (s *admissionSource) PodsInNamespace(_ context.Context, namespace string) ([]*api.Pod, error) {
	if s.pods == nil {
		return nil, errors.New("the pods resource is not served")
	}
	return cachedValues[api.Pod](s.pods, cacher.Predicate{Namespace: namespace}), nil
}

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

func (s *admissionSource) ValidatingAdmissionPolicies() []*api.ValidatingAdmissionPolicy {
	return cachedValues[api.ValidatingAdmissionPolicy](s.policies, cacher.Predicate{})
}

func (s *admissionSource) ValidatingAdmissionPolicyBindings() []*api.ValidatingAdmissionPolicyBinding {
	return cachedValues[api.ValidatingAdmissionPolicyBinding](s.bindings, cacher.Predicate{})
}

func (s *admissionSource) MutatingAdmissionPolicies() []*api.MutatingAdmissionPolicy {
	return cachedValues[api.MutatingAdmissionPolicy](s.mutatingPolicies, cacher.Predicate{})
}

func (s *admissionSource) MutatingAdmissionPolicyBindings() []*api.MutatingAdmissionPolicyBinding {
	return cachedValues[api.MutatingAdmissionPolicyBinding](s.mutatingBindings, cacher.Predicate{})
}

// ParamObjects reads params from the watch cache of their resource; one
// named param the cache has not seen yet is read from etcd, as kube reads
// it directly when its informer lags.
func (s *admissionSource) ParamObjects(r api.ResourceInfo, ns, name string, sel labels.Selector) ([]api.Object, error) {
	st := s.stores[r.Group+"/"+r.Resource]
	if st == nil {
		st = s.customStore(func(i api.ResourceInfo) bool { return i.Group == r.Group && i.Resource == r.Resource })
	}
	if st == nil {
		return nil, fmt.Errorf("%s is not served", r.Resource)
	}
	if name != "" {
		if o, ok := st.Cacher().Get(st.Key(ns, name)); ok {
			if v, ok := o.Decoded().(api.Object); ok {
				return []api.Object{v}, nil
			}
		}
		obj, err := st.Get(context.Background(), ns, name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []api.Object{obj}, nil
	}
	objs, _, err := st.Cacher().List(context.Background(), cacher.ListOptions{Namespace: ns, ResourceVersion: "0",
		Predicate: cacher.Predicate{Label: func(l map[string]string) bool { return sel.Matches(labels.Set(l)) }}})
	if err != nil {
		return nil, err
	}
	out := make([]api.Object, 0, len(objs))
	for _, o := range objs {
		if v, ok := o.Decoded().(api.Object); ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// ParamResource finds the resource of a paramKind: a built-in kind or a
// custom resource being served.
func (s *admissionSource) ParamResource(apiVersion, kind string) (api.ResourceInfo, bool) {
	if r, ok := api.LookupKind(apiVersion, kind); ok {
		return r, true
	}
	st := s.customStore(func(i api.ResourceInfo) bool { return i.GroupVersion() == apiVersion && i.Kind == kind })
	if st == nil {
		return api.ResourceInfo{}, false
	}
	return st.Info, true
}

func (s *admissionSource) customStore(match func(api.ResourceInfo) bool) *registry.Store {
	if s.custom == nil {
		return nil
	}
	for _, cr := range s.custom.Served() {
		if cr.Store != nil && match(cr.Store.Info) {
			return cr.Store
		}
	}
	return nil
}
