package webhook

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// recordingTransport is a webhook client's transport that records whether
// its idle connections were closed.
type recordingTransport struct {
	name   string
	closed int
}

func (t *recordingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("%s: no network in this test", t.name)
}

func (t *recordingTransport) CloseIdleConnections() { t.closed++ }

type fixedResolver struct{}

func (fixedResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return &url.URL{Scheme: "https", Host: "127.0.0.1:1"}, nil
}

// TestClientsAreBounded gives the client cache more webhook configurations
// than it keeps: it keeps clientCacheSize clients, the least recently used
// go first and their transports close their idle connections (through the
// Service resolver's wrapper too), and a kept configuration gets its client
// back without a new transport.
func TestClientsAreBounded(t *testing.T) {
	var built []*recordingTransport
	c := &clients{transport: func(tc *tls.Config, http1 bool) http.RoundTripper {
		tr := &recordingTransport{name: tc.ServerName}
		built = append(built, tr)
		return tr
	}}
	get := func(i int) *http.Client {
		t.Helper()
		var svc *service
		if i%2 == 0 {
			svc = &service{namespace: "ns", name: fmt.Sprintf("svc-%d", i), port: 443, resolver: fixedResolver{}}
		}
		cl, err := c.get(nil, fmt.Sprintf("hook-%d.example.com", i), svc)
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	first := get(0)
	if again := get(0); again != first || len(built) != 1 {
		t.Fatalf("a cached configuration built a new client (%d transports)", len(built))
	}
	const extra = 7
	for i := 1; i < clientCacheSize+extra; i++ {
		get(i)
		if i == 1 {
			get(0) // 0 is now used after 1: 1 goes first
		}
	}
	if n := c.cache.Len(); n != clientCacheSize {
		t.Errorf("the cache holds %d clients, want %d", n, clientCacheSize)
	}
	if len(built) != clientCacheSize+extra {
		t.Fatalf("%d transports built, want %d", len(built), clientCacheSize+extra)
	}
	// Evicted, least recently used first: 1, 0, 2, 3, ... extra of them.
	evicted := map[int]bool{1: true, 0: true}
	for i := 2; len(evicted) < extra; i++ {
		evicted[i] = true
	}
	for i, tr := range built {
		if want := map[bool]int{true: 1}[evicted[i]]; tr.closed != want {
			t.Errorf("transport of %s closed its idle connections %d times, want %d", tr.name, tr.closed, want)
		}
	}
	// An evicted configuration gets a new client; a kept one its own.
	if get(0) == first || len(built) != clientCacheSize+extra+1 {
		t.Errorf("an evicted configuration got its old client back")
	}
	kept := get(clientCacheSize + extra - 1)
	if kept != get(clientCacheSize+extra-1) || len(built) != clientCacheSize+extra+1 {
		t.Errorf("a kept configuration got a new client")
	}
}
