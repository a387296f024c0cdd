package volume

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/resource"
)

type fixedGetter struct {
	cms     map[string]*api.ConfigMap
	secrets map[string]*api.Secret
	token   string
	tokErr  error
	asked   []*api.ServiceAccountTokenProjection
	bundles []*api.ClusterTrustBundle
	// certs are the pod certificates by "volume/index": key, chain.
	certs map[string][2]string
}

func (g *fixedGetter) ClusterTrustBundle(_ context.Context, name string) (*api.ClusterTrustBundle, error) {
	for _, b := range g.bundles {
		if b.Name == name {
			return b, nil
		}
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Group: "certificates.k8s.io", Resource: "clustertrustbundles"}, name)
}

func (g *fixedGetter) ClusterTrustBundles(context.Context) ([]*api.ClusterTrustBundle, error) {
	return g.bundles, nil
}

func (g *fixedGetter) PodCertificate(_ context.Context, _ *api.Pod, volume string, index int, _ *api.PodCertificateProjection) ([]byte, []byte, error) {
	c, ok := g.certs[fmt.Sprintf("%s/%d", volume, index)]
	if !ok {
		return nil, nil, errors.New("credential bundle is not issued yet")
	}
	return []byte(c[0]), []byte(c[1]), nil
}

func (g *fixedGetter) ConfigMap(_ context.Context, _, name string) (*api.ConfigMap, error) {
	if cm, ok := g.cms[name]; ok {
		return cm, nil
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "configmaps"}, name)
}

func (g *fixedGetter) Secret(_ context.Context, _, name string) (*api.Secret, error) {
	if s, ok := g.secrets[name]; ok {
		return s, nil
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Resource: "secrets"}, name)
}

func (g *fixedGetter) ServiceAccountToken(_ context.Context, _ *api.Pod, src *api.ServiceAccountTokenProjection) (string, error) {
	g.asked = append(g.asked, src)
	return g.token, g.tokErr
}

func (g *fixedGetter) NodeAllocatable() api.ResourceList {
	return api.ResourceList{api.ResourceCPU: resource.MustParse("2"), api.ResourceMemory: resource.MustParse("4Gi")}
}

func testPod() *api.Pod {
	return &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "shop", UID: "u-1",
		Labels: map[string]string{"tier": "front", "app": "web"}, Annotations: map[string]string{"note": `say "hi"`}},
		Spec: api.PodSpec{NodeName: "node-1", ServiceAccountName: "builder", Containers: []api.Container{{Name: "c",
			Resources: api.ResourceRequirements{Limits: api.ResourceList{api.ResourceMemory: resource.MustParse("64Mi")},
				Requests: api.ResourceList{api.ResourceCPU: resource.MustParse("250m")}}}}}}
}

func field(p string) *api.ObjectFieldSelector { return &api.ObjectFieldSelector{FieldPath: p} }

func TestDownwardAPIPayload(t *testing.T) {
	m600 := int32(0o600)
	got, err := DownwardAPIPayload(testPod(), []api.DownwardAPIVolumeFile{
		{Path: "name", FieldRef: field("metadata.name")},
		{Path: "ns", FieldRef: field("metadata.namespace")},
		{Path: "uid", FieldRef: field("metadata.uid")},
		{Path: "labels", FieldRef: field("metadata.labels"), Mode: &m600},
		{Path: "annotations", FieldRef: field("metadata.annotations")},
		{Path: "tier", FieldRef: field("metadata.labels['tier']")},
		{Path: "sa", FieldRef: field("spec.serviceAccountName")},
		{Path: "res/cpu_m", ResourceFieldRef: &api.ResourceFieldSelector{ContainerName: "c", Resource: "requests.cpu", Divisor: resource.MustParse("1m")}},
		{Path: "res/mem_mi", ResourceFieldRef: &api.ResourceFieldSelector{ContainerName: "c", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
		{Path: "res/cpu_limit", ResourceFieldRef: &api.ResourceFieldSelector{ContainerName: "c", Resource: "limits.cpu"}},
		{Path: "res/mem_request", ResourceFieldRef: &api.ResourceFieldSelector{ContainerName: "c", Resource: "requests.memory"}},
	}, 0o644, (&fixedGetter{}).NodeAllocatable())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"name": "web", "ns": "shop", "uid": "u-1", "labels": "app=\"web\"\ntier=\"front\"",
		"annotations": `note="say \"hi\""`, "tier": "front", "sa": "builder", "res/cpu_m": "250", "res/mem_mi": "64",
		"res/cpu_limit": "2", "res/mem_request": "0"}
	for p, v := range want {
		if string(got[p].Data) != v {
			t.Errorf("%s = %q, want %q", p, got[p].Data, v)
		}
	}
	if got["labels"].Mode != 0o600 || got["name"].Mode != 0o644 {
		t.Errorf("modes %o %o", got["labels"].Mode, got["name"].Mode)
	}
	if _, err := DownwardAPIPayload(testPod(), []api.DownwardAPIVolumeFile{{Path: "x", FieldRef: field("spec.bogus")}}, 0o644, nil); err == nil {
		t.Error("unsupported field path accepted")
	}
}

// The service account volume admission injects: token, ca.crt, namespace.
func TestProjectedPayload(t *testing.T) {
	exp := int64(3607)
	src := &api.ProjectedVolumeSource{Sources: []api.VolumeProjection{
		{ServiceAccountToken: &api.ServiceAccountTokenProjection{ExpirationSeconds: &exp, Path: "token"}},
		{ConfigMap: &api.ConfigMapProjection{LocalObjectReference: api.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []api.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &api.DownwardAPIProjection{Items: []api.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: field("metadata.namespace")}}}},
	}}
	g := &fixedGetter{token: "jwt", cms: map[string]*api.ConfigMap{"kube-root-ca.crt": {Data: map[string]string{"ca.crt": "PEM"}}}}
	got, err := ProjectedPayload(context.Background(), g, testPod(), "v", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || string(got["token"].Data) != "jwt" || string(got["ca.crt"].Data) != "PEM" || string(got["namespace"].Data) != "shop" {
		t.Errorf("payload %v", got)
	}
	if len(g.asked) != 1 || *g.asked[0].ExpirationSeconds != 3607 {
		t.Errorf("token asked %+v", g.asked)
	}
	// Failures are kube's FailedMount wording, all of them.
	g = &fixedGetter{tokErr: errors.New(`serviceaccounts "builder" not found`)}
	_, err = ProjectedPayload(context.Background(), g, testPod(), "v", src)
	if want := `[failed to fetch token: serviceaccounts "builder" not found, configmap "kube-root-ca.crt" not found]`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	// An optional missing source is empty; a missing key of a present one fails.
	yes := true
	g = &fixedGetter{cms: map[string]*api.ConfigMap{"c": {Data: map[string]string{"a": "1"}}}}
	got, err = ProjectedPayload(context.Background(), g, testPod(), "v", &api.ProjectedVolumeSource{Sources: []api.VolumeProjection{
		{Secret: &api.SecretProjection{LocalObjectReference: api.LocalObjectReference{Name: "absent"}, Optional: &yes}},
		{ConfigMap: &api.ConfigMapProjection{LocalObjectReference: api.LocalObjectReference{Name: "c"}}},
	}})
	if err != nil || len(got) != 1 || string(got["a"].Data) != "1" {
		t.Errorf("optional source: %v, %v", got, err)
	}
	_, err = ConfigMapPayload(context.Background(), g, testPod(), &api.ConfigMapVolumeSource{LocalObjectReference: api.LocalObjectReference{Name: "c"}, Items: []api.KeyToPath{{Key: "zz", Path: "z"}}})
	if err == nil || err.Error() != "configmap references non-existent config key: zz" {
		t.Errorf("missing key: %v", err)
	}
}
