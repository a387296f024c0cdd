package integration

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/aggregator/aggregatortest"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
)

// flundersPath is a held backend's collection: a slow request, a
// read-only one (list) or a mutating one (create).
const flundersPath = aggregatortest.HeldPath

// limitClient speaks to the plain-HTTP port as its trusted administrator
// (system:masters, never limited) or, by impersonation, as alice of group
// testers (bound to cluster-admin), who is limited.
type limitClient struct {
	base string
	hc   *http.Client
}

// newLimitClient binds group testers to cluster-admin.
func newLimitClient(t *testing.T, s *apiservertest.Server) *limitClient {
	t.Helper()
	// One connection per request: a burst is as many connections.
	c := &limitClient{base: s.URL(), hc: &http.Client{Timeout: time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: 1000, MaxConnsPerHost: 0}}}
	if a := c.send(t, false, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
		`{"metadata":{"name":"testers"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"Group","apiGroup":"rbac.authorization.k8s.io","name":"testers"}]}`); a.code != 201 {
		t.Fatalf("bind testers: %d %s", a.code, a.body)
	}
	waitUntil(t, "RBAC to allow alice", func() (bool, string) {
		a := c.send(t, true, "GET", "/api/v1/namespaces/default/configmaps", "")
		return a.code == http.StatusOK, fmt.Sprintf("%d %s", a.code, a.body)
	})
	return c
}

// aliceOverTLS is alice of group testers on the secure port, with a client
// certificate of the cluster CA.
func aliceOverTLS(t *testing.T, s *apiservertest.Server) *limitClient {
	t.Helper()
	certPEM, keyPEM, err := s.PKI().CA.IssueClient("alice", []string{"testers"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.PKI().CA.Pool(), Certificates: []tls.Certificate{cert}}}
	return &limitClient{base: s.SecureURL(), hc: &http.Client{Transport: tr, Timeout: time.Minute}}
}

type answer struct {
	code       int
	retryAfter string
	body       string
	elapsed    time.Duration
}

func (c *limitClient) send(t testing.TB, alice bool, method, path, body string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if alice {
		req.Header.Set("Impersonate-User", "alice")
		req.Header.Set("Impersonate-Group", "testers")
	}
	start := time.Now()
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return answer{}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return answer{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(data), elapsed: time.Since(start)}
}

// watch opens a watch on configmaps in default as alice and returns the
// names of the objects its events carry, one per event.
func (c *limitClient) watch(t *testing.T, ctx context.Context) <-chan string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"/api/v1/namespaces/default/configmaps?watch=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Impersonate-User", "alice")
	req.Header.Set("Impersonate-Group", "testers")
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("watch: %d %s", resp.StatusCode, data)
	}
	names := make(chan string, 100)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var raw struct {
				Object struct {
					Metadata api.ObjectMeta `json:"metadata"`
				} `json:"object"`
			}
			if json.Unmarshal(sc.Bytes(), &raw) == nil {
				names <- raw.Object.Metadata.Name
			}
		}
		close(names)
	}()
	return names
}

// sees waits for the watch to deliver name.
func sees(t *testing.T, what string, names <-chan string, name string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case n, ok := <-names:
			if !ok {
				t.Errorf("%s ended before it delivered %s", what, name)
				return
			}
			if n == name {
				return
			}
		case <-timeout:
			t.Errorf("%s did not deliver %s in 10s", what, name)
			return
		}
	}
}

// metricValue is the value of the sample of /metrics that starts with
// prefix (a name and its labels), or -1.
func metricValue(t *testing.T, c *limitClient, prefix string) float64 {
	t.Helper()
	a := c.send(t, false, "GET", "/metrics", "")
	for _, line := range strings.Split(a.body, "\n") {
		if strings.HasPrefix(line, prefix) {
			var v float64
			if _, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, prefix)), "%g", &v); err == nil {
				return v
			}
		}
	}
	return -1
}

func waitUntil(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 30s: %s", what, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const tooManyRequestsBody = "Too many requests, please try again later.\n"

// TestMaxInFlight sends a burst of 500 slow read-only requests against
// --max-requests-inflight=50: 50 are served, the 450 others are answered
// 429 with Retry-After: 1 at once, as kube-apiserver's max-in-flight filter
// answers. While the read-only slots are full, watches opened before and
// during the burst stream events, mutating requests have their own limit
// (20) and a system:masters user is not limited; /healthz is limited like
// any read-only request, as in kube-apiserver (see
// internal/realcomponents' TestMaxInFlightAsKube).
func TestMaxInFlight(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) {
		o.MaxRequestsInFlight, o.MaxMutatingRequestsInFlight = 50, 20
	})
	backend := aggregatortest.StartHeld(t, ctx, s.AdminClient(t))
	c := newLimitClient(t, s)
	before := c.watch(t, ctx)

	// The burst: 500 slow lists at once.
	const burst, limit = 500, 50
	answers := make(chan answer, burst)
	var wg sync.WaitGroup
	for range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers <- c.send(t, true, "GET", flundersPath, "")
		}()
	}
	var refused []answer
	waitUntil(t, "the burst refused beyond the limit", func() (bool, string) {
		for {
			select {
			case a := <-answers:
				refused = append(refused, a)
				continue
			default:
			}
			break
		}
		return len(refused) >= burst-limit && backend.Held() == limit,
			fmt.Sprintf("%d answered, %d held by the backend", len(refused), backend.Held())
	})
	for _, a := range refused {
		if a.code != http.StatusTooManyRequests || a.retryAfter != "1" || a.body != tooManyRequestsBody {
			t.Fatalf("over the limit: %d Retry-After %q %q, want 429 Retry-After 1 %q", a.code, a.retryAfter, a.body, tooManyRequestsBody)
		}
	}
	if len(refused) != burst-limit {
		t.Fatalf("%d of %d answered while %d are held, want %d refused", len(refused), burst, limit, burst-limit)
	}
	if v := metricValue(t, c, `apiserver_current_inflight_requests{request_kind="readOnly"}`); v != limit {
		t.Errorf("apiserver_current_inflight_requests readOnly = %v, want %d", v, limit)
	}

	// While the read-only slots are full.
	if a := c.send(t, true, "GET", "/api/v1/namespaces/default/configmaps", ""); a.code != http.StatusTooManyRequests {
		t.Errorf("alice's list while full: %d %s, want 429", a.code, a.body)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if a := c.send(t, true, "GET", path, ""); a.code != http.StatusTooManyRequests {
			t.Errorf("alice's %s while full: %d %s, want 429 as kube-apiserver", path, a.code, a.body)
		}
		if a := c.send(t, false, "GET", path, ""); a.code != http.StatusOK {
			t.Errorf("system:masters' %s while full: %d %s, want 200", path, a.code, a.body)
		}
	}
	if a := c.send(t, false, "GET", "/api/v1/namespaces/default/configmaps", ""); a.code != http.StatusOK {
		t.Errorf("system:masters' list while full: %d %s, want 200", a.code, a.body)
	}
	// The limits are the server's, not a listener's: alice on the secure
	// port is refused too.
	if a := aliceOverTLS(t, s).send(t, false, "GET", "/api/v1/namespaces/default/configmaps", ""); a.code != http.StatusTooManyRequests {
		t.Errorf("alice's list on the secure port while full: %d %s, want 429", a.code, a.body)
	}
	during := c.watch(t, ctx)
	if a := c.send(t, true, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"during-reads"}}`); a.code != http.StatusCreated {
		t.Errorf("alice's create while the read-only slots are full: %d %s, want 201 (a limit of its own)", a.code, a.body)
	}
	sees(t, "the watch opened before the burst", before, "during-reads")
	sees(t, "the watch opened during the burst", during, "during-reads")

	// The mutating limit: 20 slow creates held, the 10 others refused.
	const mutatingBurst, mutatingLimit = 30, 20
	for range mutatingBurst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers <- c.send(t, true, "POST", flundersPath, `{"metadata":{"name":"x"}}`)
		}()
	}
	refused = refused[:0]
	waitUntil(t, "the creates refused beyond their limit", func() (bool, string) {
		for {
			select {
			case a := <-answers:
				refused = append(refused, a)
				continue
			default:
			}
			break
		}
		return len(refused) >= mutatingBurst-mutatingLimit && backend.Held() == limit+mutatingLimit,
			fmt.Sprintf("%d answered, %d held by the backend", len(refused), backend.Held())
	})
	for _, a := range refused {
		if a.code != http.StatusTooManyRequests || a.retryAfter != "1" {
			t.Fatalf("create over the limit: %d Retry-After %q %q", a.code, a.retryAfter, a.body)
		}
	}
	if a := c.send(t, true, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"refused"}}`); a.code != http.StatusTooManyRequests {
		t.Errorf("alice's create while the mutating slots are full: %d %s, want 429", a.code, a.body)
	}
	if a := c.send(t, false, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"by-admin"}}`); a.code != http.StatusCreated {
		t.Errorf("system:masters' create while full: %d %s, want 201", a.code, a.body)
	}
	sees(t, "the watch opened before the burst", before, "by-admin")
	sees(t, "the watch opened during the burst", during, "by-admin")
	if v := metricValue(t, c, `apiserver_request_terminations_total{code="429",component="apiserver",group="wardle.example.com",resource="flunders",scope="namespace",subresource="",verb="LIST",version="v1alpha1"}`); v != burst-limit {
		t.Errorf("apiserver_request_terminations_total of the lists = %v, want %d", v, burst-limit)
	}

	// Released, the held requests are answered and the slots free again.
	backend.Release()
	wg.Wait()
	close(answers)
	served := 0
	for a := range answers {
		if a.code == http.StatusOK || a.code == http.StatusCreated {
			served++
		}
	}
	if served != limit+mutatingLimit {
		t.Errorf("%d held requests answered after the release, want %d", served, limit+mutatingLimit)
	}
	if a := c.send(t, true, "GET", "/healthz", ""); a.code != http.StatusOK {
		t.Errorf("alice's /healthz after the burst: %d %s", a.code, a.body)
	}
}

// TestRequestTimeout: a request still unanswered at --request-timeout gets
// kube-apiserver's 504, sooner with a shorter ?timeout= and never later
// with a longer one; a bad ?timeout= is a 400; a watch outlives the
// timeout; an idle keep-alive connection is closed after the idle timeout.
func TestRequestTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The bounds below are generous above (a loaded machine answers
	// late) and strict below (nothing is answered before its deadline);
	// the default is long enough that a ?timeout= of 500ms is told from
	// it on any machine.
	const requestTimeout = 5 * time.Second
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) {
		o.RequestTimeout = requestTimeout
		o.ServingIdleTimeout = time.Second
	})
	aggregatortest.StartHeld(t, ctx, s.AdminClient(t))
	c := newLimitClient(t, s)
	const want = `{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}` + "\n"

	watch := c.watch(t, ctx)
	for _, tc := range []struct {
		query    string
		min, max time.Duration
	}{
		{"", requestTimeout, 3 * requestTimeout},
		{"?timeout=500ms", 500 * time.Millisecond, requestTimeout},
		{"?timeout=10m", requestTimeout, 3 * requestTimeout},
		{"?timeout=0s", requestTimeout, 3 * requestTimeout},
	} {
		a := c.send(t, true, "GET", flundersPath+tc.query, "")
		if a.code != http.StatusGatewayTimeout || a.body != want {
			t.Errorf("slow list%s: %d %q, want 504 %q", tc.query, a.code, a.body, want)
		}
		if a.elapsed < tc.min || a.elapsed > tc.max {
			t.Errorf("slow list%s answered after %v, want in [%v, %v]", tc.query, a.elapsed, tc.min, tc.max)
		}
	}
	a := c.send(t, true, "GET", "/api/v1/namespaces?timeout=soon", "")
	if a.code != http.StatusBadRequest || !strings.Contains(a.body, `"message":"invalid timeout specified in the request URL - time: invalid duration \"soon\""`) {
		t.Errorf("bad timeout: %d %s", a.code, a.body)
	}
	// The watch opened before the slow requests is still open after them.
	if a := c.send(t, false, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"after-timeouts"}}`); a.code != http.StatusCreated {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	sees(t, "a watch past the request timeout", watch, "after-timeouts")

	// An idle keep-alive connection is closed by the server.
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	idleSince := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("idle connection: read %v, want EOF (closed by the server)", err)
	} else if idle := time.Since(idleSince); idle < 900*time.Millisecond || idle > 20*time.Second {
		t.Errorf("idle connection closed after %v, want about 1s", idle)
	}
}
