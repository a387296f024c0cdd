package realcomponents

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minik8s/minik8s/internal/pki"
)

// reviewRecorder is an HTTPS admission webhook that refuses everything
// with 403 "no thanks" and keeps the last request sent to each path.
type reviewRecorder struct {
	srv    *httptest.Server
	caPEM  []byte
	mu     sync.Mutex
	byPath map[string]map[string]any
}

func startReviewRecorder(t *testing.T) *reviewRecorder {
	t.Helper()
	ca, err := pki.NewCA("webhook-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueServing("webhook", nil, []net.IP{net.ParseIP("127.0.0.1")}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	rec := &reviewRecorder{caPEM: ca.CertPEM(), byPath: map[string]map[string]any{}}
	rec.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var raw struct {
			Request map[string]any `json:"request"`
		}
		var review admissionv1.AdmissionReview
		body := json.NewDecoder(r.Body)
		var data json.RawMessage
		if err := body.Decode(&data); err != nil || json.Unmarshal(data, &raw) != nil || json.Unmarshal(data, &review) != nil || review.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		rec.mu.Lock()
		rec.byPath[r.URL.Path] = raw.Request
		rec.mu.Unlock()
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: false,
			Result: &metav1.Status{Code: 403, Message: "no thanks", Reason: metav1.StatusReasonForbidden}}
		review.Request = nil
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&review)
	}))
	rec.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	rec.srv.StartTLS()
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *reviewRecorder) last(path string) map[string]any {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.byPath[path]
}

// TestConnectAdmissionAsKube sends the same exec, attach and portforward
// requests to the real kube-apiserver v1.37 and to minik8s' apiserver: a
// ValidatingAdmissionPolicy denying CONNECT pods/exec refuses an exec of
// a pod on no node with identical answers, an exec it admits goes on to
// the same "no host assigned" refusal, and a webhook registered for
// CONNECT receives the same AdmissionRequest from both (but for its uid
// and the user) and its denial is answered identically.
func TestConnectAdmissionAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)
	const ns = "/api/v1/namespaces/connect"
	both.must(t, http.StatusCreated, "POST", "/api/v1/namespaces", `{"metadata":{"name":"connect"}}`)
	for _, e := range both.each() {
		// kube's ServiceAccount admission needs the default account, which
		// no controller-manager creates here.
		if code, out := e.do(t, "POST", ns+"/serviceaccounts", `{"metadata":{"name":"default"}}`); code != http.StatusCreated && code != http.StatusConflict {
			t.Fatalf("%s: create the default service account: %d %v", e.name, code, out)
		}
	}
	both.must(t, http.StatusCreated, "POST", ns+"/pods",
		`{"metadata":{"name":"web"},"spec":{"automountServiceAccountToken":false,"containers":[{"name":"app","image":"busybox"}]}}`)
	both.must(t, http.StatusCreated, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", `{
		"metadata":{"name":"no-shells"},
		"spec":{"matchConstraints":{"resourceRules":[{"operations":["CONNECT"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods/exec"]}]},
		"validations":[{"expression":"object.kind == 'PodExecOptions' && object.command[0] != 'sh'","message":"no shells"}]}}`)
	both.must(t, http.StatusCreated, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
		`{"metadata":{"name":"no-shells-binding"},"spec":{"policyName":"no-shells","validationActions":["Deny"]}}`)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const execSh = ns + "/pods/web/exec?command=sh&stdin=true&stdout=true"
	for _, e := range both.each() {
		waitFor(ctx, t, e.name+" to enforce the policy", func() (bool, string) {
			code, out := e.do(t, "POST", execSh, "")
			return code == http.StatusUnprocessableEntity, fmt.Sprint(code, out)
		})
	}
	t.Run("policy denies exec", func(t *testing.T) {
		both.sameRefusal(t, "POST", execSh, "")
		both.sameRefusal(t, "GET", execSh, "")
		both.sameRefusal(t, "POST", ns+"/pods/ghost/exec?command=sh", "")
	})
	t.Run("admitted exec proceeds", func(t *testing.T) {
		both.sameRefusal(t, "POST", ns+"/pods/web/exec?command=ls&stdout=true", "")
		both.sameRefusal(t, "POST", ns+"/pods/web/attach?stdout=true", "")
		both.sameRefusal(t, "POST", ns+"/pods/web/exec?command=sh&dryRun=All", "")
	})

	t.Run("webhook", func(t *testing.T) {
		rec := startReviewRecorder(t)
		for _, e := range both.each() {
			cfg := fmt.Sprintf(`{"metadata":{"name":"connect"},"webhooks":[{"name":"connect.example.com",
				"clientConfig":{"url":%q,"caBundle":%q},
				"rules":[{"operations":["CONNECT"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods/exec","pods/attach","pods/portforward","pods/proxy","services/proxy"]}],
				"sideEffects":"None","admissionReviewVersions":["v1"]}]}`, rec.srv.URL+"/"+e.name, base64.StdEncoding.EncodeToString(rec.caPEM))
			e.must(t, http.StatusCreated, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", cfg)
		}
		const attach = ns + "/pods/web/attach?stdin=true&stderr=true&container=app"
		for _, e := range both.each() {
			waitFor(ctx, t, e.name+" to call the webhook", func() (bool, string) {
				code, out := e.do(t, "POST", attach, "")
				return rec.last("/"+e.name) != nil, fmt.Sprint(code, out)
			})
		}
		for _, path := range []string{
			ns + "/pods/web/exec?command=ls&command=-l&stdin=true&stdout=1&tty=false&container=app",
			attach,
			ns + "/pods/web/portforward?ports=8080,9090",
			// The proxy subresources are CONNECTs too: their path is
			// the options, the name the one in the request.
			ns + "/pods/http:web:8080/proxy/some/path/?q=1",
			ns + "/services/web/proxy",
		} {
			both.sameRefusal(t, "POST", path, "")
			reqs := []map[string]any{rec.last("/" + both.kube.name), rec.last("/" + both.ours.name)}
			for _, r := range reqs {
				delete(r, "uid")
				delete(r, "userInfo")
			}
			if !reflect.DeepEqual(reqs[0], reqs[1]) {
				kj, _ := json.MarshalIndent(reqs[0], "", "  ")
				oj, _ := json.MarshalIndent(reqs[1], "", "  ")
				t.Errorf("POST %s: kube-apiserver sent the webhook\n%s\nminik8s\n%s", path, kj, oj)
			} else {
				oj, _ := json.Marshal(reqs[1])
				t.Logf("POST %s: both sent the webhook %s", path, oj)
			}
		}
	})
}
