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
	"strings"
	"sync"
	"time"
)

// maxResponseBytes bounds what is read of a webhook's answer.
const maxResponseBytes = 3 << 20

// clients keeps one HTTP client per CA bundle and server name, so that
// connections to a webhook are reused across requests.
type clients struct {
	mu sync.Mutex
	m  map[string]*http.Client
}

func (c *clients) get(caBundle []byte, serverName string) (*http.Client, error) {
	key := serverName + "\x00" + string(caBundle)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.m[key]; ok {
		return cl, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tc.RootCAs = pool
	}
	cl := &http.Client{Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       tc,
		TLSHandshakeTimeout:   10 * time.Second,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   100,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}}
	if c.m == nil {
		c.m = map[string]*http.Client{}
	}
	c.m[key] = cl
	return cl, nil
}

// endpoint returns the URL a webhook is posted to and the name its
// certificate must carry: the URL as given, or the Service's resolved
// address with the Service's DNS name (NAME.NAMESPACE.svc) as server name.
func (d *dispatcher) endpoint(h *hook) (*url.URL, string, error) {
	cc := h.clientConfig
	if cc.URL != nil {
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return nil, "", fmt.Errorf("invalid webhook URL: %w", err)
		}
		return u, u.Hostname(), nil
	}
	if cc.Service == nil {
		return nil, "", errors.New("webhook has neither url nor service")
	}
	if d.resolver == nil {
		return nil, "", errors.New("webhooks reached through a Service are not supported by this apiserver (no service resolver)")
	}
	s := cc.Service
	port := int32(443)
	if s.Port != nil {
		port = *s.Port
	}
	u, err := d.resolver.ResolveEndpoint(s.Namespace, s.Name, port)
	if err != nil {
		return nil, "", err
	}
	u = &url.URL{Scheme: u.Scheme, Host: u.Host}
	if s.Path != nil {
		u.Path = *s.Path
	}
	return u, s.Name + "." + s.Namespace + ".svc", nil
}

// post sends body to h within its timeout and decodes the answer into out.
// Errors are what kube's REST client reports, prefixed as kube's
// dispatchers do ("failed to call webhook: ...").
func (d *dispatcher) post(ctx context.Context, h *hook, body []byte, out any) error {
	u, serverName, err := d.endpoint(h)
	if err != nil {
		return fmt.Errorf("failed to call webhook: %w", err)
	}
	cl, err := d.clients.get(h.clientConfig.CABundle, serverName)
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
