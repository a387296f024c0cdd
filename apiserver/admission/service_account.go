package admission

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/naming"
	"github.com/minik8s/minik8s/apiserver/serviceaccount"
)

// Names and paths of Kubernetes' ServiceAccount admission.
const (
	DefaultServiceAccountName = "default"
	// ServiceAccountVolumeName prefixes the projected volume's name
	// (kube-api-access-XXXXX).
	ServiceAccountVolumeName = "kube-api-access"
	// DefaultAPITokenMountPath is where containers find token, ca.crt and
	// namespace.
	DefaultAPITokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// RootCAConfigMapName is the ConfigMap of the cluster CA published in
	// every namespace.
	RootCAConfigMapName = "kube-root-ca.crt"
	// EnforceMountableSecretsAnnotation, "true" on an account, limits its
	// pods to the secrets it lists.
	EnforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"
)

// ServiceAccountGetter reads a ServiceAccount; missing is a NotFound error.
type ServiceAccountGetter interface {
	GetServiceAccount(ctx context.Context, namespace, name string) (*api.ServiceAccount, error)
}

// ServiceAccount is Kubernetes' ServiceAccount admission plugin, for pods
// being created: spec.serviceAccountName defaults to "default" (mirrored in
// the deprecated spec.serviceAccount); the account must exist; unless the
// pod or the account sets automountServiceAccountToken false, a projected
// kube-api-access-XXXXX volume (the token, the cluster CA and the
// namespace) is added and mounted read-only at
// /var/run/secrets/kubernetes.io/serviceaccount in every container and init
// container that has nothing there; the account's imagePullSecrets are
// copied to a pod that has none; an account annotated
// kubernetes.io/enforce-mountable-secrets=true limits its pods to its own
// secrets. Mirror pods are left alone but may not
// reference a service account, secrets or token projections.
type ServiceAccount struct {
	ServiceAccounts ServiceAccountGetter
	// Retry is how long to wait between lookups of a missing "default"
	// account, which the controller-manager may be about to create
	// (Kubernetes retries 10 times, 100-200 ms apart).
	Retry func() time.Duration
}

var (
	_ Mutator   = (*ServiceAccount)(nil)
	_ Validator = (*ServiceAccount)(nil)
)

// Name implements Plugin.
func (*ServiceAccount) Name() string { return "ServiceAccount" }

// Handles implements Plugin.
func (*ServiceAccount) Handles(op Operation) bool { return op == Create }

func serviceAccountPod(a *Attributes) (*api.Pod, bool) {
	if a.Resource.Group != "" || a.Resource.Resource != "pods" || a.Subresource != "" {
		return nil, false
	}
	pod, ok := a.Object.(*api.Pod)
	return pod, ok
}

// Admit implements Mutator.
func (p *ServiceAccount) Admit(ctx context.Context, a *Attributes) error {
	pod, ok := serviceAccountPod(a)
	if !ok {
		return nil
	}
	if _, mirror := pod.Annotations[api.MirrorPodAnnotationKey]; mirror {
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultServiceAccountName
		pod.Spec.DeprecatedServiceAccount = DefaultServiceAccountName
	}
	sa, err := p.get(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if shouldAutomount(sa, pod) {
		mountServiceAccountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = make([]api.LocalObjectReference, len(sa.ImagePullSecrets))
		for i, s := range sa.ImagePullSecrets {
			pod.Spec.ImagePullSecrets[i].Name = s.Name
		}
	}
	return nil
}

// Validate implements Validator.
func (p *ServiceAccount) Validate(ctx context.Context, a *Attributes) error {
	pod, ok := serviceAccountPod(a)
	if !ok {
		return nil
	}
	if _, mirror := pod.Annotations[api.MirrorPodAnnotationKey]; mirror {
		if pod.Spec.ServiceAccountName != "" {
			return NewForbidden(a, fmt.Errorf("a mirror pod may not reference service accounts"))
		}
		if !api.VisitPodSecretNames(pod, func(string) bool { return false }) {
			return NewForbidden(a, fmt.Errorf("a mirror pod may not reference secrets"))
		}
		for _, v := range pod.Spec.Volumes {
			if v.Projected == nil {
				continue
			}
			for _, s := range v.Projected.Sources {
				if s.ServiceAccountToken != nil {
					return NewForbidden(a, fmt.Errorf("a mirror pod may not use ServiceAccountToken volume projections"))
				}
			}
		}
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		return NewForbidden(a, fmt.Errorf("no service account specified for pod %s/%s", a.Namespace, pod.Name))
	}
	sa, err := p.get(ctx, a.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %v", a.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if v, ok := sa.Annotations[EnforceMountableSecretsAnnotation]; ok {
		if enforce, _ := strconv.ParseBool(v); enforce {
			if err := limitSecretReferences(sa, pod); err != nil {
				return NewForbidden(a, err)
			}
		}
	}
	return nil
}

// limitSecretReferences is Kubernetes' check for accounts annotated
// kubernetes.io/enforce-mountable-secrets=true: the pod's secret volumes,
// secret env of its containers and init containers, and pull secrets must
// be among the account's.
func limitSecretReferences(sa *api.ServiceAccount, pod *api.Pod) error {
	mountable := map[string]bool{}
	for _, s := range sa.Secrets {
		mountable[s.Name] = true
	}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && !mountable[v.Secret.SecretName] {
			return fmt.Errorf("volume with secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", v.Secret.SecretName, sa.Name)
		}
	}
	for _, group := range []struct {
		what string
		cs   []api.Container
	}{{"init container", pod.Spec.InitContainers}, {"container", pod.Spec.Containers}} {
		for _, c := range group.cs {
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !mountable[e.ValueFrom.SecretKeyRef.Name] {
					return fmt.Errorf("%s %s with envVar %s referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret",
						group.what, c.Name, e.Name, e.ValueFrom.SecretKeyRef.Name, sa.Name)
				}
			}
			for _, e := range c.EnvFrom {
				if e.SecretRef != nil && !mountable[e.SecretRef.Name] {
					return fmt.Errorf("%s %s with envFrom referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret",
						group.what, c.Name, e.SecretRef.Name, sa.Name)
				}
			}
		}
	}
	pull := map[string]bool{}
	for _, s := range sa.ImagePullSecrets {
		pull[s.Name] = true
	}
	for i, ref := range pod.Spec.ImagePullSecrets {
		if !pull[ref.Name] {
			return fmt.Errorf(`imagePullSecrets[%d].name="%s" is not allowed because service account %s does not reference that imagePullSecret`, i, ref.Name, sa.Name)
		}
	}
	return nil
}

// get reads the account, retrying a missing "default" one; missing is
// Kubernetes' NotFound of resource "serviceaccount".
func (p *ServiceAccount) get(ctx context.Context, ns, name string) (*api.ServiceAccount, error) {
	if p.ServiceAccounts == nil {
		return nil, fmt.Errorf("no service account getter")
	}
	attempts := 1
	if name == DefaultServiceAccountName {
		attempts = 10
	}
	retry := p.Retry
	if retry == nil {
		retry = func() time.Duration { return time.Duration(100+rand.IntN(100)) * time.Millisecond }
	}
	for i := range attempts {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(retry()):
			}
		}
		sa, err := p.ServiceAccounts.GetServiceAccount(ctx, ns, name)
		if err == nil {
			return sa, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "serviceaccount"}, name)
}

func shouldAutomount(sa *api.ServiceAccount, pod *api.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

// mountServiceAccountToken adds the volume (unless a kube-api-access-
// volume exists) and its mount, as Kubernetes does.
func mountServiceAccountToken(pod *api.Pod) {
	volumeName := ""
	hasVolume := false
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, ServiceAccountVolumeName+"-") {
			volumeName, hasVolume = v.Name, true
			break
		}
	}
	if volumeName == "" {
		volumeName = naming.GenerateName(ServiceAccountVolumeName + "-")
	}
	mount := api.VolumeMount{Name: volumeName, ReadOnly: true, MountPath: DefaultAPITokenMountPath}
	needsVolume := false
	for _, cs := range [][]api.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if !hasMountAt(cs[i].VolumeMounts, DefaultAPITokenMountPath) {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				needsVolume = true
			}
		}
	}
	if !hasVolume && needsVolume {
		pod.Spec.Volumes = append(pod.Spec.Volumes, api.Volume{Name: volumeName,
			VolumeSource: api.VolumeSource{Projected: TokenVolumeSource()}})
	}
}

func hasMountAt(mounts []api.VolumeMount, path string) bool {
	for _, m := range mounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

// TokenVolumeSource is the projected source of kube-api-access-XXXXX.
func TokenVolumeSource() *api.ProjectedVolumeSource {
	mode := api.ProjectedVolumeSourceDefaultMode
	// The lifetime the apiserver extends (and reports late refreshes of).
	exp := int64(serviceaccount.WarnOnlyBoundTokenExpirationSeconds)
	return &api.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []api.VolumeProjection{
			{ServiceAccountToken: &api.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &exp}},
			{ConfigMap: &api.ConfigMapProjection{LocalObjectReference: api.LocalObjectReference{Name: RootCAConfigMapName},
				Items: []api.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &api.DownwardAPIProjection{Items: []api.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &api.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}
}
