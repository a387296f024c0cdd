package admission

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/request"
)

// fakeVolumes is a VolumeGetter over fixed objects.
type fakeVolumes struct {
	claims  map[string]*api.PersistentVolumeClaim // namespace/name
	volumes map[string]*api.PersistentVolume
	drivers map[string]*api.CSIDriver
}

func (f fakeVolumes) GetPersistentVolumeClaim(_ context.Context, ns, name string) (*api.PersistentVolumeClaim, bool, error) {
	c, ok := f.claims[ns+"/"+name]
	return c, ok, nil
}

func (f fakeVolumes) GetPersistentVolume(_ context.Context, name string) (*api.PersistentVolume, bool, error) {
	v, ok := f.volumes[name]
	return v, ok, nil
}

func (f fakeVolumes) GetCSIDriver(_ context.Context, name string) (*api.CSIDriver, bool, error) {
	d, ok := f.drivers[name]
	return d, ok, nil
}

// TestNodeRestrictionTokenAudiences: ServiceAccountNodeAudienceRestriction
// (on by default since v1.33): a kubelet gets tokens only for audiences
// its pod names, or that the authorizer allows it; Kubernetes' messages.
func TestNodeRestrictionTokenAudiences(t *testing.T) {
	t.Parallel()
	sas := resourceInfo(t, "", "serviceaccounts")
	nodeA := &request.User{Name: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	projected := func(aud string) api.Volume {
		return api.Volume{Name: "tok-" + aud, VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{
			Sources: []api.VolumeProjection{{ServiceAccountToken: &api.ServiceAccountTokenProjection{Audience: aud, Path: "t"}}}}}}
	}
	claim := func(name string) api.Volume {
		return api.Volume{Name: "claim-" + name, VolumeSource: api.VolumeSource{PersistentVolumeClaim: &api.PersistentVolumeClaimVolumeSource{ClaimName: name}}}
	}
	pod := func(name string, vols ...api.Volume) *api.Pod {
		return &api.Pod{ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", UID: api.UID("u-" + name)},
			Spec: api.PodSpec{NodeName: "node-a", Volumes: vols}}
	}
	objs := fakeObjects{pods: map[string]*api.Pod{
		"default/plain":   pod("plain", projected("")),
		"default/vault":   pod("vault", projected(""), projected("vault")),
		"default/inline":  pod("inline", api.Volume{Name: "i", VolumeSource: api.VolumeSource{CSI: json.RawMessage(`{"driver":"secrets.csi"}`)}}),
		"default/claimed": pod("claimed", claim("data")),
		"default/eph": pod("eph", api.Volume{Name: "scratch", VolumeSource: api.VolumeSource{
			Ephemeral: json.RawMessage(`{"volumeClaimTemplate":{"spec":{}}}`)}}),
		"default/dangling": pod("dangling", claim("missing"), projected("later")),
	}}
	vols := fakeVolumes{
		claims: map[string]*api.PersistentVolumeClaim{
			"default/data":        {Spec: api.PersistentVolumeClaimSpec{VolumeName: "pv-data"}},
			"default/eph-scratch": {Spec: api.PersistentVolumeClaimSpec{VolumeName: "pv-eph"}},
		},
		volumes: map[string]*api.PersistentVolume{
			"pv-data": {Spec: api.PersistentVolumeSpec{PersistentVolumeSource: api.PersistentVolumeSource{CSI: json.RawMessage(`{"driver":"disk.csi","volumeHandle":"h"}`)}}},
			"pv-eph":  {Spec: api.PersistentVolumeSpec{PersistentVolumeSource: api.PersistentVolumeSource{CSI: json.RawMessage(`{"driver":"secrets.csi","volumeHandle":"h"}`)}}},
		},
		drivers: map[string]*api.CSIDriver{
			"secrets.csi": {Spec: api.CSIDriverSpec{TokenRequests: []api.CSITokenRequest{{Audience: "secrets-store"}}}},
			"disk.csi":    {Spec: api.CSIDriverSpec{TokenRequests: []api.CSITokenRequest{{Audience: "disk"}}}},
		},
	}
	// The authorizer grants node-a the audience "granted" for the account web.
	az := authz.AuthorizerFunc(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
		if a.Verb == "request-serviceaccounts-token-audience" && a.Resource == "granted" && a.Name == "web" &&
			a.Namespace == "default" && a.APIGroup == "" && a.IsResourceRequest && a.User.Name == "system:node:node-a" {
			return authz.Allow, "", nil
		}
		return authz.NoOpinion, "", nil
	})
	p := &NodeRestriction{Pods: objs, Volumes: vols, Authorizer: az}
	for _, tc := range []struct {
		name, pod string
		auds      []string
		want      string
	}{
		{"no audience, the default projected token", "plain", nil, ""},
		{"no audience, no projected token", "inline", nil, `serviceaccounts "web" is forbidden: system:node:node-a is not authorized to request tokens for audience ""`},
		{"a projected audience", "vault", []string{"vault"}, ""},
		{"an audience the pod does not name", "plain", []string{"vault"}, `serviceaccounts "web" is forbidden: system:node:node-a is not authorized to request tokens for audience "vault"`},
		{"the API audience is not implied", "plain", []string{"https://kubernetes.default.svc.cluster.local"},
			`serviceaccounts "web" is forbidden: system:node:node-a is not authorized to request tokens for audience "https://kubernetes.default.svc.cluster.local"`},
		{"two audiences", "vault", []string{"", "vault"}, `serviceaccounts "web" is forbidden: node may only request 0 or 1 audiences`},
		{"an inline CSI driver's audience", "inline", []string{"secrets-store"}, ""},
		{"a claimed volume's driver", "claimed", []string{"disk"}, ""},
		{"an ephemeral volume's driver", "eph", []string{"secrets-store"}, ""},
		{"another driver's audience", "claimed", []string{"secrets-store"},
			`serviceaccounts "web" is forbidden: system:node:node-a is not authorized to request tokens for audience "secrets-store"`},
		{"authorized audience", "plain", []string{"granted"}, ""},
		{"a projected audience despite a missing claim", "dangling", []string{"later"}, ""},
		{"a missing claim", "dangling", []string{"other"},
			`serviceaccounts "web" is forbidden: error validating audience "other": persistentvolumeclaim "missing" not found`},
	} {
		a := &Attributes{Operation: Create, Resource: sas, Subresource: "token", Namespace: "default", Name: "web", User: nodeA,
			Object: &api.TokenRequest{Spec: api.TokenRequestSpec{Audiences: tc.auds,
				BoundObjectRef: &api.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: tc.pod, UID: api.UID("u-" + tc.pod)}}}}
		err := p.Validate(context.Background(), a)
		switch {
		case err == nil && tc.want != "":
			t.Errorf("%s: allowed, want %q", tc.name, tc.want)
		case err != nil && err.Error() != tc.want:
			t.Errorf("%s: %q, want %q", tc.name, err, tc.want)
		}
	}
}

// TestNodeRestrictionNodeObjects: what the Node authorizer leaves to
// admission: a kubelet's CSINode, ResourceSlices and claims' status.
func TestNodeRestrictionNodeObjects(t *testing.T) {
	t.Parallel()
	nodeA := &request.User{Name: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	p := &NodeRestriction{}
	str := func(s string) *string { return &s }
	claim := func(labels map[string]string, phase api.PersistentVolumeClaimPhase, capacity string) *api.PersistentVolumeClaim {
		c := &api.PersistentVolumeClaim{ObjectMeta: api.ObjectMeta{Name: "data", Namespace: "default", Labels: labels, ResourceVersion: "5"},
			Status: api.PersistentVolumeClaimStatus{Phase: phase}}
		if capacity != "" {
			c.Status.Capacity = api.ResourceList{"storage": resource.MustParse(capacity)}
		}
		return c
	}
	for _, tc := range []struct {
		name string
		a    *Attributes
		want string
	}{
		{"its CSINode", &Attributes{Operation: Create, Resource: resourceInfo(t, "storage.k8s.io", "csinodes"),
			Object: &api.CSINode{ObjectMeta: api.ObjectMeta{Name: "node-a"}}}, ""},
		{"another CSINode", &Attributes{Operation: Create, Resource: resourceInfo(t, "storage.k8s.io", "csinodes"),
			Object: &api.CSINode{ObjectMeta: api.ObjectMeta{Name: "node-b"}}},
			`csinodes.storage.k8s.io "node-b" is forbidden: can only access CSINode with the same name as the requesting node`},
		{"delete another CSINode", &Attributes{Operation: Delete, Resource: resourceInfo(t, "storage.k8s.io", "csinodes"), Name: "node-b"},
			`csinodes.storage.k8s.io "node-b" is forbidden: can only access CSINode with the same name as the requesting node`},
		{"its slice", &Attributes{Operation: Create, Resource: resourceInfo(t, "resource.k8s.io", "resourceslices"),
			Object: &api.ResourceSlice{ObjectMeta: api.ObjectMeta{Name: "s"}, Spec: api.ResourceSliceSpec{NodeName: str("node-a")}}}, ""},
		{"a slice for all nodes", &Attributes{Operation: Create, Resource: resourceInfo(t, "resource.k8s.io", "resourceslices"),
			Object: &api.ResourceSlice{ObjectMeta: api.ObjectMeta{Name: "s"}}},
			`resourceslices.resource.k8s.io "s" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node`},
		{"delete another's slice", &Attributes{Operation: Delete, Resource: resourceInfo(t, "resource.k8s.io", "resourceslices"), Name: "s",
			OldObject: &api.ResourceSlice{ObjectMeta: api.ObjectMeta{Name: "s"}, Spec: api.ResourceSliceSpec{NodeName: str("node-b")}}},
			`resourceslices.resource.k8s.io "s" is forbidden: can only delete ResourceSlice with the same NodeName as the requesting node`},
		{"claim capacity", &Attributes{Operation: Update, Resource: resourceInfo(t, "", "persistentvolumeclaims"), Subresource: "status", Name: "data",
			OldObject: claim(nil, api.ClaimBound, "1Gi"), Object: claim(nil, api.ClaimBound, "2Gi")}, ""},
		{"claim phase", &Attributes{Operation: Update, Resource: resourceInfo(t, "", "persistentvolumeclaims"), Subresource: "status", Name: "data",
			OldObject: claim(nil, api.ClaimBound, ""), Object: claim(nil, api.ClaimLost, "")},
			`persistentvolumeclaims "data" is forbidden: node "node-a" is not allowed to update fields other than status.quantity and status.conditions: `},
		{"claim labels", &Attributes{Operation: Update, Resource: resourceInfo(t, "", "persistentvolumeclaims"), Subresource: "status", Name: "data",
			OldObject: claim(nil, api.ClaimBound, ""), Object: claim(map[string]string{"a": "b"}, api.ClaimBound, "")},
			`persistentvolumeclaims "data" is forbidden: node "node-a" is not allowed to update fields other than status.quantity and status.conditions: `},
		{"claim spec", &Attributes{Operation: Update, Resource: resourceInfo(t, "", "persistentvolumeclaims"), Name: "data",
			OldObject: claim(nil, api.ClaimBound, ""), Object: claim(nil, api.ClaimBound, "")},
			`persistentvolumeclaims "data" is forbidden: may only update PVC status`},
	} {
		tc.a.User = nodeA
		err := p.Validate(context.Background(), tc.a)
		switch {
		case err == nil && tc.want != "":
			t.Errorf("%s: allowed, want %q", tc.name, tc.want)
		case err != nil && (tc.want == "" || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want):
			t.Errorf("%s: %q, want %q...", tc.name, err, tc.want)
		}
	}
}

// TestNodeRestrictionPodCertificateRequests: a kubelet asks pod
// certificates only for its running, non-mirror pods, under their own
// service account, for a signer they mount (Kubernetes' messages).
func TestNodeRestrictionPodCertificateRequests(t *testing.T) {
	t.Parallel()
	pcrs := resourceInfo(t, "certificates.k8s.io", "podcertificaterequests")
	nodeA := &request.User{Name: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	mounted := api.Volume{Name: "cert", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{
		Sources: []api.VolumeProjection{{PodCertificate: &api.PodCertificateProjection{SignerName: "example.com/mine", KeyType: "ED25519", CredentialBundlePath: "c"}}}}}}
	objs := fakeObjects{
		sas: map[string]*api.ServiceAccount{"default/web": {ObjectMeta: api.ObjectMeta{Name: "web", UID: "u-sa"}}},
		pods: map[string]*api.Pod{
			"default/web": {ObjectMeta: api.ObjectMeta{Name: "web", UID: "u-web"}, Spec: api.PodSpec{NodeName: "node-a", ServiceAccountName: "web", Volumes: []api.Volume{mounted}}},
			"default/static": {ObjectMeta: api.ObjectMeta{Name: "static", UID: "u-static", Annotations: map[string]string{api.MirrorPodAnnotationKey: "x"}},
				Spec: api.PodSpec{NodeName: "node-a"}},
		},
	}
	p := &NodeRestriction{Nodes: fakeNodes{"node-a": {ObjectMeta: api.ObjectMeta{Name: "node-a", UID: "u-node"}}}, Pods: objs, ServiceAccounts: objs,
		Authorizer: authz.AuthorizerFunc(func(context.Context, authz.Attributes) (authz.Decision, string, error) {
			return authz.NoOpinion, "", nil
		})}
	spec := func(change func(*api.PodCertificateRequestSpec)) *api.PodCertificateRequest {
		s := api.PodCertificateRequestSpec{SignerName: "example.com/mine", PodName: "web", PodUID: "u-web", ServiceAccountName: "web",
			ServiceAccountUID: "u-sa", NodeName: "node-a", NodeUID: "u-node"}
		if change != nil {
			change(&s)
		}
		return &api.PodCertificateRequest{ObjectMeta: api.ObjectMeta{Name: "r", Namespace: "default"}, Spec: s}
	}
	for _, tc := range []struct {
		name string
		req  *api.PodCertificateRequest
		want string
	}{
		{"its pod's signer", spec(nil), ""},
		{"another node", spec(func(s *api.PodCertificateRequestSpec) { s.NodeName = "node-b" }),
			`podcertificaterequests.certificates.k8s.io "r" is forbidden: PodCertificateRequest.Spec.NodeName="node-b", which is not the requesting node "node-a"`},
		{"a signer the pod does not mount", spec(func(s *api.PodCertificateRequestSpec) { s.SignerName = "example.com/other" }),
			`podcertificaterequests.certificates.k8s.io "r" is forbidden: pod "default/web" does not mount a podCertificate projected volume for signer "example.com/other"`},
		{"another account", spec(func(s *api.PodCertificateRequestSpec) { s.ServiceAccountName = "admin" }),
			`podcertificaterequests.certificates.k8s.io "r" is forbidden: PodCertificateRequest for pod "default/web" contains serviceAccountName ("admin") that differs from running pod ("web")`},
		{"a mirror pod", spec(func(s *api.PodCertificateRequestSpec) { s.PodName, s.PodUID = "static", "u-static" }),
			`podcertificaterequests.certificates.k8s.io "r" is forbidden: pod "default/static" is a mirror pod`},
		{"a stale pod UID", spec(func(s *api.PodCertificateRequestSpec) { s.PodUID = "old" }),
			`Internal error occurred: PodCertificateRequest for pod "default/web" contains pod UID ("old") which differs from running pod "u-web"`},
	} {
		err := p.Validate(context.Background(), &Attributes{Operation: Create, Resource: pcrs, Namespace: "default", Object: tc.req, User: nodeA})
		switch {
		case err == nil && tc.want != "":
			t.Errorf("%s: allowed, want %q", tc.name, tc.want)
		case err != nil && err.Error() != tc.want:
			t.Errorf("%s: %q, want %q", tc.name, err, tc.want)
		}
	}
}
