package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// The ingress scenario's namespace, the add-on's (deploy/addons/
// ingress-controller.yaml) and the address its pods publish.
const (
	ingNS          = "e2e-ingress"
	ingAddonNS     = "ingress-minik8s"
	ingPublished   = "localhost"
	ingOtherClass  = "e2e-other"
	ingWebHost     = "web.example"
	ingSecureHost  = "secure.example"
	ingOtherHost   = "other.example"
	ingTLSSecret   = "web-tls"
	ingAddonLabels = "app.kubernetes.io/name=ingress-controller"
	// ingMetricsReader may get /metrics (a ServiceAccount, its
	// ClusterRole and binding).
	ingMetricsReader = "e2e-ingress-metrics-reader"
)

// ingressPort is the host port compose publishes node-1's port on:
// docker-compose.yaml reads the same variable.
func ingressPort(env, def string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	return def
}

// ingressScenario is the state the ingress steps share.
type ingressScenario struct {
	*netScenario
	httpURL, httpsAddr string
	// cert is the DER of the TLS Secret's certificate.
	cert []byte
}

// TestIngress is issue 29's ingress proof on the compose cluster, through
// the add-on make up deploys: from the host, a request for web.example to
// localhost's published port 80 reaches the demo behind an Ingress of the
// default class; HTTPS for secure.example presents the certificate of the
// Ingress' TLS Secret (made here) and reaches the demo too; the Ingresses
// get status.loadBalancer; an Ingress of another IngressClass is left
// alone (no route, no status).
func TestIngress(t *testing.T) {
	c := requireCluster(t)
	s := &ingressScenario{
		netScenario: &netScenario{scenario: &scenario{c: c}},
		httpURL:     "http://127.0.0.1:" + ingressPort("MINIK8S_HTTP_PORT", "80") + "/",
		httpsAddr:   "127.0.0.1:" + ingressPort("MINIK8S_HTTPS_PORT", "443"),
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		for _, args := range [][]string{
			{"delete", "namespace", ingNS, "--ignore-not-found"},
			{"delete", "ingressclass", ingOtherClass, "--ignore-not-found"},
			{"delete", "clusterrolebinding", ingMetricsReader, "--ignore-not-found"},
			{"delete", "clusterrole", ingMetricsReader, "--ignore-not-found"},
		} {
			if _, err := c.Kubectl(ctx, args...); err != nil {
				t.Errorf("kubectl-lite %s: %v", strings.Join(args, " "), err)
			}
		}
	})
	s.runSteps(t, 5*time.Minute, s.diagnoseIngress, []step{
		{"ControllerRolledOut", s.controllerRolledOut},
		{"Setup", s.setupIngress},
		{"HostRuleReachesDemo", s.hostRule},
		{"TLSPresentsSecretCertificate", s.tlsSecret},
		{"StatusLoadBalancer", s.statusLoadBalancer},
		{"OtherClassLeftAlone", s.otherClass},
		{"MetricsNeedAuthorization", s.metricsAuthorized},
	})
}

// controllerRolledOut: the add-on's DaemonSet is rolled out on the node
// labelled ingress-ready=true (node-1, whose ports compose publishes), and
// its IngressClass is the default one.
func (s *ingressScenario) controllerRolledOut() {
	s.kubectl("rollout", "status", "daemonset/ingress-controller", "-n", ingAddonNS, "--timeout=180s")
	var pods api.List[api.Pod]
	if err := s.c.KubectlJSON(s.ctx, &pods, "get", "pods", "-n", ingAddonNS, "-l", ingAddonLabels); err != nil {
		s.t.Fatal(err)
	}
	var nodes []string
	for _, p := range live(pods.Items) {
		nodes = append(nodes, p.Spec.NodeName)
	}
	if !slices.Contains(nodes, "node-1") {
		s.t.Errorf("controller pods on %v, want one on node-1 (labelled ingress-ready=true, ports published):\n%s", nodes, describe(pods.Items))
	}
	var class api.IngressClass
	if err := s.c.KubectlJSON(s.ctx, &class, "get", "ingressclass", "minik8s"); err != nil {
		s.t.Fatal(err)
	}
	if class.Spec.Controller != "minik8s.io/ingress-controller" || class.Annotations["ingressclass.kubernetes.io/is-default-class"] != "true" {
		s.t.Errorf("IngressClass minik8s: controller %q, annotations %v; want minik8s.io/ingress-controller, the default class",
			class.Spec.Controller, class.Annotations)
	}
}

// selfSignedTLS returns a certificate and key for host, PEM encoded, and
// the certificate's DER.
func selfSignedTLS(host string) (certPEM, keyPEM, der []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: host, Organization: []string{"minik8s e2e"}},
		DNSNames:     []string{host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), der, nil
}

// setupIngress applies the demo (two replicas of the page naming its pod
// behind Service web), the TLS Secret, another IngressClass and three
// Ingresses: other (that class, host other.example) first, so that the
// controller has seen it by the time it has written the others' status;
// web (no class: the default one's) and web-tls (secure.example, TLS).
func (s *ingressScenario) setupIngress() {
	certPEM, keyPEM, der, err := selfSignedTLS(ingSecureHost)
	if err != nil {
		s.t.Fatal(err)
	}
	s.cert = der
	b64 := base64.StdEncoding.EncodeToString
	s.applyStdin(webManifest(ingNS, 2) + `---
apiVersion: v1
kind: Secret
metadata:
  name: ` + ingTLSSecret + `
  namespace: ` + ingNS + `
type: kubernetes.io/tls
data:
  tls.crt: ` + b64(certPEM) + `
  tls.key: ` + b64(keyPEM) + `
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: ` + ingOtherClass + `
spec:
  controller: example.com/another-controller
`)
	s.applyStdin(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: other
  namespace: ` + ingNS + `
spec:
  ingressClassName: ` + ingOtherClass + `
  rules:
    - host: ` + ingOtherHost + `
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: web
                port:
                  number: 80
`)
	s.applyStdin(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  namespace: ` + ingNS + `
spec:
  rules:
    - host: ` + ingWebHost + `
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service:
                name: web
                port:
                  name: http
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web-tls
  namespace: ` + ingNS + `
spec:
  tls:
    - hosts: [` + ingSecureHost + `]
      secretName: ` + ingTLSSecret + `
  rules:
    - host: ` + ingSecureHost + `
      http:
        paths:
          - path: /
            pathType: Exact
            backend:
              service:
                name: web
                port:
                  number: 80
`)
	s.kubectl("rollout", "status", "deployment/web", "-n", ingNS, "--timeout=180s")
}

// webPodNames are the names of the demo's pods, which its page shows.
func (s *ingressScenario) webPodNames(ctx context.Context) ([]string, error) {
	var l api.List[api.Pod]
	if err := s.c.KubectlJSON(ctx, &l, "get", "pods", "-n", ingNS, "-l", "app=web"); err != nil {
		return nil, err
	}
	var names []string
	for _, p := range live(l.Items) {
		names = append(names, p.Name)
	}
	return names, nil
}

// servedByDemo says whether body is the page of one of the demo's pods.
func (s *ingressScenario) servedByDemo(ctx context.Context, body string) (bool, error) {
	names, err := s.webPodNames(ctx)
	if err != nil {
		return false, err
	}
	for _, n := range names {
		if strings.Contains(body, "<h1>"+n+"</h1>") {
			return true, nil
		}
	}
	return false, nil
}

// ingressGet sends GET url with Host host through hc and returns the status and
// up to 64 KiB of the body.
func ingressGet(ctx context.Context, hc *http.Client, url, host string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(b), err
}

// ingressClient reaches the published port directly (no proxy from the
// environment), a new connection per request.
func ingressClient() *http.Client {
	return &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
}

// hostRule: GET / with Host web.example on localhost's published port 80
// answers the demo's page; a host no rule names answers the controller's
// 404 (the route is the host's, not a catch-all).
func (s *ingressScenario) hostRule() {
	hc := ingressClient()
	s.within(3*time.Minute, "the demo's page through the Ingress for "+ingWebHost+" at "+s.httpURL, func(ctx context.Context) (bool, string, error) {
		code, body, err := ingressGet(ctx, hc, s.httpURL, ingWebHost)
		if err != nil {
			return false, err.Error(), nil
		}
		if code != http.StatusOK {
			return false, fmt.Sprintf("status %d: %.200s", code, body), nil
		}
		ok, err := s.servedByDemo(ctx, body)
		if err != nil {
			return false, "", Retry(err)
		}
		return ok, fmt.Sprintf("200 but not a demo pod's page: %.300s", body), nil
	})
	code, body, err := ingressGet(s.ctx, hc, s.httpURL, "nothing.example")
	if err != nil || code != http.StatusNotFound {
		s.t.Errorf("GET %s with Host nothing.example: %d %v %.200q; want the controller's 404", s.httpURL, code, err, body)
	}
}

// tlsSecret: a TLS handshake on localhost's published port 443 with
// server name secure.example gets exactly the Secret's certificate, and
// the request over it reaches the demo.
func (s *ingressScenario) tlsSecret() {
	var presented []byte
	hc := &http.Client{Transport: &http.Transport{
		Proxy:             nil,
		DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{
			ServerName: ingSecureHost,
			// The check is the exact certificate, below: the
			// controller's fallback is self-signed too.
			InsecureSkipVerify: true,
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 {
					return errors.New("no certificate presented")
				}
				presented = cs.PeerCertificates[0].Raw
				if !bytes.Equal(presented, s.cert) {
					return fmt.Errorf("presented %q (issuer %q), not the Secret's certificate",
						cs.PeerCertificates[0].Subject, cs.PeerCertificates[0].Issuer)
				}
				return nil
			},
		},
	}}
	url := "https://" + s.httpsAddr + "/"
	s.within(3*time.Minute, "the Secret's certificate and the demo's page at "+url+" for "+ingSecureHost, func(ctx context.Context) (bool, string, error) {
		code, body, err := ingressGet(ctx, hc, url, ingSecureHost)
		if err != nil {
			return false, err.Error(), nil
		}
		if code != http.StatusOK {
			return false, fmt.Sprintf("status %d: %.200s", code, body), nil
		}
		ok, err := s.servedByDemo(ctx, body)
		if err != nil {
			return false, "", Retry(err)
		}
		return ok, fmt.Sprintf("200 but not a demo pod's page: %.300s", body), nil
	})
	if !bytes.Equal(presented, s.cert) {
		s.t.Errorf("the last handshake presented another certificate than the Secret's")
	}
	// Another name gets the controller's own certificate, not this one.
	other := &tls.Config{ServerName: "unknown.example", InsecureSkipVerify: true}
	conn, err := (&tls.Dialer{Config: other, NetDialer: &net.Dialer{Timeout: 10 * time.Second}}).DialContext(s.ctx, "tcp", s.httpsAddr)
	if err != nil {
		s.t.Fatalf("TLS for unknown.example: %v", err)
	}
	defer conn.Close()
	if certs := conn.(*tls.Conn).ConnectionState().PeerCertificates; len(certs) == 0 || bytes.Equal(certs[0].Raw, s.cert) {
		s.t.Errorf("unknown.example got the Secret's certificate (or none): the certificate must follow the server name")
	}
}

// ingressStatus reads an Ingress' status.loadBalancer.ingress.
func (s *ingressScenario) ingressStatus(ctx context.Context, name string) (api.Ingress, error) {
	var ing api.Ingress
	err := s.c.KubectlJSON(ctx, &ing, "get", "ingress", name, "-n", ingNS)
	return ing, err
}

// statusLoadBalancer: the Ingresses of the controller's class, web by
// being created without one while minik8s is the default class (the
// DefaultIngressClass admission plugin writes it in), carry the address
// its pods publish (hostname localhost, where the compose cluster's
// Ingresses answer from the host).
func (s *ingressScenario) statusLoadBalancer() {
	if ing, err := s.ingressStatus(s.ctx, "web"); err != nil {
		s.t.Error(err)
	} else if ing.Spec.IngressClassName == nil || *ing.Spec.IngressClassName != "minik8s" {
		s.t.Errorf("Ingress web, created without a class: spec.ingressClassName %v, want minik8s (the default class)", ing.Spec.IngressClassName)
	}
	for _, name := range []string{"web", "web-tls"} {
		s.within(2*time.Minute, "status.loadBalancer of Ingress "+name, func(ctx context.Context) (bool, string, error) {
			ing, err := s.ingressStatus(ctx, name)
			if err != nil {
				return false, "", Retry(err)
			}
			lb := ing.Status.LoadBalancer.Ingress
			return len(lb) == 1 && lb[0].Hostname == ingPublished && lb[0].IP == "", fmt.Sprintf("%+v", lb), nil
		})
	}
}

// otherClass: the Ingress of the other class, created before the others
// whose status the controller has written since, has no status and no
// route: its host answers the controller's 404.
func (s *ingressScenario) otherClass() {
	ing, err := s.ingressStatus(s.ctx, "other")
	if err != nil {
		s.t.Fatal(err)
	}
	if lb := ing.Status.LoadBalancer.Ingress; len(lb) != 0 {
		s.t.Errorf("Ingress other (class %s) got status.loadBalancer %+v from a controller of another class", ingOtherClass, lb)
	}
	code, body, err := ingressGet(s.ctx, ingressClient(), s.httpURL, ingOtherHost)
	if err != nil || code != http.StatusNotFound {
		s.t.Errorf("GET with Host %s (an Ingress of class %s): %d %v %.200q; want 404, the host is not served", ingOtherHost, ingOtherClass, code, err, body)
	}
}

// metricsAuthorized: the controller's secure port, reached on node-1 at
// its pod's address with kubectl-lite, answers /healthz to anyone,
// refuses /metrics to an anonymous client (403) and serves it to a
// ServiceAccount allowed get on the non-resource URL /metrics: the add-on
// may create the TokenReviews and SubjectAccessReviews that takes.
func (s *ingressScenario) metricsAuthorized() {
	var pods api.List[api.Pod]
	if err := s.c.KubectlJSON(s.ctx, &pods, "get", "pods", "-n", ingAddonNS, "-l", ingAddonLabels); err != nil {
		s.t.Fatal(err)
	}
	podIP := ""
	for _, p := range live(pods.Items) {
		if p.Spec.NodeName == "node-1" && running(p) {
			podIP = p.Status.PodIP
		}
	}
	if podIP == "" {
		s.t.Fatalf("no running controller pod on node-1:\n%s", describe(pods.Items))
	}
	server := "https://" + net.JoinHostPort(podIP, "10254")
	raw := func(ctx context.Context, path string, extra ...string) (string, error) {
		args := append([]string{"kubectl-lite", "--server", server, "--insecure-skip-tls-verify"}, extra...)
		return s.c.Exec(ctx, "node-1", append(args, "get", "--raw", path)...)
	}
	if out, err := raw(s.ctx, "/healthz"); err != nil || out != "ok" {
		s.t.Errorf("anonymous GET %s/healthz: %q %v; want ok", server, out, err)
	}
	if out, err := raw(s.ctx, "/metrics"); err == nil || !strings.Contains(err.Error(), `cannot get path "/metrics"`) {
		s.t.Errorf("anonymous GET %s/metrics: %.200q %v; want 403 Forbidden", server, out, err)
	}
	s.applyStdin(`apiVersion: v1
kind: ServiceAccount
metadata:
  name: ` + ingMetricsReader + `
  namespace: ` + ingNS + `
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ` + ingMetricsReader + `
rules:
  - nonResourceURLs: ["/metrics"]
    verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ` + ingMetricsReader + `
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: ` + ingMetricsReader + `
subjects:
  - kind: ServiceAccount
    name: ` + ingMetricsReader + `
    namespace: ` + ingNS + `
`)
	token := strings.TrimSpace(s.kubectl("create", "token", ingMetricsReader, "-n", ingNS))
	// The controller caches a refusal for 10 s (kube's
	// --authorization-webhook-cache-unauthorized-ttl); the binding is new.
	s.within(time.Minute, "/metrics for ServiceAccount "+ingMetricsReader, func(ctx context.Context) (bool, string, error) {
		out, err := raw(ctx, "/metrics", "--token", token)
		if err != nil {
			return false, err.Error(), nil
		}
		return strings.Contains(out, "ingress_controller_requests_total{"), fmt.Sprintf("no ingress_controller_requests_total in %.300q", out), nil
	})
}

// diagnoseIngress logs the add-on's and the scenario's state.
func (s *ingressScenario) diagnoseIngress(ctx context.Context) {
	for _, args := range [][]string{
		{"get", "pods", "-n", ingAddonNS, "-o", "wide"},
		{"get", "daemonset", "-n", ingAddonNS},
		{"get", "ingressclass"},
		{"get", "ingress,services,endpointslices", "-n", ingNS},
		{"get", "nodes", "--show-labels"},
		{"logs", "-n", ingAddonNS, "-l", ingAddonLabels, "--tail=40"},
		{"get", "events", "-n", ingAddonNS},
	} {
		out, err := s.c.Kubectl(ctx, args...)
		if err != nil {
			out += err.Error()
		}
		s.t.Logf("kubectl-lite %s:\n%s", strings.Join(args, " "), out)
	}
}
