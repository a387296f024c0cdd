package realcomponents

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"
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
		// One bad key a case: kube reports them in map order.
		{"annotation-no-domain", podCert(`,"userAnnotations":{"nodomain":"x"}`)},
		{"annotation-bad-prefix", podCert(`,"userAnnotations":{"Bad_Key/x":"y"}`)},
		{"annotation-empty", podCert(`,"userAnnotations":{"":"z"}`)},
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

// pcrKey makes a key of the type and a stub PKCS#10 request signed with it.
func pcrKey(t *testing.T, kind string) (crypto.Signer, []byte) {
	t.Helper()
	var key crypto.Signer
	var err error
	switch kind {
	case "ecdsa":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ecdsa224":
		key, err = ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	case "rsa2048":
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		t.Fatal(err)
	}
	stub, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	return key, stub
}

// TestPodCertificateRequestsAsKube: PodCertificateRequests are refused,
// accepted, selected by signer and issued through /status as by
// kube-apiserver v1.37.2 (the conformance spec "[sig-auth]
// PodCertificateRequest API should support PodCertificateRequest API
// operations", and the signer of the "Projected PodCertificate" specs,
// which lists by spec.signerName).
func TestPodCertificateRequestsAsKube(t *testing.T) {
	t.Parallel()
	k := startKubeAPIServer(t)
	s := apiservertest.Start(t, apiservertest.WithTLS)
	both := rbacUsers{
		apiservers: apiservers{kube: k.admin, ours: &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}},
		kubeCA:     k.ca, oursCA: s.PKI().CA, oursBase: s.SecureURL(),
	}
	both.must(t, http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"pcr"}}`)
	const pcrs = "/apis/certificates.k8s.io/v1/namespaces/pcr/podcertificaterequests"
	key, stub := pcrKey(t, "ecdsa")
	_, rsaStub := pcrKey(t, "rsa2048")
	_, p224Stub := pcrKey(t, "ecdsa224")
	body := func(name, spec string) string {
		return fmt.Sprintf(`{"apiVersion":"certificates.k8s.io/v1","kind":"PodCertificateRequest","metadata":{"name":%q},"spec":{%s}}`, name, spec)
	}
	spec := func(signer string, stub []byte, extra string) string {
		b, _ := json.Marshal(stub)
		return fmt.Sprintf(`"signerName":%q,"podName":"web","podUID":"pod-uid","serviceAccountName":"default","serviceAccountUID":"sa-uid",
			"nodeName":"node-1","nodeUID":"node-uid","stubPKCS10Request":%s%s`, signer, b, extra)
	}
	for _, c := range []struct{ name, spec string }{
		{"bad-signer", spec("signer", stub, "")},
		{"bad-names", `"signerName":"example.com/s","podName":"Web","podUID":"","serviceAccountName":"a_b","nodeName":"","nodeUID":"` + strings.Repeat("u", 129) + `","stubPKCS10Request":"AAAA"`},
		{"too-long", spec("example.com/s", stub, `,"maxExpirationSeconds":7862401`)},
		{"too-short", spec("example.com/s", stub, `,"maxExpirationSeconds":3599`)},
		{"kubernetes-signer", spec("kubernetes.io/kube-apiserver-client-pod", stub, `,"maxExpirationSeconds":86401`)},
		{"no-stub", spec("example.com/s", nil, "")},
		{"rsa2048", spec("example.com/s", rsaStub, "")},
		{"p224", spec("example.com/s", p224Stub, "")},
		{"annotations", spec("example.com/s", stub, `,"unverifiedUserAnnotations":{"nodomain":"x"}`)},
	} {
		both.sameRefusal(t, "POST", pcrs, body(c.name, c.spec))
	}
	both.sameAcceptance(t, http.StatusCreated, "POST", pcrs, body("good", spec("example.com/s", stub, `,"unverifiedUserAnnotations":{"spiffe/path-overriding":"/w"}`)), pcrs+"/good")
	both.sameAcceptance(t, http.StatusCreated, "POST", pcrs, body("other", spec("example.org/other", stub, "")))
	for _, sel := range []string{"spec.signerName=example.com/s", "spec.nodeName=node-1,spec.podName=web", "spec.serviceAccountName=default"} {
		var names [2]string
		var codes [2]int
		for i, e := range both.each() {
			code, out := e.do(t, "GET", pcrs+"?fieldSelector="+sel, "")
			codes[i] = code
			for _, it := range asList(out["items"]) {
				names[i] += it.(map[string]any)["metadata"].(map[string]any)["name"].(string) + " "
			}
			if code != http.StatusOK {
				names[i] = fmt.Sprint(out["message"])
			}
		}
		if codes != [2]int{codes[0], codes[0]} || names[0] != names[1] {
			t.Errorf("fieldSelector=%s: kube-apiserver %d %q, minik8s %d %q", sel, codes[0], names[0], codes[1], names[1])
		}
	}

	// Issuance through /status.
	ca, _ := pcrKey(t, "ecdsa")
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, ca.Public(), ca)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	notBefore := time.Now().Add(-time.Minute).Truncate(time.Second)
	leaf := func(pub crypto.PublicKey, lifetime time.Duration) string {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), NotBefore: notBefore, NotAfter: notBefore.Add(lifetime), KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, pub, ca)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	}
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	status := func(conds, chain string, nb, na, refresh time.Time) string {
		c, _ := json.Marshal(chain)
		return `{"status":{"conditions":[` + conds + `],"certificateChain":` + string(c) +
			`,"notBefore":"` + ts(nb) + `","notAfter":"` + ts(na) + `","beginRefreshAt":"` + ts(refresh) + `"}}`
	}
	issued := `{"type":"Issued","status":"True","reason":"Signed","message":"ok","lastTransitionTime":"` + ts(time.Now()) + `"}`
	good := leaf(key.Public(), time.Hour)
	other, _ := pcrKey(t, "ecdsa")
	for _, c := range []string{
		status(issued, leaf(other.Public(), time.Hour), notBefore, notBefore.Add(time.Hour), notBefore.Add(30*time.Minute)),
		status(issued, good, notBefore.Add(time.Second), notBefore.Add(time.Hour), notBefore.Add(30*time.Minute)),
		status(issued, leaf(key.Public(), 25*time.Hour), notBefore, notBefore.Add(25*time.Hour), notBefore.Add(30*time.Minute)),
		status(issued, leaf(key.Public(), 30*time.Minute), notBefore, notBefore.Add(30*time.Minute), notBefore.Add(15*time.Minute)),
		status(issued, good, notBefore, notBefore.Add(time.Hour), notBefore.Add(5*time.Minute)),
		status(issued, "not pem", notBefore, notBefore.Add(time.Hour), notBefore.Add(30*time.Minute)),
		status(issued+`,{"type":"Denied","status":"True","reason":"No","lastTransitionTime":"`+ts(time.Now())+`"}`, good, notBefore, notBefore.Add(time.Hour), notBefore.Add(30*time.Minute)),
		status(`{"type":"Approved","status":"False","reason":"bad reason","lastTransitionTime":"`+ts(time.Now())+`"}`, "", notBefore, notBefore, notBefore),
		status(`{"type":"Denied","status":"True","reason":"No","lastTransitionTime":"`+ts(time.Now())+`"}`, good, notBefore, notBefore.Add(time.Hour), notBefore.Add(30*time.Minute)),
	} {
		both.sameRefusal(t, "PATCH", pcrs+"/good/status", c)
	}
	// Issuing needs "sign" on the signer: a user who may update the
	// status but not sign is refused (422 on spec.signerName).
	const rbac = "/apis/rbac.authorization.k8s.io/v1"
	both.must(t, http.StatusCreated, "POST", rbac+"/clusterroles", `{"metadata":{"name":"pcr-status-writer"},"rules":[
		{"apiGroups":["certificates.k8s.io"],"resources":["podcertificaterequests","podcertificaterequests/status"],"verbs":["get","update","patch"]}]}`)
	both.must(t, http.StatusCreated, "POST", rbac+"/clusterrolebindings", `{"metadata":{"name":"pcr-status-writer-mallory"},
		"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"mallory"}],
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"pcr-status-writer"}}`)
	both.as(t, "mallory", "dev").sameRefusal(t, "PATCH", pcrs+"/good/status", status(issued, good, notBefore, notBefore.Add(time.Hour), notBefore.Add(30*time.Minute)))
	both.sameAcceptance(t, http.StatusOK, "PATCH", pcrs+"/good/status", status(issued, good, notBefore, notBefore.Add(time.Hour), notBefore.Add(30*time.Minute)))
	// Issued, the status is frozen.
	both.sameRefusal(t, "PATCH", pcrs+"/good/status", status(issued, good, notBefore, notBefore.Add(time.Hour), notBefore.Add(40*time.Minute)))
}
