package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// Client is a connection to one apiserver. It is safe for concurrent use;
// share one per process so the rate limit and connection pool are shared.
type Client struct {
	base       *url.URL
	http       *http.Client
	limiter    *rate.Limiter // nil: unlimited
	token      string
	tokenFile  *fileToken // nil: token is fixed
	imp        Impersonation
	userAgent  string
	timeout    time.Duration
	maxRetries int
	// maxRetryWait caps one Retry-After delay so a confused server cannot
	// park a caller for an hour; tests lower it.
	maxRetryWait time.Duration
}

// New returns a Client for cfg. It fails on a malformed host or unusable TLS
// material, never on an unreachable server.
func New(cfg *Config) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("client config: nil config")
	}
	base, err := cfg.baseURL()
	if err != nil {
		return nil, err
	}
	tr, err := cfg.transport(base.Scheme)
	if err != nil {
		return nil, err
	}
	c := &Client{
		base:         base,
		http:         &http.Client{Transport: tr},
		token:        cfg.BearerToken,
		imp:          cfg.Impersonate,
		userAgent:    cfg.UserAgent,
		timeout:      cfg.Timeout,
		maxRetries:   cfg.MaxRetries,
		maxRetryWait: time.Minute,
	}
	if cfg.BearerTokenFile != "" {
		c.tokenFile = newFileToken(cfg.BearerTokenFile, cfg.BearerToken)
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent()
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	qps, burst := cfg.QPS, cfg.Burst
	if qps == 0 {
		qps = DefaultQPS
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	if qps > 0 {
		c.limiter = rate.NewLimiter(rate.Limit(qps), burst)
	}
	return c, nil
}

// Impersonating returns a client that acts as im (Impersonate-* headers
// on every request) and shares c's connections and rate limiter: one
// process acting as many identities (hollow nodes, each its
// system:node:NAME) keeps one connection pool and one QPS budget.
func (c *Client) Impersonating(im Impersonation) *Client {
	cp := *c
	cp.imp = im
	return &cp
}

// Host returns the server URL the client talks to.
func (c *Client) Host() string { return c.base.String() }

// Request is a raw request. Path is the absolute API path
// ("/api/v1/namespaces/default/pods", "/version"); the client adds the host.
type Request struct {
	Method string // default GET
	Path   string
	Query  url.Values
	Body   []byte
	// ContentType of Body; default application/json when Body is set.
	ContentType string
	// Accept; default application/json.
	Accept string
}

// Do sends req and returns the response body of a 2xx answer. Any other answer
// is returned as a *apierrors.StatusError decoded from the Status body (or
// synthesized from the code when the body is not a Status). Network failures
// are returned wrapped, with the method and URL.
func (c *Client) Do(ctx context.Context, req Request) ([]byte, error) {
	return c.do(ctx, req, errContext{})
}

// Stream sends req and returns the open body of a 2xx answer, for watches,
// log follows and other long reads. The client's Timeout does not apply; the
// caller must close the body, and cancelling ctx ends the read.
func (c *Client) Stream(ctx context.Context, req Request) (io.ReadCloser, error) {
	return c.stream(ctx, req, errContext{})
}

func (c *Client) stream(ctx context.Context, req Request, ec errContext) (io.ReadCloser, error) {
	resp, err := c.send(ctx, req, ec)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// errContext names what a request was about, for synthesized error messages
// ("the server could not find the requested resource (get leases foo)").
type errContext struct {
	resource apierrors.GroupResource
	name     string
}

func (c *Client) do(ctx context.Context, req Request, ec errContext) ([]byte, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	resp, err := c.send(ctx, req, ec)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read response: %w", req.method(), c.url(req).Redacted(), err)
	}
	return body, nil
}

func (r Request) method() string {
	if r.Method == "" {
		return http.MethodGet
	}
	return r.Method
}

func (c *Client) url(req Request) *url.URL {
	u := *c.base
	// Paths arrive escaped (ResourcePath escapes names); keep both forms so
	// net/url sends them exactly once escaped.
	p, err := url.PathUnescape(req.Path)
	if err != nil {
		p = req.Path
	}
	u.Path = c.base.Path + p
	u.RawPath = c.base.EscapedPath() + req.Path
	u.RawQuery = req.Query.Encode()
	return &u
}

// send performs req with rate limiting and bounded retries, and returns a 2xx
// response with its body open; any other answer becomes an error.
func (c *Client) send(ctx context.Context, req Request, ec errContext) (*http.Response, error) {
	method := req.method()
	u := c.url(req)
	for attempt := 0; ; attempt++ {
		if c.limiter != nil {
			if err := c.limiter.Wait(ctx); err != nil {
				if _, ok := ctx.Deadline(); ok && ctx.Err() == nil {
					// The limiter refuses a wait that would outlast the
					// deadline: for the caller, the deadline is reached.
					err = fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
				}
				return nil, fmt.Errorf("%s %s: client rate limiter: %w", method, u.Redacted(), err)
			}
		}
		hr, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(req.Body))
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, u.Redacted(), err)
		}
		if req.Body == nil {
			hr.Body, hr.GetBody, hr.ContentLength = http.NoBody, nil, 0
		} else {
			ct := req.ContentType
			if ct == "" {
				ct = "application/json"
			}
			hr.Header.Set("Content-Type", ct)
		}
		accept := req.Accept
		if accept == "" {
			accept = "application/json"
		}
		hr.Header.Set("Accept", accept)
		hr.Header.Set("User-Agent", c.userAgent)
		tok := c.token
		if c.tokenFile != nil {
			tok = c.tokenFile.token()
		}
		if tok != "" {
			hr.Header.Set("Authorization", "Bearer "+tok)
		}
		c.imp.SetHeaders(hr.Header)
		resp, err := c.http.Do(hr)
		if err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return nil, fmt.Errorf("%s %s: %w", method, u.Redacted(), err)
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return resp, nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if wait, ok := c.retryAfter(resp, attempt); ok {
			slog.Debug("retrying throttled request", "method", method, "url", u.Redacted(),
				"code", resp.StatusCode, "wait", wait, "attempt", attempt+1)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, responseError(resp.StatusCode, resp.Header, method, body, ec)
			case <-t.C:
			}
			continue
		}
		return nil, responseError(resp.StatusCode, resp.Header, method, body, ec)
	}
}

// retryAfter decides whether a failed response is retried and after how long.
// Like client-go: a 429 or a 5xx, when it carries a Retry-After of whole
// seconds. Without the header the error is the caller's (an eviction's 429
// from a disruption budget carries none: kubectl drain retries it on its
// own schedule).
func (c *Client) retryAfter(resp *http.Response, attempt int) (time.Duration, bool) {
	if attempt >= c.maxRetries {
		return 0, false
	}
	code := resp.StatusCode
	if code != http.StatusTooManyRequests && code < 500 {
		return 0, false
	}
	h := resp.Header.Get("Retry-After")
	secs, err := strconv.Atoi(strings.TrimSpace(h))
	if h == "" || err != nil || secs < 0 {
		return 0, false
	}
	wait := time.Duration(secs) * time.Second
	if wait > c.maxRetryWait {
		wait = c.maxRetryWait
	}
	return wait, true
}

// responseError turns a non-2xx response into a StatusError: the server's
// Status when the body is one, else one synthesized from the code with
// Kubernetes' generic messages.
func responseError(code int, h http.Header, method string, body []byte, ec errContext) error {
	var st api.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Status != api.StatusSuccess {
		if st.Code == 0 {
			st.Code = int32(code)
		}
		return apierrors.FromStatus(st)
	}
	retry := 0
	if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil {
		retry = s
	}
	msg := strings.TrimSpace(string(body))
	return apierrors.NewGenericServerResponse(code, method, ec.resource, ec.name, msg, retry, msg != "")
}
