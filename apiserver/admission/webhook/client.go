package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/lru"
)

// maxResponseBytes bounds what is read of a webhook's answer.
const maxResponseBytes = 3 << 20

// clientCacheSize is how many webhook clients are kept: kube's webhook
// ClientManager keeps its REST clients in an LRU cache of that size
// (k8s.io/apiserver/pkg/util/webhook, defaultCacheSize).
const clientCacheSize = 200

// clients keeps an HTTP client per CA bundle, server name and Service, so
// that connections to a webhook are reused across requests: the
// clientCacheSize most recently used, those evicted closing their idle
// connections (webhook configurations come and go; their clients must not
// pile up).
type clients struct {
	// transport builds the transport of a new client, HTTP/1.1 only when
	// http1 is set; nil is newTransport (tests record what is done with it).
	transport func(tc *tls.Config, http1 bool) http.RoundTripper

	mu    sync.Mutex
	cache *lru.Cache // key -> *http.Client
}

// newTransport is a webhook client's transport, as kube's REST client
// builds it.
func newTransport(tc *tls.Config, http1 bool) http.RoundTripper {
	dial := (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dial,
		TLSClientConfig:       tc,
		TLSHandshakeTimeout:   10 * time.Second,
		ForceAttemptHTTP2:     !http1,
		MaxIdleConnsPerHost:   100,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if http1 {
		tc.NextProtos = []string{"http/1.1"}
	}
	return tr
}

// service is a webhook's Service as kube's webhook client reaches it: the
// URL names NAME.NAMESPACE.svc:PORT, and each request is sent to the
// address the resolver gives for it then (a ready endpoint, or the cluster
// IP).
type service struct {
	namespace, name string
	port            int32
	resolver        ServiceResolver
}

// host is the address the URL names.
func (s *service) host() string {
	return net.JoinHostPort(s.name+"."+s.namespace+".svc", strconv.Itoa(int(s.port)))
}

func (c *clients) get(caBundle []byte, serverName string, svc *service) (*http.Client, error) {
	key := serverName + "\x00" + string(caBundle)
	if svc != nil {
		key = "service\x00" + svc.namespace + "/" + svc.name + ":" + strconv.Itoa(int(svc.port)) + "\x00" + key
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil {
		c.cache = lru.NewWithEvictionFunc(clientCacheSize, func(_ lru.Key, v any) {
			v.(*http.Client).CloseIdleConnections()
		})
	}
	if cl, ok := c.cache.Get(key); ok {
		return cl.(*http.Client), nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tc.RootCAs = pool
	}
	build := c.transport
	if build == nil {
		build = newTransport
	}
	// A Service's client speaks HTTP/1.1 only, as kube's, so that
	// concurrent requests spread over its endpoints (issue 75791).
	rt := build(tc, svc != nil)
	if svc != nil {
		rt = &resolving{delegate: rt, svc: svc}
	}
	cl := &http.Client{Transport: rt}
	c.cache.Add(key, cl)
	return cl, nil
}

// resolving sends each request for a Service's host to the address the
// resolver gives at that moment, as kube-apiserver does by default since
// v1.37 (WebhookRoundTripLoadBalancing): a connection kept alive to an
// endpoint that left is not used for the Service any more, and the
// requests spread over its endpoints.
type resolving struct {
	delegate http.RoundTripper
	svc      *service
}

// CloseIdleConnections closes the idle connections of the transport
// underneath (http.Client.CloseIdleConnections reaches them through it).
func (r *resolving) CloseIdleConnections() {
	if c, ok := r.delegate.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (r *resolving) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != r.svc.host() {
		return r.delegate.RoundTrip(req)
	}
	u, err := r.svc.resolver.ResolveEndpoint(r.svc.namespace, r.svc.name, r.svc.port)
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	if out.Host == "" {
		out.Host = req.URL.Host
	}
	out.URL.Host = u.Host
	return r.delegate.RoundTrip(out)
}

// endpoint returns the URL a webhook is posted to, the name its
// certificate must carry and, for a Service, how to reach it: the URL as
// given, or https://NAME.NAMESPACE.svc:PORT/PATH with that DNS name as
// server name, the address resolved for each request (so that errors name
// the Service's URL, as kube's do).
func (d *dispatcher) endpoint(h *hook) (*url.URL, string, *service, error) {
	cc := h.clientConfig
	if cc.URL != nil {
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return nil, "", nil, fmt.Errorf("invalid webhook URL: %w", err)
		}
		return u, u.Hostname(), nil, nil
	}
	if cc.Service == nil {
		return nil, "", nil, errors.New("webhook has neither url nor service")
	}
	if d.resolver == nil {
		return nil, "", nil, errors.New("webhooks reached through a Service are not supported by this apiserver (no service resolver)")
	}
	s := cc.Service
	svc := &service{namespace: s.Namespace, name: s.Name, port: 443, resolver: d.resolver}
	if s.Port != nil {
		svc.port = *s.Port
	}
	u := &url.URL{Scheme: "https", Host: svc.host()}
	if s.Path != nil {
		u.Path = *s.Path
	}
	return u, s.Name + "." + s.Namespace + ".svc", svc, nil
}

// post sends body to h within its timeout and decodes the answer into out.
// Errors are what kube's REST client reports, prefixed as kube's
// dispatchers do ("failed to call webhook: ...").
func (d *dispatcher) post(ctx context.Context, h *hook, body []byte, out any) error {
	u, serverName, svc, err := d.endpoint(h)
	if err != nil {
		return fmt.Errorf("failed to call webhook: %w", err)
	}
	cl, err := d.clients.get(h.clientConfig.CABundle, serverName, svc)
	if err != nil {
		return fmt.Errorf("could not get REST client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	// kube's REST client tells the server its deadline, rounded up to a second.
	if deadline, ok := ctx.Deadline(); ok {
		if t := time.Until(deadline); t > 0 {
			if r := t.Truncate(time.Second); r != t {
				t = r + time.Second
			}
			q := u.Query()
			q.Set("timeout", t.String())
			u.RawQuery = q.Encode()
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("failed to call webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := cl.Do(req)
	if err != nil {
		return fmt.Errorf("failed to call webhook: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("failed to call webhook: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("failed to call webhook: %w", statusError(resp.StatusCode, data))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("failed to call webhook: %w", decodeError(data, err))
	}
	return nil
}

// statusError is what kube's REST client makes of an error answer: the
// Status it carries, or a generic message with the body.
func statusError(code int, body []byte) error {
	var st struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Message != "" {
		return errors.New(st.Message)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return fmt.Errorf("the server responded with the status code %d but did not return more information", code)
	}
	text := string(body)
	if len(text) > 256 {
		text = text[:256] + "..."
	}
	return fmt.Errorf("an error on the server (%q) has prevented the request from succeeding", strings.TrimSpace(text))
}

func decodeError(body []byte, err error) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errors.New("0-length response")
	}
	return fmt.Errorf("couldn't decode the webhook response: %w", err)
}
