package pods

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

func certPEM(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func projectedPod(name string, sources ...api.VolumeProjection) *api.Pod {
	p := fakePod(name, api.Container{Name: "c", VolumeMounts: []api.VolumeMount{{Name: "certs", MountPath: "/run/certs"}}})
	p.Spec.Volumes = []api.Volume{{Name: "certs", VolumeSource: api.VolumeSource{Projected: &api.ProjectedVolumeSource{Sources: sources}}}}
	return p
}

func (n *fakeNode) volumeFile(pod *api.Pod, file string) string {
	b, _ := os.ReadFile(filepath.Join(n.mgr.podDir(string(pod.UID)), "volumes", "kubernetes.io~projected", "certs", file))
	return string(b)
}

// Pods with clusterTrustBundle sources (the conformance specs "[sig-auth]
// [FeatureGate:ClusterTrustBundle] ... should be able to mount a single
// ClusterTrustBundle by name", "... by signer+labels" and "should prevent a
// pod from starting if ...") run with the trust anchors in their volume; a
// required bundle that does not exist keeps the pod's containers waiting,
// not ready, with kube's FailedMount event.
func TestFakeClusterTrustBundleVolumes(t *testing.T) {
	t.Parallel()
	signer := "example.com/signer"
	a, b, plain := certPEM(t, "a"), certPEM(t, "b"), certPEM(t, "plain")
	ctb := func(name, signer, pem string, labels map[string]string) *api.ClusterTrustBundle {
		return &api.ClusterTrustBundle{ObjectMeta: api.ObjectMeta{Name: name, Labels: labels}, Spec: api.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pem}}
	}
	yes, no := true, false
	n := newFakeNode(t, nil,
		ctb("example.com:signer:a", signer, a, map[string]string{"alive": "true"}),
		ctb("example.com:signer:b", signer, b+a, map[string]string{"alive": "false"}),
		ctb("plain", "", plain, nil),
		projectedPod("anchors",
			api.VolumeProjection{ClusterTrustBundle: &api.ClusterTrustBundleProjection{SignerName: &signer, LabelSelector: &api.LabelSelector{}, Path: "all.pem"}},
			api.VolumeProjection{ClusterTrustBundle: &api.ClusterTrustBundleProjection{SignerName: &signer,
				LabelSelector: &api.LabelSelector{MatchLabels: map[string]string{"alive": "true"}}, Path: "alive.pem"}},
			api.VolumeProjection{ClusterTrustBundle: &api.ClusterTrustBundleProjection{Name: ptrTo("plain"), Path: "plain.pem"}},
			api.VolumeProjection{ClusterTrustBundle: &api.ClusterTrustBundleProjection{Name: ptrTo("absent"), Optional: &yes, Path: "absent.pem"}},
			api.VolumeProjection{ClusterTrustBundle: &api.ClusterTrustBundleProjection{SignerName: &signer, Optional: &yes, Path: "none.pem"}}),
		projectedPod("missing",
			api.VolumeProjection{ClusterTrustBundle: &api.ClusterTrustBundleProjection{Name: ptrTo("does-not-exist"), Optional: &no, Path: "ca.pem"}}),
	)
	p := n.waitPod("anchors", "running", isRunning)
	all := n.volumeFile(p, "all.pem")
	if strings.Count(all, "BEGIN CERTIFICATE") != 2 || !strings.Contains(all, a) || !strings.Contains(all, b) {
		t.Errorf("all.pem (a and b once each):\n%s", all)
	}
	if got := n.volumeFile(p, "alive.pem"); got != a {
		t.Errorf("alive.pem = %q, want a", got)
	}
	if got := n.volumeFile(p, "plain.pem"); got != plain {
		t.Errorf("plain.pem = %q", got)
	}
	for _, f := range []string{"absent.pem", "none.pem"} {
		if st, err := os.Stat(filepath.Join(n.mgr.podDir(string(p.UID)), "volumes", "kubernetes.io~projected", "certs", f)); err != nil || st.Size() != 0 {
			t.Errorf("%s: an optional source without bundles is an empty file: %v", f, err)
		}
	}

	n.wait("FailedMount of missing", func() bool {
		return n.hasEvent(`FailedMount MountVolume.SetUp failed for volume "certs" : while getting ClusterTrustBundle: clustertrustbundles.certificates.k8s.io "does-not-exist" not found`)
	})
	m := n.waitPod("missing", "not ready", func(p *api.Pod) bool {
		for _, c := range p.Status.Conditions {
			if c.Type == api.PodReady {
				return c.Status == api.ConditionFalse && c.Reason == "ContainersNotReady" && c.Message == "containers with unready status: [c]"
			}
		}
		return false
	})
	if m.Status.Phase != api.PodPending || statusOf(m, "c").State.Waiting == nil || statusOf(m, "c").State.Waiting.Reason != "ContainerCreating" {
		t.Errorf("missing: phase %s, container %+v", m.Status.Phase, statusOf(m, "c").State)
	}
}

func ptrTo[T any](v T) *T { return &v }

// A pod with a podCertificate source waits for its certificate: the
// kubelet creates a PodCertificateRequest for a key of the asked type,
// and once a signer issues it the pod runs with the credential bundle
// (key, then chain) in its volume (the conformance specs "[sig-auth]
// Projected PodCertificate ...").
func TestFakePodCertificateVolume(t *testing.T) {
	t.Parallel()
	n := newFakeNode(t, nil,
		&api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "default", Namespace: "default"}},
		projectedPod("tls", api.VolumeProjection{PodCertificate: &api.PodCertificateProjection{SignerName: "example.com/signer",
			KeyType: "ED25519", CredentialBundlePath: "bundle.pem", CertificateChainPath: "chain.pem",
			UserAnnotations: map[string]string{"spiffe/path-overriding": "/w"}}}))
	reqs := client.Resource[api.PodCertificateRequest](n.api.Client()).Namespace("default")
	ctx := context.Background()
	var req api.PodCertificateRequest
	n.wait("a PodCertificateRequest", func() bool {
		l, err := reqs.List(ctx, client.ListOptions{})
		if err != nil || len(l.Items) == 0 {
			return false
		}
		req = l.Items[0]
		return true
	})
	p := n.pod("tls")
	sa, err := client.Resource[api.ServiceAccount](n.api.Client()).Namespace("default").Get(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if s := req.Spec; s.SignerName != "example.com/signer" || s.PodName != "tls" || s.PodUID != p.UID || s.ServiceAccountName != "default" ||
		s.ServiceAccountUID != sa.UID || s.NodeUID == "" || s.NodeName != fakeNodeName || s.UnverifiedUserAnnotations["spiffe/path-overriding"] != "/w" ||
		!strings.HasPrefix(req.Name, "req-") {
		t.Errorf("request %s: %+v", req.Name, s)
	}
	csr, err := x509.ParseCertificateRequest(req.Spec.StubPKCS10Request)
	if err != nil || csr.CheckSignature() != nil || csr.PublicKeyAlgorithm != x509.Ed25519 {
		t.Fatalf("stub request: %v", err)
	}
	if isRunning(n.pod("tls")) {
		t.Fatal("the pod runs before its certificate is issued")
	}
	chain := certPEM(t, "leaf")
	now := time.Now()
	req.Status = api.PodCertificateRequestStatus{CertificateChain: chain,
		Conditions: []api.Condition{{Type: "Issued", Status: api.ConditionTrue, Reason: "Signed", LastTransitionTime: api.Time{Time: now}}},
		NotBefore:  &api.Time{Time: now}, NotAfter: &api.Time{Time: now.Add(24 * time.Hour)}, BeginRefreshAt: &api.Time{Time: now.Add(23 * time.Hour)}}
	if _, err := reqs.UpdateStatus(ctx, &req); err != nil {
		t.Fatal(err)
	}
	p = n.waitPod("tls", "running", isRunning)
	bundle := n.volumeFile(p, "bundle.pem")
	if !strings.HasPrefix(bundle, "-----BEGIN PRIVATE KEY-----") || !strings.HasSuffix(bundle, chain) || n.volumeFile(p, "chain.pem") != chain {
		t.Errorf("bundle.pem:\n%s", bundle)
	}
}
