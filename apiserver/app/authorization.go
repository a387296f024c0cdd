package app

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/cacher"
	"github.com/minik8s/minik8s/apiserver/registry"
)

// newAuthorizer is kube-apiserver's default chain: system:masters always, then
// the Node authorizer for kubelets, then RBAC, all reading the watch caches,
// named as kube-apiserver names them (the 403 messages show the names).
func (a *APIServer) newAuthorizer() authz.Authorizer {
	return authz.Union(
		authz.Named("kubernetes.io/system-privileged-group", authz.PrivilegedGroups("system:masters")),
		authz.Named("node", authz.NewNode(a.startNodeGraph(), &nodeObjects{
			volumeAttachments: a.Store("storage.k8s.io", "volumeattachments"),
			resourceSlices:    a.Store("resource.k8s.io", "resourceslices"),
			podCertificates:   a.Store(api.CertificatesGroupName, "podcertificaterequests"),
		})),
		authz.Named("rbac", authz.NewRBAC(a.rbacRules)),
	)
}

// bootstrapPolicy creates the default cluster roles and bindings that are
// missing. An existing default cluster role gets the rules a newer version
// added (system:basic-user's selfsubjectreviews), as kube-apiserver
// reconciles them, unless an administrator set its autoupdate annotation
// to "false"; rules are only added, never removed. Bindings are left as
// they are.
func (a *APIServer) bootstrapPolicy(ctx context.Context) error {
	roles, bindings := authz.BootstrapPolicy()
	crs := a.Store("rbac.authorization.k8s.io", "clusterroles")
	crbs := a.Store("rbac.authorization.k8s.io", "clusterrolebindings")
	for _, r := range roles {
		_, err := crs.Create(ctx, "", r, registry.WriteOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = reconcileClusterRole(ctx, crs, r)
		}
		if err != nil {
			return fmt.Errorf("create cluster role %s: %w", r.Name, err)
		}
	}
	for _, b := range bindings {
		if _, err := crbs.Create(ctx, "", b, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create cluster role binding %s: %w", b.Name, err)
		}
	}
	nsRoles, nsBindings := authz.BootstrapNamespacePolicy()
	rs, rbs := a.Store("rbac.authorization.k8s.io", "roles"), a.Store("rbac.authorization.k8s.io", "rolebindings")
	for _, r := range nsRoles {
		if _, err := rs.Create(ctx, r.Namespace, r, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create role %s/%s: %w", r.Namespace, r.Name, err)
		}
	}
	for _, b := range nsBindings {
		if _, err := rbs.Create(ctx, b.Namespace, b, registry.WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create role binding %s/%s: %w", b.Namespace, b.Name, err)
		}
	}
	// The RBAC authorizer reads the watch caches: serve only once they hold
	// the policy (kube-apiserver is not ready before its bootstrap roles).
	for _, s := range []*registry.Store{crs, crbs, rs, rbs} {
		if err := s.Cacher().WaitSynced(ctx); err != nil {
			return fmt.Errorf("watch cache of %s after the bootstrap policy: %w", s.Info.Resource, err)
		}
	}
	return nil
}

// reconcileClusterRole adds to the stored role of want's name the rules of
// want it lacks, unless its autoupdate annotation is "false".
func reconcileClusterRole(ctx context.Context, crs *registry.Store, want *api.ClusterRole) error {
	obj, err := crs.Get(ctx, "", want.Name)
	if err != nil {
		return err
	}
	have := obj.(*api.ClusterRole)
	if have.Annotations[api.AutoUpdateAnnotationKey] == "false" {
		return nil
	}
	var missing []api.PolicyRule
	for _, r := range want.Rules {
		if !slices.ContainsFunc(have.Rules, func(h api.PolicyRule) bool { return sameRule(h, r) }) {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	updated := *have
	updated.Rules = append(slices.Clone(have.Rules), missing...)
	_, _, err = crs.Update(ctx, "", want.Name, &updated, registry.WriteOptions{})
	return err
}

func sameRule(a, b api.PolicyRule) bool {
	return slices.Equal(a.Verbs, b.Verbs) && slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) &&
		slices.Equal(a.ResourceNames, b.ResourceNames) && slices.Equal(a.NonResourceURLs, b.NonResourceURLs)
}

// cachedValues returns the typed objects of a store's watch cache matching pred.
func cachedValues[T any](s *registry.Store, pred cacher.Predicate) []*T {
	objs, _, err := s.Cacher().List(context.Background(), cacher.ListOptions{Namespace: pred.Namespace, Predicate: pred, ResourceVersion: "0"})
	if err != nil {
		return nil
	}
	out := make([]*T, 0, len(objs))
	for _, o := range objs {
		if v, ok := o.Decoded().(*T); ok {
			out = append(out, v)
		}
	}
	return out
}

// cachedValue returns ns/name of a store's watch cache as *T.
func cachedValue[T any](s *registry.Store, ns, name string) (*T, bool) {
	o, ok := s.Cacher().Get(s.Key(ns, name))
	if !ok {
		return nil, false
	}
	v, ok := o.Decoded().(*T)
	return v, ok
}

// lookup reads ns/name as *T from the watch cache, or from etcd when live is
// set or the cache has not seen it (a fresh write may not be cached yet).
// found is false when it does not exist.
func lookup[T any](ctx context.Context, s *registry.Store, ns, name string, live bool) (*T, bool, error) {
	if !live {
		if v, ok := cachedValue[T](s, ns, name); ok {
			return v, true, nil
		}
	}
	obj, err := s.Get(ctx, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v, ok := any(obj).(*T)
	if !ok {
		return nil, false, fmt.Errorf("%s store returned %T", s.Info.Resource, obj)
	}
	return v, true, nil
}

// cachedRules implements authz.RuleSource on the RBAC watch caches.
type cachedRules struct {
	clusterRoleBindings, roleBindings, clusterRoles, roles *registry.Store
}

var _ authz.RuleSource = (*cachedRules)(nil)

func (c *cachedRules) ListClusterRoleBindings() []*api.ClusterRoleBinding {
	return cachedValues[api.ClusterRoleBinding](c.clusterRoleBindings, cacher.Predicate{})
}

func (c *cachedRules) ListRoleBindings(namespace string) []*api.RoleBinding {
	return cachedValues[api.RoleBinding](c.roleBindings, cacher.Predicate{Namespace: namespace})
}

func (c *cachedRules) GetClusterRole(name string) (*api.ClusterRole, bool) {
	return cachedValue[api.ClusterRole](c.clusterRoles, "", name)
}

func (c *cachedRules) GetRole(namespace, name string) (*api.Role, bool) {
	return cachedValue[api.Role](c.roles, namespace, name)
}

// nodeObjects implements authz.NodeObjects on the watch caches.
type nodeObjects struct {
	volumeAttachments, resourceSlices, podCertificates *registry.Store
}

var _ authz.NodeObjects = (*nodeObjects)(nil)

func (g *nodeObjects) NodeOf(resource, namespace, name string) (string, bool) {
	switch resource {
	case "volumeattachments":
		if v, ok := cachedValue[api.VolumeAttachment](g.volumeAttachments, "", name); ok {
			return v.Spec.NodeName, true
		}
	case "resourceslices":
		if s, ok := cachedValue[api.ResourceSlice](g.resourceSlices, "", name); ok {
			if s.Spec.NodeName == nil {
				return "", true
			}
			return *s.Spec.NodeName, true
		}
	case "podcertificaterequests":
		if r, ok := cachedValue[api.PodCertificateRequest](g.podCertificates, namespace, name); ok {
			return r.Spec.NodeName, true
		}
	}
	return "", false
}

// publishAuthenticationConfig writes kube-system's
// extension-apiserver-authentication ConfigMap as kube-apiserver does: the
// CA that signs client certificates (client-ca-file), so components serving
// HTTPS (kube-scheduler, kube-controller-manager) authenticate the clients
// of their own endpoints. Without TLS there is nothing to publish.
func (a *APIServer) publishAuthenticationConfig(ctx context.Context) error {
	if a.pki == nil {
		return nil
	}
	cms := a.Store("", "configmaps")
	data := map[string]string{"client-ca-file": string(a.pki.CA.CertPEM())}
	rh, err := a.requestHeaderConfig()
	if err != nil {
		return err
	}
	maps.Copy(data, rh)
	name := authz.ExtensionAuthenticationConfigMap
	_, err = cms.Create(ctx, api.NamespaceSystem, &api.ConfigMap{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: api.NamespaceSystem}, Data: data}, registry.WriteOptions{})
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("create configmap %s/%s: %w", api.NamespaceSystem, name, err)
		}
		return nil
	}
	obj, err := cms.Get(ctx, api.NamespaceSystem, name)
	if err != nil {
		return err
	}
	cm := obj.(*api.ConfigMap)
	changed := false
	for k, v := range data {
		changed = changed || cm.Data[k] != v
	}
	if !changed {
		return nil
	}
	updated := *cm
	updated.Data = maps.Clone(cm.Data)
	if updated.Data == nil {
		updated.Data = map[string]string{}
	}
	maps.Copy(updated.Data, data)
	if _, _, err := cms.Update(ctx, api.NamespaceSystem, name, &updated, registry.WriteOptions{}); err != nil {
		return fmt.Errorf("update configmap %s/%s: %w", api.NamespaceSystem, name, err)
	}
	return nil
}
