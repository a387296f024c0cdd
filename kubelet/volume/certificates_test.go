package volume

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// caPEM is a self-signed CA certificate named cn, PEM encoded.
func caPEM(t *testing.T, cn string) string {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func ptr[T any](v T) *T { return &v }

// The bundles of the conformance spec "[sig-auth] ClusterTrustBundle
// should be capable to mount multiple trust bundles by signer+labels":
// by name, by signer and labels (nil matches none, empty all), each
// certificate once, optional or not.
func TestTrustAnchors(t *testing.T) {
	t.Parallel()
	const signer = "test.test/signer-one"
	root := make([]string, 6)
	for i := range root {
		root[i] = caPEM(t, "root"+string(rune('0'+i)))
	}
	ctb := func(name, signer, pem string, labels map[string]string) *api.ClusterTrustBundle {
		return &api.ClusterTrustBundle{ObjectMeta: api.ObjectMeta{Name: name, Labels: labels},
			Spec: api.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pem}}
	}
	alive, dead := map[string]string{"signer.alive": "true"}, map[string]string{"signer.alive": "false"}
	g := &fixedGetter{bundles: []*api.ClusterTrustBundle{
		ctb("test.test:signer-one:1", signer, root[1], alive),
		// A bundle repeating another's certificate, with text between.
		ctb("test.test:signer-one:2", signer, root[2]+"comment\n"+root[1], alive),
		ctb("test.test:signer-one:3", signer, root[3], dead),
		ctb("test.test:signer-two:4", "test.test/signer-two", root[4], alive),
		ctb("unsigned", "", root[5], alive),
	}}
	cases := []struct {
		name string
		src  api.ClusterTrustBundleProjection
		want []string // certificates in the file
		err  string
	}{
		{"by name", api.ClusterTrustBundleProjection{Name: ptr("unsigned")}, []string{root[5]}, ""},
		{"missing name", api.ClusterTrustBundleProjection{Name: ptr("absent")}, nil,
			`while getting ClusterTrustBundle: clustertrustbundles.certificates.k8s.io "absent" not found`},
		{"missing name, optional", api.ClusterTrustBundleProjection{Name: ptr("absent"), Optional: ptr(true)}, []string{}, ""},
		{"signer and labels", api.ClusterTrustBundleProjection{SignerName: ptr(signer), LabelSelector: &api.LabelSelector{MatchLabels: alive}},
			[]string{root[1], root[2]}, ""},
		{"signer, empty selector", api.ClusterTrustBundleProjection{SignerName: ptr(signer), LabelSelector: &api.LabelSelector{}},
			[]string{root[1], root[2], root[3]}, ""},
		{"signer, nil selector", api.ClusterTrustBundleProjection{SignerName: ptr(signer)}, nil,
			"combination of signerName and labelSelector matched zero ClusterTrustBundles"},
		{"signer, nil selector, optional", api.ClusterTrustBundleProjection{SignerName: ptr(signer), Optional: ptr(true)}, []string{}, ""},
		{"no match, optional=false", api.ClusterTrustBundleProjection{SignerName: ptr(signer), Optional: ptr(false),
			LabelSelector: &api.LabelSelector{MatchLabels: map[string]string{"signer.alive": "unknown"}}}, nil,
			"combination of signerName and labelSelector matched zero ClusterTrustBundles"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TrustAnchors(context.Background(), g, &c.src)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(got), "-----BEGIN CERTIFICATE-----"); n != len(c.want) {
				t.Errorf("%d certificates, want %d:\n%s", n, len(c.want), got)
			}
			for _, w := range c.want {
				if !strings.Contains(string(got), w) {
					t.Errorf("missing %s", w)
				}
			}
			again, _ := TrustAnchors(context.Background(), g, &c.src)
			if string(again) != string(got) {
				t.Error("the order changes from one call to the next")
			}
		})
	}
}

// A projected volume with trust anchors and a pod certificate: the
// credential bundle is the key then the chain, each at its path; a
// certificate not issued yet and a required missing bundle fail the
// volume with both reasons.
func TestProjectedCertificatePayload(t *testing.T) {
	t.Parallel()
	ca := caPEM(t, "ca")
	g := &fixedGetter{
		bundles: []*api.ClusterTrustBundle{{ObjectMeta: api.ObjectMeta{Name: "example.com:signer:a"},
			Spec: api.ClusterTrustBundleSpec{SignerName: "example.com/signer", TrustBundle: ca}}},
		certs: map[string][2]string{"tls/1": {"KEY\n", "CHAIN\n"}},
	}
	src := &api.ProjectedVolumeSource{Sources: []api.VolumeProjection{
		{ClusterTrustBundle: &api.ClusterTrustBundleProjection{SignerName: ptr("example.com/signer"), LabelSelector: &api.LabelSelector{}, Path: "ca.pem"}},
		{PodCertificate: &api.PodCertificateProjection{SignerName: "example.com/signer", KeyType: "ED25519",
			CredentialBundlePath: "bundle.pem", KeyPath: "key.pem", CertificateChainPath: "chain.pem"}},
	}}
	got, err := ProjectedPayload(context.Background(), g, testPod(), "tls", src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ca.pem": ca, "bundle.pem": "KEY\nCHAIN\n", "key.pem": "KEY\n", "chain.pem": "CHAIN\n"}
	if len(got) != len(want) {
		t.Errorf("files %v", got)
	}
	for p, w := range want {
		if string(got[p].Data) != w || got[p].Mode != api.ProjectedVolumeSourceDefaultMode {
			t.Errorf("%s = %q mode %o, want %q", p, got[p].Data, got[p].Mode, w)
		}
	}
	src.Sources[0].ClusterTrustBundle = &api.ClusterTrustBundleProjection{Name: ptr("absent"), Path: "ca.pem"}
	_, err = ProjectedPayload(context.Background(), g, testPod(), "other", src)
	if want := `[while getting ClusterTrustBundle: clustertrustbundles.certificates.k8s.io "absent" not found, credential bundle is not issued yet]`; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
