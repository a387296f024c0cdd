package realcomponents

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/aggregator/aggregatortest"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
)

// limitAnswer is what the in-flight and timeout tests compare of an
// answer: these refusals are not always a Status, so the headers that
// tell a client what it got count too.
type limitAnswer struct {
	Code        int
	ContentType string
	RetryAfter  string
	Body        string
}

func (e *endpoint) limitAnswer(t *testing.T, method, path, body string) limitAnswer {
	t.Helper()
	a, err := e.send(method, path, body)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", e.name, method, path, err)
	}
	return a
}

// send is limitAnswer for any goroutine: the error is only for no answer.
func (e *endpoint) send(method, path, body string) (limitAnswer, error) {
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	if err != nil {
		return limitAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.hc.Do(req)
	if err != nil {
		return limitAnswer{}, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return limitAnswer{Code: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), RetryAfter: resp.Header.Get("Retry-After"), Body: string(data)}, nil
}

// slowServer is one apiserver of the comparison with a way to hold a
// request of each kind in its in-flight limit.
type slowServer struct {
	name string
	// slow speaks as a user whose requests hold a slot; bob as one who is
	// limited; admin as system:masters.
	slow, bob, admin *endpoint
	// held is how many requests the extension apiserver holds.
	held, heldWrites func() int
}

// hold sends slow's request until the server holds it (an internal
// request of kube-apiserver's may take the one slot for a moment), and
// returns its answer to come and when the request that is held was sent.
func (s *slowServer) hold(t *testing.T, method, path string) (<-chan limitAnswer, time.Time) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
retry:
	for {
		answer := make(chan limitAnswer, 1)
		sent := time.Now()
		go func() {
			a, err := s.slow.send(method, path, `{"metadata":{"name":"held"}}`)
			if err != nil {
				a.Body = err.Error()
			}
			answer <- a
		}()
		// A write is held when the backend holds a POST: the read held
		// before may still be there (kube-apiserver does not cancel it at
		// its timeout), so a count of every request would say "held" at
		// once, and bob's create could pass the limit (seen in a CI run).
		heldNow := s.held
		if method == http.MethodPost {
			heldNow = s.heldWrites
		}
		for heldNow() == 0 {
			select {
			case a := <-answer:
				if time.Now().After(deadline) {
					t.Fatalf("%s: %s %s was never held: last answer %+v", s.name, method, path, a)
				}
				continue retry
			case <-time.After(20 * time.Millisecond):
			}
		}
		return answer, sent
	}
}

// limits is what one server answered in the scenario.
type limits struct {
	ReadOverLimit, WriteOverLimit         limitAnswer
	HealthzOverLimit, ReadyzOverLimit     limitAnswer
	MastersHealthzOverLimit, TimedOutRead limitAnswer
	TimedOutWrite                         limitAnswer
	ReadElapsedOK                         bool
}

func (s *slowServer) scenario(t *testing.T, timeout time.Duration) limits {
	t.Helper()
	var l limits
	// The timeout counts from the send of the request that is held: an
	// earlier attempt refused (an internal request held the slot) does
	// not count.
	read, start := s.hold(t, "GET", aggregatortest.HeldPath)
	l.ReadOverLimit = s.bob.limitAnswer(t, "GET", "/api/v1/namespaces/default/configmaps", "")
	l.HealthzOverLimit = s.bob.limitAnswer(t, "GET", "/healthz", "")
	l.ReadyzOverLimit = s.bob.limitAnswer(t, "GET", "/readyz", "")
	l.MastersHealthzOverLimit = s.admin.limitAnswer(t, "GET", "/healthz", "")
	l.TimedOutRead = <-read
	elapsed := time.Since(start)
	l.ReadElapsedOK = elapsed >= timeout && elapsed < 3*timeout // generous: a loaded machine answers late
	write, _ := s.hold(t, "POST", aggregatortest.HeldPath)
	l.WriteOverLimit = s.bob.limitAnswer(t, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"bobs"}}`)
	l.TimedOutWrite = <-write
	return l
}

// TestMaxInFlightAsKube runs kube-apiserver v1.37 with
// --enable-priority-and-fairness=false --max-requests-inflight=1
// --max-mutating-requests-inflight=1 --request-timeout=4s, and minik8s
// with the same limits, holds one slow request of each kind in each (a
// list or a create of an extension apiserver's resource that the
// extension apiserver does not answer), and compares: the 429 of a read
// and of a write over the limit (plain text, Retry-After: 1), the health
// checks of a user over the limit (limited too) and of system:masters
// (never), and the 504 of the slow request at the timeout.
func TestMaxInFlightAsKube(t *testing.T) {
	const timeout = 4 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// kube-apiserver reaches the extension apiserver at its endpoint, not
	// through a Service IP nothing routes here.
	k := startKubeAPIServer(t, "--enable-priority-and-fairness=false", "--max-requests-inflight=1", "--max-mutating-requests-inflight=1",
		"--request-timeout="+timeout.String(), "--enable-aggregator-routing=true")
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) {
		o.MaxRequestsInFlight, o.MaxMutatingRequestsInFlight, o.RequestTimeout = 1, 1, timeout
	})
	ours := &endpoint{name: "minik8s", base: s.URL(), hc: &http.Client{Timeout: 30 * time.Second}}
	users := rbacUsers{apiservers: apiservers{kube: k.admin, ours: ours}, kubeCA: k.ca, oursCA: s.PKI().CA, oursBase: s.SecureURL()}
	users.must(t, http.StatusCreated, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
		`{"metadata":{"name":"slow"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"User","apiGroup":"rbac.authorization.k8s.io","name":"slow"}]}`)
	kubeBackend := aggregatortest.StartHeld(t, ctx, newClient(t, k.kubeconfig(t, "kubernetes-admin", "system:masters")))
	oursBackend := aggregatortest.StartHeld(t, ctx, s.AdminClient(t))

	slow, bob := users.as(t, "slow"), users.as(t, "bob")
	servers := []*slowServer{
		{name: "kube-apiserver", slow: slow.kube, bob: bob.kube, admin: k.admin, held: kubeBackend.Held, heldWrites: kubeBackend.HeldWrites},
		{name: "minik8s", slow: slow.ours, bob: bob.ours, admin: ours, held: oursBackend.Held, heldWrites: oursBackend.HeldWrites},
	}
	// RBAC allows slow's requests once each authorizer's cache has the
	// binding.
	slow.eventually(t, http.StatusOK, "GET", "/api/v1/namespaces/default/configmaps", "", "")

	var got [2]limits
	for i, srv := range servers {
		got[i] = srv.scenario(t, timeout)
		b, _ := json.MarshalIndent(got[i], "", "  ")
		t.Logf("%s:\n%s", srv.name, b)
	}
	if got[0] != got[1] {
		kb, _ := json.MarshalIndent(got[0], "", "  ")
		ob, _ := json.MarshalIndent(got[1], "", "  ")
		t.Errorf("kube-apiserver:\n%s\nminik8s:\n%s", kb, ob)
	}
	if got[0].ReadOverLimit.Code != http.StatusTooManyRequests || got[0].TimedOutRead.Code != http.StatusGatewayTimeout {
		t.Errorf("kube-apiserver did not refuse as the scenario expects: %+v", got[0])
	}
}
