package admission

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/request"
)

type fakeObjects struct {
	sas  map[string]*api.ServiceAccount
	pods map[string]*api.Pod
}

func (f fakeObjects) GetServiceAccount(_ context.Context, ns, name string) (*api.ServiceAccount, error) {
	if sa, ok := f.sas[ns+"/"+name]; ok {
		return sa, nil
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "serviceaccounts"}, name)
}

func (f fakeObjects) GetPod(_ context.Context, ns, name string) (*api.Pod, error) {
	if p, ok := f.pods[ns+"/"+name]; ok {
		return p, nil
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "pods"}, name)
}

// TestNodeRestrictionTokens: a kubelet's TokenRequest must be bound, by
// name and UID, to a pod on its node (Kubernetes' messages).
func TestNodeRestrictionTokens(t *testing.T) {
	t.Parallel()
	sas := resourceInfo(t, "", "serviceaccounts")
	nodeA := &request.User{Name: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	objs := fakeObjects{pods: map[string]*api.Pod{
		// As ServiceAccount admission leaves it: kube-api-access asks
		// tokens of no audience (ServiceAccountNodeAudienceRestriction).
		"default/here": {ObjectMeta: api.ObjectMeta{Name: "here", UID: "u-here"}, Spec: api.PodSpec{NodeName: "node-a",
			Volumes: []api.Volume{{Name: "kube-api-access", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{
				Sources: []api.VolumeProjection{{ServiceAccountToken: &api.ServiceAccountTokenProjection{Path: "token"}}}}}}}}},
		"default/there": {ObjectMeta: api.ObjectMeta{Name: "there", UID: "u-there"}, Spec: api.PodSpec{NodeName: "node-b"}},
	}}
	p := &NodeRestriction{Pods: objs}
	podRef := func(name, uid string) *api.BoundObjectReference {
		return &api.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: name, UID: api.UID(uid)}
	}
	for _, tc := range []struct {
		name string
		ref  *api.BoundObjectReference
		want string
	}{
		{"its pod", podRef("here", "u-here"), ""},
		{"unbound", nil, `serviceaccounts "web" is forbidden: node requested token not bound to a pod`},
		{"bound to a secret", &api.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "s"}, `serviceaccounts "web" is forbidden: node requested token not bound to a pod`},
		{"no uid", podRef("here", ""), `serviceaccounts "web" is forbidden: node requested token with a pod binding without a uid`},
		{"stale uid", podRef("here", "old"), `serviceaccounts "web" is forbidden: the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated`},
		{"another node's pod", podRef("there", "u-there"), `serviceaccounts "web" is forbidden: node requested token bound to a pod scheduled on a different node`},
		{"missing pod", podRef("gone", "u"), `pods "gone" not found`},
	} {
		a := &Attributes{Operation: Create, Resource: sas, Subresource: "token", Namespace: "default", Name: "web", User: nodeA,
			Object: &api.TokenRequest{Spec: api.TokenRequestSpec{BoundObjectRef: tc.ref}}}
		err := p.Validate(context.Background(), a)
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%s: allowed, want %q", tc.name, tc.want)
		}
	}
}

// TestServiceAccountAdmissionDefaultRetry: a missing "default" account is
// looked up ten times (the controller may be creating it), others once.
func TestServiceAccountAdmissionDefaultRetry(t *testing.T) {
	t.Parallel()
	pods := resourceInfo(t, "", "pods")
	calls := 0
	counting := getterFunc(func(ns, name string) (*api.ServiceAccount, error) {
		calls++
		return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "serviceaccounts"}, name)
	})
	p := &ServiceAccount{ServiceAccounts: counting, Retry: func() time.Duration { return time.Millisecond }}
	for _, tc := range []struct {
		account string
		calls   int
	}{{"", 10}, {"robot", 1}} {
		calls = 0
		pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: api.PodSpec{ServiceAccountName: tc.account}}
		err := p.Admit(context.Background(), &Attributes{Operation: Create, Resource: pods, Namespace: "ns", Name: "p", Object: pod})
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `serviceaccount "`) || calls != tc.calls {
			t.Errorf("account %q: %v after %d lookups, want forbidden after %d", tc.account, err, calls, tc.calls)
		}
	}
	// Mirror pods are exempt from defaulting, but may not name accounts.
	mirror := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "m", Namespace: "ns", Annotations: map[string]string{api.MirrorPodAnnotationKey: "x"}}}
	a := &Attributes{Operation: Create, Resource: pods, Namespace: "ns", Name: "m", Object: mirror}
	if err := p.Admit(context.Background(), a); err != nil || mirror.Spec.ServiceAccountName != "" {
		t.Errorf("mirror pod: %v, account %q", err, mirror.Spec.ServiceAccountName)
	}
	mirror.Spec.ServiceAccountName = "robot"
	if err := p.Validate(context.Background(), a); err == nil || err.Error() != `pods "m" is forbidden: a mirror pod may not reference service accounts` {
		t.Errorf("mirror pod naming an account: %v", err)
	}
}

type getterFunc func(ns, name string) (*api.ServiceAccount, error)

func (f getterFunc) GetServiceAccount(_ context.Context, ns, name string) (*api.ServiceAccount, error) {
	return f(ns, name)
}

// TestServiceAccountMountableSecrets: an account annotated
// kubernetes.io/enforce-mountable-secrets=true limits its pods to the
// secrets it lists, with Kubernetes' messages.
func TestServiceAccountMountableSecrets(t *testing.T) {
	t.Parallel()
	pods := resourceInfo(t, "", "pods")
	strict := &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "strict",
		Annotations: map[string]string{EnforceMountableSecretsAnnotation: "true"}},
		Secrets: []api.ObjectReference{{Name: "allowed"}}, ImagePullSecrets: []api.LocalObjectReference{{Name: "pull"}}}
	p := &ServiceAccount{ServiceAccounts: fakeObjects{sas: map[string]*api.ServiceAccount{"ns/strict": strict}}}
	secretEnv := func(name string) []api.EnvVar {
		return []api.EnvVar{{Name: "PW", ValueFrom: &api.EnvVarSource{SecretKeyRef: &api.SecretKeySelector{
			LocalObjectReference: api.LocalObjectReference{Name: name}, Key: "k"}}}}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*api.PodSpec)
		want   string
	}{
		{"its secrets", func(s *api.PodSpec) {
			s.Volumes = []api.Volume{{Name: "v", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "allowed"}}}}
			s.Containers[0].Env = secretEnv("allowed")
		}, ""},
		{"volume", func(s *api.PodSpec) {
			s.Volumes = []api.Volume{{Name: "v", VolumeSource: api.VolumeSource{Secret: &api.SecretVolumeSource{SecretName: "other"}}}}
		}, `pods "p" is forbidden: volume with secret.secretName="other" is not allowed because service account strict does not reference that secret`},
		{"init env", func(s *api.PodSpec) { s.InitContainers = []api.Container{{Name: "i", Env: secretEnv("other")}} },
			`pods "p" is forbidden: init container i with envVar PW referencing secret.secretName="other" is not allowed because service account strict does not reference that secret`},
		{"envFrom", func(s *api.PodSpec) {
			s.Containers[0].EnvFrom = []api.EnvFromSource{{SecretRef: &api.SecretEnvSource{LocalObjectReference: api.LocalObjectReference{Name: "other"}}}}
		}, `pods "p" is forbidden: container c with envFrom referencing secret.secretName="other" is not allowed because service account strict does not reference that secret`},
		{"pull secret", func(s *api.PodSpec) { s.ImagePullSecrets = []api.LocalObjectReference{{Name: "pull"}, {Name: "x"}} },
			`pods "p" is forbidden: imagePullSecrets[1].name="x" is not allowed because service account strict does not reference that imagePullSecret`},
	} {
		pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "ns"},
			Spec: api.PodSpec{ServiceAccountName: "strict", Containers: []api.Container{{Name: "c"}}}}
		tc.mutate(&pod.Spec)
		err := p.Validate(context.Background(), &Attributes{Operation: Create, Resource: pods, Namespace: "ns", Name: "p", Object: pod})
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%s: allowed, want %q", tc.name, tc.want)
		}
	}
}
