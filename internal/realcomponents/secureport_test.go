package realcomponents

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/daemon/daemontest"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/internal/pki"
)

// delegatingCluster is an apiserver the components delegate their
// authentication and authorization to.
type delegatingCluster struct {
	name string
	// admin is a kubeconfig of system:masters; scheduler and
	// controllerManager are the components' own.
	admin, scheduler, controllerManager string
	// ca signs client certificates the apiserver (and, through the
	// extension-apiserver-authentication ConfigMap, the components)
	// accept.
	ca *pki.CA
}

// securePair is a real component and ours, each serving HTTPS with the
// same delegation flags.
type securePair struct {
	kube, ours *component
}

// startSecure runs bin (a real one from the oracle, or ours) with
// kubeconfig as its client and its delegated authentication and
// authorization, serving HTTPS on a free loopback port with a
// self-signed certificate.
func startSecure(t *testing.T, name, bin, kubeconfig string, extra ...string) *component {
	t.Helper()
	port := freePort(t)
	c := launch(t, name, bin, append([]string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + t.TempDir(),
	}, extra...)...)
	c.port = port
	return c
}

// TestSecurePortsAsKube: minik8s' scheduler and controller-manager serve
// their endpoints as kube-scheduler and kube-controller-manager v1.37 do
// (issue 26 item 10): HTTPS, every request authenticated (a client
// certificate of the cluster's CA, looked up in
// extension-apiserver-authentication, or a token the apiserver vouches
// for in a TokenReview; else anonymous) and authorized (/healthz, /readyz
// and /livez open, system:masters allowed, the rest a
// SubjectAccessReview). The same requests get the same codes and Status
// bodies from the real component and from ours, both delegating to
// kube-apiserver, then both delegating to minik8s' apiserver.
func TestSecurePortsAsKube(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real kube-apiserver, kube-scheduler and kube-controller-manager (skipped with -short)")
	}
	schedBin := daemontest.Build(t, "github.com/minik8s/minik8s/scheduler")
	cmBin := daemontest.Build(t, "github.com/minik8s/minik8s/controller-manager")

	k := startKubeAPIServer(t)
	s := apiservertest.Start(t, apiservertest.WithTLS)
	clusters := []delegatingCluster{
		{name: "kube-apiserver", admin: k.kubeconfig(t, "kubernetes-admin", "system:masters"),
			scheduler: k.kubeconfig(t, "system:kube-scheduler"), controllerManager: k.kubeconfig(t, "system:kube-controller-manager"), ca: k.ca},
		{name: "minik8s apiserver", admin: s.Options.WriteKubeconfig,
			scheduler:         filepath.Join(s.Options.CertDir, "scheduler.kubeconfig"),
			controllerManager: filepath.Join(s.Options.CertDir, "controller-manager.kubeconfig"), ca: s.PKI().CA},
	}
	for _, cl := range clusters {
		t.Run(cl.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			// scraper may get /metrics (bound to system:monitoring),
			// nobody may not.
			for _, sa := range []string{"scraper", "nobody"} {
				kubectl(ctx, t, cl.admin, "", "create", "serviceaccount", sa, "-n", "default")
			}
			kubectl(ctx, t, cl.admin, "", "create", "clusterrolebinding", "scraper-monitoring", "--clusterrole=system:monitoring", "--serviceaccount=default:scraper")
			scraper := strings.TrimSpace(kubectl(ctx, t, cl.admin, "", "create", "token", "scraper", "-n", "default"))
			nobody := strings.TrimSpace(kubectl(ctx, t, cl.admin, "", "create", "token", "nobody", "-n", "default"))

			pairs := map[string]securePair{
				"scheduler": {
					kube: startSecure(t, "kube-scheduler", oracle.Path(t, "kube-scheduler"), cl.scheduler),
					ours: startSecure(t, "scheduler", schedBin, cl.scheduler),
				},
				"controller-manager": {
					kube: startSecure(t, "kube-controller-manager", oracle.Path(t, "kube-controller-manager"), cl.controllerManager, "--controllers=cronjob-controller"),
					ours: startSecure(t, "controller-manager", cmBin, cl.controllerManager, "--controllers=cronjob"),
				},
			}
			certOf := func(ca *pki.CA, user string, groups ...string) *tls.Certificate {
				c, key, err := ca.IssueClient(user, groups, time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				cert, err := tls.X509KeyPair(c, key)
				if err != nil {
					t.Fatal(err)
				}
				return &cert
			}
			masters := certOf(cl.ca, "kubernetes-admin", "system:masters")
			otherCA, err := pki.NewCA("not-the-cluster", time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name, method, path, token string
				cert                      *tls.Certificate
				offer                     certOffer
				code                      int
			}{
				{"healthz without credentials", "GET", "/healthz", "", nil, 0, 200},
				{"metrics without credentials", "GET", "/metrics", "", nil, 0, 403},
				{"metrics with a token nobody knows", "GET", "/metrics", "not-a-token", nil, 0, 401},
				{"healthz with a token nobody knows", "GET", "/healthz", "not-a-token", nil, 0, 401},
				{"metrics as a user without the right", "GET", "/metrics", nobody, nil, 0, 403},
				{"metrics as a user bound to system:monitoring", "GET", "/metrics", scraper, nil, 0, 200},
				{"metrics posted by that user", "POST", "/metrics", scraper, nil, 0, 403},
				{"metrics with a client certificate without the right", "GET", "/metrics", "", certOf(cl.ca, "alice", "dev"), offerIfAsked, 403},
				{"metrics as system:masters", "GET", "/metrics", "", masters, offerIfAsked, 200},
				{"metrics as system:masters with a bad token too", "GET", "/metrics", "not-a-token", masters, offerIfAsked, 200},
				// The server names the CAs it accepts: a Go client keeps
				// another CA's certificate to itself and is anonymous.
				{"metrics with a certificate of another CA, offered if asked", "GET", "/metrics", "", certOf(otherCA, "kubernetes-admin", "system:masters"), offerIfAsked, 403},
				{"healthz with a certificate of another CA, offered anyway", "GET", "/healthz", "", certOf(otherCA, "kubernetes-admin", "system:masters"), offerAlways, 401},
				{"a path nothing serves", "GET", "/nothing", "", nil, 0, 403},
			}
			for _, pn := range []string{"scheduler", "controller-manager"} {
				pair := pairs[pn]
				for _, c := range []*component{pair.kube, pair.ours} {
					waitFor(ctx, t, c.name+" /healthz", func() (bool, string) {
						select {
						case <-c.Done():
							t.Fatalf("%s exited: %s", c.name, c.ExitStatus())
						default:
						}
						code, body, err := c.healthz()
						if err != nil {
							return false, err.Error()
						}
						return code == 200, fmt.Sprintf("%d %s", code, body)
					})
					// The real components read the client CA from
					// extension-apiserver-authentication after they
					// serve: wait until a certificate authenticates.
					waitFor(ctx, t, c.name+" to accept client certificates", func() (bool, string) {
						code, body := secureRequest(t, c, "GET", "/metrics", "", masters, offerIfAsked)
						return code == 200, fmt.Sprintf("%d %v", code, body["message"])
					})
				}
				for _, tc := range cases {
					t.Run(pn+"/"+tc.name, func(t *testing.T) {
						kc, kb := secureRequest(t, pair.kube, tc.method, tc.path, tc.token, tc.cert, tc.offer)
						oc, ob := secureRequest(t, pair.ours, tc.method, tc.path, tc.token, tc.cert, tc.offer)
						if kc != tc.code {
							t.Errorf("%s answered %d, the case expects %d: %v", pair.kube.name, kc, tc.code, kb)
						}
						if oc != kc {
							t.Errorf("%s %s: %s %d, %s %d: %v", tc.method, tc.path, pair.kube.name, kc, pair.ours.name, oc, ob)
						}
						if kc != 200 && !reflect.DeepEqual(kb, ob) {
							kj, _ := json.Marshal(kb)
							oj, _ := json.Marshal(ob)
							t.Errorf("%s %s:\n%s: %s\n%s: %s", tc.method, tc.path, pair.kube.name, kj, pair.ours.name, oj)
						}
					})
				}
			}
		})
	}
}

// certOffer is when a client presents its certificate.
type certOffer int

const (
	// offerIfAsked presents it only when the server names its CA among
	// those it accepts (Go's crypto/tls picking from its certificates).
	offerIfAsked certOffer = iota
	// offerAlways presents it whatever the server names (curl --cert).
	offerAlways
)

// secureRequest sends a request to c's secure port with an optional
// bearer token and client certificate, and returns the code and the body
// (decoded, or as {"text": BODY}).
func secureRequest(t *testing.T, c *component, method, path, token string, cert *tls.Certificate, offer certOffer) (int, map[string]any) {
	t.Helper()
	tc := &tls.Config{InsecureSkipVerify: true} // self-signed serving certificates
	switch {
	case cert == nil:
	case offer == offerAlways:
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	default:
		tc.Certificates = []tls.Certificate{*cert}
	}
	e := &endpoint{name: c.name, base: fmt.Sprintf("https://127.0.0.1:%d", c.port),
		hc: &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 10 * time.Second}}
	if token != "" {
		e.hc.Transport = bearer{token, e.hc.Transport}
	}
	return e.do(t, method, path, "")
}

// bearer adds "Authorization: Bearer TOKEN" to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestMetricsAuthorizationAsKube: the apiserver's /metrics answers as
// kube-apiserver v1.37's (issue 26 item 10): a user without get on the
// path gets the same 403, while the health checks stay open to him (a
// path minik8s does not serve, such as /metrics/slis, is 404 to anyone,
// where kube-apiserver authorizes it first); a
// member of system:monitoring, or a user bound to that role, gets the
// metrics; the bootstrap role and binding are kube's.
func TestMetricsAuthorizationAsKube(t *testing.T) {
	k := startKubeAPIServer(t)
	s := apiservertest.Start(t, apiservertest.WithTLS)
	both := rbacUsers{
		apiservers: apiservers{kube: k.admin, ours: &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}},
		kubeCA:     k.ca, oursCA: s.PKI().CA, oursBase: s.SecureURL(),
	}
	alice := both.as(t, "alice", "dev")
	alice.sameRefusal(t, "GET", "/metrics", "")
	alice.must(t, 200, "GET", "/healthz", "")
	alice.must(t, 200, "GET", "/readyz", "")
	both.as(t, "prometheus", "system:monitoring").must(t, 200, "GET", "/metrics", "")

	both.must(t, 201, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
		`{"metadata":{"name":"alice-monitoring"},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"alice"}],"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"system:monitoring"}}`)
	alice.eventually(t, 200, "GET", "/metrics", "", "")

	for _, path := range []string{"/apis/rbac.authorization.k8s.io/v1/clusterroles/system:monitoring", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:monitoring"} {
		var got [2]map[string]any
		for i, e := range both.each() {
			o := e.must(t, 200, "GET", path, "")
			delete(o, "metadata")
			got[i] = o
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			kj, _ := json.Marshal(got[0])
			oj, _ := json.Marshal(got[1])
			t.Errorf("GET %s:\nkube-apiserver: %s\nminik8s:        %s", path, kj, oj)
		}
	}
}
