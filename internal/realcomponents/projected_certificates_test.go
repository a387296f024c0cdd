package realcomponents

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// TestProjectedCertificateVolumesAsKube: pods with podCertificate and
// clusterTrustBundle projected volume sources are refused or accepted by
// minik8s exactly as by kube-apiserver v1.37.2 (same code, message and
// causes), among them the maxExpirationSeconds bounds the conformance specs
// "Projected PodCertificate ... MaxExpirationSeconds validations" check.
func TestProjectedCertificateVolumesAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	both.must(t, http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"certs"}}`)
	// kube's ServiceAccount admission needs the default account.
	both.must(t, http.StatusCreated, "POST", "/api/v1/namespaces/certs/serviceaccounts", `{"metadata":{"name":"default"}}`)
	const pods = "/api/v1/namespaces/certs/pods"
	pod := func(name, sources string) string {
		return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"automountServiceAccountToken":false,"serviceAccountName":"default",
			"containers":[{"name":"c","image":"busybox","resources":{},"volumeMounts":[{"name":"tls","mountPath":"/run/tls"}]}],
			"volumes":[{"name":"tls","projected":{"sources":[%s]}}]}}`, name, sources)
	}
	podCert := func(fields string) string {
		return `{"podCertificate":{"signerName":"example.com/signer","keyType":"ECDSAP256","credentialBundlePath":"bundle.pem"` + fields + `}}`
	}
	refused := []struct{ name, sources string }{
		{"too-long", podCert(`,"maxExpirationSeconds":7862401`)},
		{"too-short", podCert(`,"maxExpirationSeconds":3599`)},
		{"kubernetes-signer-too-long", `{"podCertificate":{"signerName":"kubernetes.io/kube-apiserver-client-pod","keyType":"ED25519","keyPath":"k","maxExpirationSeconds":86401}}`},
		{"bad-key-type", `{"podCertificate":{"signerName":"example.com/signer","keyType":"DSA","keyPath":"k"}}`},
		{"no-path", `{"podCertificate":{"signerName":"example.com/signer","keyType":"RSA3072"}}`},
		{"bad-signer", `{"podCertificate":{"signerName":"signer","keyType":"RSA4096","certificateChainPath":"c"}}`},
		{"bad-paths", `{"podCertificate":{"signerName":"example.com/signer","keyType":"ECDSAP384","keyPath":"../k","certificateChainPath":"c","credentialBundlePath":"c"}}`},
		{"bad-annotations", podCert(`,"userAnnotations":{"nodomain":"x","Bad_Key/x":"y","":"z"}`)},
		{"ctb-both", `{"clusterTrustBundle":{"name":"a","signerName":"example.com/s","path":"ca.pem"}}`},
		{"ctb-both-selector", `{"clusterTrustBundle":{"name":"a","signerName":"example.com/s","path":"ca.pem","optional":false,"labelSelector":{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"In","values":["v"]}]}}}`},
		{"ctb-neither", `{"clusterTrustBundle":{"path":"ca.pem"}}`},
		{"ctb-bad-names", `{"clusterTrustBundle":{"name":"example.com:signer:","path":"/ca.pem","labelSelector":{}}},{"clusterTrustBundle":{"name":"","path":""}}`},
		{"ctb-bad-signer", `{"clusterTrustBundle":{"signerName":"","labelSelector":{"matchLabels":{"a":"b c"}},"path":"ca.pem"}},{"clusterTrustBundle":{"signerName":"x","path":"ca.pem"}}`},
		{"two-in-one", `{"clusterTrustBundle":{"name":"a","path":"ca.pem"},"podCertificate":{"signerName":"example.com/signer","keyType":"ED25519","keyPath":"ca.pem"}}`},
	}
	for _, c := range refused {
		both.sameRefusal(t, "POST", pods, pod(c.name, c.sources))
	}
	// Accepted alike, and the volumes stored alike.
	both.must(t, http.StatusCreated, "POST", pods, pod("accepted",
		podCert(`,"maxExpirationSeconds":7862400,"keyPath":"key.pem","certificateChainPath":"chain.pem","userAnnotations":{"spiffe/path-overriding":"/w"}`)+
			`,{"clusterTrustBundle":{"signerName":"example.com/signer","labelSelector":{},"path":"ca.pem","optional":true}}`+
			`,{"clusterTrustBundle":{"name":"example.com:signer:primary","path":"primary.pem"}}`+
			`,{"podCertificate":{"signerName":"kubernetes.io/kube-apiserver-client-pod","keyType":"ED25519","keyPath":"k","maxExpirationSeconds":86400}}`))
	var volumes [2]string
	for i, e := range both.each() {
		got := e.must(t, http.StatusOK, "GET", pods+"/accepted", "")
		b, _ := json.Marshal(got["spec"].(map[string]any)["volumes"])
		volumes[i] = string(b)
	}
	if volumes[0] != volumes[1] {
		t.Errorf("stored volumes differ:\nkube-apiserver: %s\nminik8s:        %s", volumes[0], volumes[1])
	}
}
