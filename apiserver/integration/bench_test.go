package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
)

// The benchmarks here report, in one run on one machine, the figures the
// apiserver is judged by: raw etcd txn/s through clientv3 against the same
// embedded etcd, pod creates/s at 1 and 64 clients, LIST latency for 10,000
// pods, watch delivery latency with 1 and 1,000 watchers, and the idle RSS
// of the apiserver process. Compare them as ratios; BenchmarkCreateVsEtcd
// measures the creates-to-txn ratio itself, from adjacent rounds, and
// cpu-µs/op is the process's CPU per operation (server, etcd and load
// generator together), which a busy machine disturbs less than throughput.
//
// Requests take the path real clients take: HTTPS with a client
// certificate of benchUser, who is neither an administrator nor a node, so
// every request is authenticated and then authorized by RBAC (through a
// ClusterRoleBinding). Rows and figures named insecure use the loopback
// plain-HTTP port instead, which skips TLS, authentication and
// authorization: the difference is what those cost.

// benchUser is the identity the benchmarks act as over HTTPS.
const benchUser = "bench-user"

// benchEnv is a test apiserver serving HTTPS as shipped and, for the
// labelled insecure rows, its loopback plain-HTTP port.
type benchEnv struct {
	s *apiservertest.Server
	// secureURL and secureAddr are the HTTPS side; tls is a client
	// configuration with benchUser's certificate, for HTTP/1.1.
	secureURL, secureAddr string
	tls                   *tls.Config
	// hc is an HTTP/1.1 keep-alive client with benchUser's certificate.
	hc *http.Client
}

func benchServer(b *testing.B) *benchEnv {
	b.Helper()
	s := apiservertest.Start(b, apiservertest.WithTLS)
	e := &benchEnv{s: s, secureURL: s.SecureURL(), secureAddr: strings.TrimPrefix(s.SecureURL(), "https://")}
	certPEM, keyPEM, err := s.PKI().CA.IssueClient(benchUser, nil, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		b.Fatal(err)
	}
	e.tls = &tls.Config{RootCAs: s.PKI().CA.Pool(), Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
	tr := &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256, TLSClientConfig: e.tls}
	b.Cleanup(tr.CloseIdleConnections)
	e.hc = &http.Client{Transport: tr, Timeout: time.Minute}
	grantBenchUser(b, s)
	return e
}

// grantBenchUser lets benchUser create, read, list and watch pods and
// configmaps in every namespace (a ClusterRole and a ClusterRoleBinding, as
// an administrator writes them) and waits until RBAC allows it.
func grantBenchUser(b *testing.B, s *apiservertest.Server) {
	ctx := context.Background()
	admin := s.AdminClient(b)
	role := &api.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "bench"}, Rules: []api.PolicyRule{{
		Verbs: []string{"create", "get", "list", "watch"}, APIGroups: []string{""}, Resources: []string{"pods", "configmaps"}}}}
	if _, err := client.Resource[api.ClusterRole](admin).Create(ctx, role); err != nil {
		b.Fatal(err)
	}
	binding := &api.ClusterRoleBinding{ObjectMeta: api.ObjectMeta{Name: "bench"},
		Subjects: []api.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: benchUser}},
		RoleRef:  api.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "bench"}}
	if _, err := client.Resource[api.ClusterRoleBinding](admin).Create(ctx, binding); err != nil {
		b.Fatal(err)
	}
	c := benchClient(b, s)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := client.Resource[api.Pod](c).Namespace("default").List(ctx, client.ListOptions{Limit: 1})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s still cannot list pods: %v", benchUser, err)
		}
	}
}

// benchClient is the project's own API client (HTTP/2 over TLS, as
// client-go and kubectl-lite talk) authenticated as benchUser, unthrottled.
func benchClient(b *testing.B, s *apiservertest.Server) *client.Client {
	certPEM, keyPEM, err := s.PKI().CA.IssueClient(benchUser, nil, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: s.SecureURL(), CAData: s.PKI().CA.CertPEM(), CertData: certPEM, KeyData: keyPEM, QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// podTemplate is a pod manifest with a name placeholder, encoded once so the
// load generator (in the same process) spends its CPU on HTTP, not JSON.
var podTemplate, _ = json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod",
	"metadata": map[string]any{"name": "NAME_PLACEHOLDER", "labels": map[string]string{"app": "bench"}},
	"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "busybox:1.36",
		"resources": map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "64Mi"}}}}}})

func podBody(name string) []byte {
	return bytes.Replace(podTemplate, []byte("NAME_PLACEHOLDER"), []byte(name), 1)
}

func post(hc *http.Client, url string, body []byte) error {
	resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// poster is a lean HTTP/1.1 load generator for creates: keep-alive
// connections, each used by one request at a time, writing a request and
// reading the response in the calling goroutine. net/http's client hands
// every request to two goroutines per connection; in this one process, its
// CPU (about an eighth of a create's) would be taken from the apiserver.
type poster struct {
	host, path string
	// mediaType is the body's Content-Type and the Accept header
	// (application/json unless set).
	mediaType string
	dial      func() (net.Conn, error)
	conns     chan *posterConn
}

type posterConn struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

// newSecurePoster posts over HTTPS as benchUser (TLS, client certificate
// authentication, RBAC): the path real clients take.
func newSecurePoster(b *testing.B, e *benchEnv, path string) *poster {
	return newPoster(b, e.secureAddr, path, func() (net.Conn, error) { return tls.Dial("tcp", e.secureAddr, e.tls) })
}

// newInsecurePoster posts to the loopback plain-HTTP port: no TLS, no
// authentication, no authorization.
func newInsecurePoster(b *testing.B, e *benchEnv, path string) *poster {
	addr := e.s.Addr()
	return newPoster(b, addr, path, func() (net.Conn, error) { return net.Dial("tcp", addr) })
}

func newPoster(b *testing.B, host, path string, dial func() (net.Conn, error)) *poster {
	p := &poster{host: host, path: path, mediaType: "application/json", dial: dial, conns: make(chan *posterConn, 1024)}
	b.Cleanup(func() {
		for {
			select {
			case c := <-p.conns:
				c.c.Close()
			default:
				return
			}
		}
	})
	return p
}

// post creates body and fails unless the answer is 201 Created.
func (p *poster) post(body []byte) error {
	var c *posterConn
	select {
	case c = <-p.conns:
	default:
		nc, err := p.dial()
		if err != nil {
			return err
		}
		c = &posterConn{c: nc, br: bufio.NewReader(nc), bw: bufio.NewWriter(nc)}
	}
	fmt.Fprintf(c.bw, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nAccept: %s\r\nContent-Length: %d\r\n\r\n",
		p.path, p.host, p.mediaType, p.mediaType, len(body))
	c.bw.Write(body)
	err := c.bw.Flush()
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(c.br, nil)
	}
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if err != nil {
		c.c.Close()
		return err
	}
	if resp.Close {
		c.c.Close()
	} else {
		p.conns <- c
	}
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// BenchmarkEtcdTxn is the baseline: create-if-absent transactions through
// clientv3 (the apiserver's own client) straight to the embedded etcd,
// serially and from 64 goroutines, writing the value the apiserver stores
// for a benchmark pod under keys of the same length as the pods' keys.
func BenchmarkEtcdTxn(b *testing.B) {
	e := benchServer(b)
	s := e.s
	cli := s.Backend().Client()
	if err := post(e.hc, e.secureURL+"/api/v1/namespaces/default/pods", podBody("p-1")); err != nil {
		b.Fatal(err)
	}
	prefix := strings.TrimSuffix(s.Options.EtcdPrefix, "/") + "/"
	stored, err := cli.Get(context.Background(), prefix+"pods/default/p-1")
	if err != nil || len(stored.Kvs) != 1 {
		b.Fatalf("read the stored pod: %v", err)
	}
	value := stored.Kvs[0].Value
	var n atomic.Int64
	for _, clients := range []int{1, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			runConcurrent(b, clients, func() error {
				// Not below pods/: the pods' watch cache does not see them.
				key := fmt.Sprintf("%spodz/default/p-%d", prefix, n.Add(1))
				_, err := cli.Txn(context.Background()).
					If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
					Then(clientv3.OpPut(key, string(value))).Commit()
				return err
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "txn/s")
			b.ReportMetric(float64(len(value)), "value-bytes")
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// BenchmarkPodCreate measures pod creates through the whole request path
// (decode, default, admit, validate, etcd txn, encode, and the watch cache
// taking in the event), in rows by how the requests arrive:
//
//   - https-rbac-h2: the project's API client (HTTP/2 over TLS, as client-go
//     and kubectl-lite send), authenticated as benchUser, authorized by RBAC;
//   - https-rbac-http1: the same identity and checks through the lean
//     HTTP/1.1 poster, whose own CPU is small;
//   - insecure-no-auth-http1: the same poster on the loopback plain-HTTP
//     port, which skips TLS, authentication and authorization.
func BenchmarkPodCreate(b *testing.B) {
	e := benchServer(b)
	const path = "/api/v1/namespaces/default/pods"
	var n atomic.Int64
	c := benchClient(b, e.s)
	secure, insecure := newSecurePoster(b, e, path), newInsecurePoster(b, e, path)
	for _, row := range []struct {
		name   string
		create func() error
	}{
		{"https-rbac-h2", func() error {
			_, err := c.Do(context.Background(), client.Request{Method: http.MethodPost, Path: path, Body: podBody(fmt.Sprintf("p-%d", n.Add(1)))})
			return err
		}},
		{"https-rbac-http1", func() error { return secure.post(podBody(fmt.Sprintf("p-%d", n.Add(1)))) }},
		{"insecure-no-auth-http1", func() error { return insecure.post(podBody(fmt.Sprintf("p-%d", n.Add(1)))) }},
	} {
		for _, clients := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", row.name, clients), func(b *testing.B) {
				b.ResetTimer()
				start, cpu0 := time.Now(), cpuTime()
				runConcurrent(b, clients, row.create)
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// BenchmarkCreateVsEtcd measures the target "creates/s at 64 clients at
// least half of raw etcd txn/s" in a way a busy machine disturbs less than
// separate benchmarks: each iteration runs a round of raw etcd transactions
// (a stored pod's value, as BenchmarkEtcdTxn), a round of pod creates over
// HTTPS as benchUser (TLS, authentication, RBAC) and a round of creates on
// the insecure port (none of those), each from 64 clients through the lean
// poster against the same apiserver. It reports the medians over
// iterations of creates/s ÷ txn/s of adjacent rounds: ratio (HTTPS) and
// insecure-ratio. cpu-ratio and insecure-cpu-ratio are the same from the
// process's CPU time per operation (txn CPU ÷ create CPU), which other
// processes disturb least. Use -benchtime Nx (N rounds, e.g. 9x).
func BenchmarkCreateVsEtcd(b *testing.B) {
	const clients, round = 64, 2000
	const path = "/api/v1/namespaces/default/pods"
	e := benchServer(b)
	s := e.s
	cli := s.Backend().Client()
	if err := post(e.hc, e.secureURL+path, podBody("p-0")); err != nil {
		b.Fatal(err)
	}
	prefix := strings.TrimSuffix(s.Options.EtcdPrefix, "/") + "/"
	stored, err := cli.Get(context.Background(), prefix+"pods/default/p-0")
	if err != nil || len(stored.Kvs) != 1 {
		b.Fatalf("read the stored pod: %v", err)
	}
	value := string(stored.Kvs[0].Value)
	var n atomic.Int64
	txn := func() error {
		key := fmt.Sprintf("%spodz/default/p-%d", prefix, n.Add(1))
		_, err := cli.Txn(context.Background()).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, value)).Commit()
		return err
	}
	secure, insecure := newSecurePoster(b, e, path), newInsecurePoster(b, e, path)
	create := func() error { return secure.post(podBody(fmt.Sprintf("p-%d", n.Add(1)))) }
	createInsecure := func() error { return insecure.post(podBody(fmt.Sprintf("p-%d", n.Add(1)))) }
	measure := func(fn func() error) (perSec float64, cpu time.Duration) {
		start, cpu0 := time.Now(), cpuTime()
		if err := fill(round, clients, fn); err != nil {
			b.Fatal(err)
		}
		return round / time.Since(start).Seconds(), (cpuTime() - cpu0) / round
	}
	// Warm every path (connections, TLS, caches) before measuring.
	measure(txn)
	measure(create)
	measure(createInsecure)
	var txnRates, rates, insecureRates, ratios, insecureRatios, cpuRatios, insecureCPURatios []float64
	b.ResetTimer()
	for range b.N {
		t, tc := measure(txn)
		c, cc := measure(create)
		ic, icc := measure(createInsecure)
		txnRates, rates, insecureRates = append(txnRates, t), append(rates, c), append(insecureRates, ic)
		ratios, insecureRatios = append(ratios, c/t), append(insecureRatios, ic/t)
		cpuRatios = append(cpuRatios, float64(tc)/float64(cc))
		insecureCPURatios = append(insecureCPURatios, float64(tc)/float64(icc))
	}
	b.ReportMetric(median(txnRates), "txn/s")
	b.ReportMetric(median(rates), "creates/s")
	b.ReportMetric(median(insecureRates), "insecure-creates/s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(median(cpuRatios), "cpu-ratio")
	b.ReportMetric(median(insecureRatios), "insecure-ratio")
	b.ReportMetric(median(insecureCPURatios), "insecure-cpu-ratio")
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// cpuTime is the CPU time (user + system) this process has used: the
// apiserver, its etcd and the load generator together.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runConcurrent runs b.N calls of fn spread over workers goroutines.
func runConcurrent(b *testing.B, workers int, fn func() error) {
	if err := fill(b.N, workers, fn); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkList10kPods measures a full LIST of 10,000 pods over HTTPS as
// benchUser, served from the watch cache, in JSON and (the row
// pods=10000/protobuf) in protobuf, as client-go's typed clients ask.
func BenchmarkList10kPods(b *testing.B) {
	e := benchServer(b)
	hc := e.hc
	url := e.secureURL + "/api/v1/namespaces/default/pods"
	var n atomic.Int64
	const total = 10000
	if err := fill(total, 64, func() error { return post(hc, url, podBody(fmt.Sprintf("l-%d", n.Add(1)))) }); err != nil {
		b.Fatal(err)
	}
	for _, row := range []struct{ name, accept, marker string }{
		{"pods=10000", "application/json", `"kind":"PodList"`},
		{"pods=10000/protobuf", protobufType, "\x12\x07PodList"},
	} {
		list := func(b *testing.B) int {
			req, _ := http.NewRequest(http.MethodGet, e.secureURL+"/api/v1/pods", nil)
			req.Header.Set("Accept", row.accept)
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(data[:min(len(data), 200)], []byte(row.marker)) {
				b.Fatalf("list: %d %q", resp.StatusCode, data[:min(len(data), 200)])
			}
			return len(data)
		}
		// The first list of a row is reported apart: protobuf lists are
		// made from per-object encodings the apiserver caches as it first
		// converts them (package protobuf), so later lists cost less.
		var first time.Duration
		b.Run(row.name, func(b *testing.B) {
			if first == 0 {
				start := time.Now()
				list(b)
				first = time.Since(start)
				b.ResetTimer()
			}
			var size int
			for range b.N {
				size = list(b)
			}
			b.ReportMetric(float64(size)/(1<<20), "MiB/list")
			b.ReportMetric(float64(first.Microseconds())/1000, "first-list-ms")
		})
	}
}

// fill runs fn total times over workers goroutines.
func fill(total, workers int, fn func() error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(total) {
				if err := fn(); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return err
	}
	return nil
}

// BenchmarkWatchLatency measures write → event received over HTTPS watches
// (one HTTP/1.1 connection each, as benchUser), with 1 and 1,000 concurrent
// watchers, and reports p50 and p99.
func BenchmarkWatchLatency(b *testing.B) {
	for _, watchers := range []int{1, 1000} {
		e := benchServer(b)
		hc := e.hc
		base := e.secureURL + "/api/v1/namespaces/default/configmaps"
		m := &latencyMeter{}
		ctx, cancel := context.WithCancel(context.Background())
		wtr := &http.Transport{MaxIdleConnsPerHost: watchers + 10, TLSClientConfig: e.tls}
		wc := &http.Client{Transport: wtr}
		ready := make(chan struct{}, watchers)
		for range watchers {
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"?watch=true&resourceVersion=0&labelSelector=bench%3Dwatch", nil)
			resp, err := wc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			go m.consume(resp, ready)
		}
		for range watchers {
			<-ready
		}
		time.Sleep(200 * time.Millisecond)
		var seq atomic.Int64
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			m.reset()
			for range b.N {
				name := fmt.Sprintf("wl-%d", seq.Add(1))
				m.expect(name, watchers)
				body, _ := json.Marshal(configMap(name, map[string]string{"bench": "watch"}, nil))
				if err := post(hc, base, body); err != nil {
					b.Fatal(err)
				}
				// Pace writes so each measures delivery, not queueing behind the last.
				if watchers > 1 {
					time.Sleep(5 * time.Millisecond)
				}
			}
			waitTimeout(&m.pending, 30*time.Second)
			b.StopTimer()
			p50, p99, n := m.percentiles()
			if n == 0 {
				b.Fatal("no events received")
			}
			b.ReportMetric(p50, "p50-ms")
			b.ReportMetric(p99, "p99-ms")
			b.ReportMetric(float64(n)/float64(b.N*watchers), "delivered-ratio")
		})
		cancel()
		wtr.CloseIdleConnections()
	}
}

// latencyMeter records, per watched event, the time from write to receipt.
type latencyMeter struct {
	mu      sync.Mutex
	sent    map[string]time.Time
	lat     []time.Duration
	pending sync.WaitGroup
}

func (m *latencyMeter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = map[string]time.Time{}
	m.lat = nil
}

func (m *latencyMeter) expect(name string, receivers int) {
	m.pending.Add(receivers)
	m.mu.Lock()
	m.sent[name] = time.Now()
	m.mu.Unlock()
}

func (m *latencyMeter) consume(resp *http.Response, ready chan<- struct{}) {
	defer resp.Body.Close()
	ready <- struct{}{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		now := time.Now()
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"object"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "ADDED" {
			continue
		}
		m.mu.Lock()
		t0, ok := m.sent[ev.Object.Metadata.Name]
		if ok {
			m.lat = append(m.lat, now.Sub(t0))
		}
		m.mu.Unlock()
		if ok {
			m.pending.Done()
		}
	}
}

func (m *latencyMeter) percentiles() (p50, p99 float64, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.lat) == 0 {
		return 0, 0, 0
	}
	sort.Slice(m.lat, func(i, j int) bool { return m.lat[i] < m.lat[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(m.lat[len(m.lat)/2]), ms(m.lat[len(m.lat)*99/100]), len(m.lat)
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// BenchmarkIdleRSS builds the apiserver binary, starts it as it ships
// (HTTPS only, embedded etcd) with its data and certificates in a temp dir
// and HTTPS on a loopback port, waits until it is ready and idle, and
// reports its RSS.
func BenchmarkIdleRSS(b *testing.B) {
	if testing.Short() {
		b.Skip("builds and runs the apiserver binary")
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "apiserver")
	build := exec.Command("go", "build", "-o", bin, "github.com/minik8s/minik8s/apiserver")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	pid := startIdleAPIServer(b, bin, dir)
	time.Sleep(5 * time.Second)
	var rss float64
	for range b.N {
		rss = readRSSMiB(b, pid)
	}
	b.ReportMetric(rss, "idle-RSS-MiB")
}

// startIdleAPIServer runs the apiserver binary with its defaults but for
// the paths and the HTTPS address (127.0.0.1 and a free port), until the
// benchmark ends, and returns its pid once /readyz answers. The port is
// picked free and bound by the child a moment later; should another process
// take it in between, it starts again on another.
func startIdleAPIServer(b *testing.B, bin, dir string) int {
	for attempt := 1; ; attempt++ {
		port := freePort(b)
		var stderr bytes.Buffer
		cmd := exec.Command(bin, "--data-dir", filepath.Join(dir, "etcd"), "--cert-dir", filepath.Join(dir, "pki"),
			"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(port), "--log-level", "warn")
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() { _ = cmd.Process.Kill(); <-exited }
		url := fmt.Sprintf("https://127.0.0.1:%d/readyz", port)
	wait:
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			select {
			case err := <-exited:
				if attempt < 3 && strings.Contains(stderr.String(), "address already in use") {
					b.Logf("port %d was taken: starting again", port)
					break wait
				}
				b.Fatalf("apiserver exited: %v\n%s", err, stderr.String())
			default:
			}
			if readyz(url, filepath.Join(dir, "pki", "ca.crt")) {
				b.Cleanup(stop)
				return cmd.Process.Pid
			}
			if time.Now().After(deadline) {
				stop()
				b.Fatalf("apiserver did not become ready\n%s", stderr.String())
			}
		}
	}
}

// readyz says whether url answers 200, verifying the server against the CA
// in caFile (written by the apiserver on its first start).
func readyz(url, caFile string) bool {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return false
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return false
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func readRSSMiB(b *testing.B, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
