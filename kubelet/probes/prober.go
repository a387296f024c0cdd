package probes

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
)

// Execer runs a command in a container and returns its exit code.
type Execer interface {
	Exec(ctx context.Context, containerID string, cmd []string, stdout, stderr io.Writer) (int, error)
}

// Target is what a probe runs against.
type Target struct {
	PodIP       string
	ContainerID string
	Container   *api.Container
}

// Run performs probe p once; a nil error is success, otherwise the error's
// text is kube's failure output ("HTTP probe failed with statuscode: 500").
func Run(ctx context.Context, ex Execer, p *api.Probe, tgt Target) error {
	timeout := time.Duration(p.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if np, ok := ctx.Value(networkProberKey{}).(NetworkProber); ok && p.Exec == nil {
		return np(ctx, p, tgt)
	}
	switch {
	case p.Exec != nil:
		var out limited
		code, err := ex.Exec(ctx, tgt.ContainerID, p.Exec.Command, &out, &out)
		if ctx.Err() != nil {
			return fmt.Errorf("command timed out: %q timed out after %s", strings.Join(p.Exec.Command, " "), timeout)
		}
		if err != nil {
			return err
		}
		if code != 0 {
			if out.String() != "" {
				return errors.New(strings.TrimSpace(out.String()))
			}
			return fmt.Errorf("command %q exited with %d", strings.Join(p.Exec.Command, " "), code)
		}
		return nil
	case p.HTTPGet != nil:
		req, err := NewHTTPGetRequest(ctx, p.HTTPGet, tgt.Container, tgt.PodIP, probeUserAgent)
		if err != nil {
			return err
		}
		u := req.URL
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}).Do(req)
		if err != nil {
			return fmt.Errorf("Get %q: %w", u.String(), err)
		}
		_, _ = io.CopyN(io.Discard, resp.Body, 10<<10)
		resp.Body.Close()
		if resp.StatusCode >= 200 && resp.StatusCode < 400 {
			return nil
		}
		return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
	case p.TCPSocket != nil:
		port, err := ResolvePort(p.TCPSocket.Port, tgt.Container)
		if err != nil {
			return err
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = tgt.PodIP
		}
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("dial tcp %s: %w", addr, err)
		}
		conn.Close()
		return nil
	case p.GRPC != nil:
		return runGRPC(ctx, p.GRPC, tgt.PodIP, timeout)
	}
	return errors.New("probe has no handler")
}

// NetworkProber answers the probes that reach the pod over the network
// (httpGet, tcpSocket, grpc) instead of dialing: nil is success.
type NetworkProber func(ctx context.Context, p *api.Probe, tgt Target) error

type networkProberKey struct{}

// WithNetworkProber returns a context under which Run answers network
// probes with np instead of dialing the pod's IP; exec probes still run in
// the container. A hollow node (kubelet/hollow) runs its pod manager
// under it: its pods' IPs are on paper, and dialing them would send
// packets to addresses nobody serves (kubemark's hollow kubelet likewise
// does not probe over the network).
func WithNetworkProber(ctx context.Context, np NetworkProber) context.Context {
	return context.WithValue(ctx, networkProberKey{}, np)
}

// probeUserAgent is the User-Agent of the kubelet's HTTP probes (kube's
// "kube-probe/MAJOR.MINOR").
const probeUserAgent = "kube-probe/1.37"

// NewHTTPGetRequest is the GET of an httpGet action (a probe's or a
// lifecycle hook's), as kube's kubelet builds it: the action's scheme,
// host (the pod's IP when empty), port (by number or container port name),
// path and query, kube's User-Agent and Accept, the action's headers (Host
// as the request's host).
func NewHTTPGetRequest(ctx context.Context, g *api.HTTPGetAction, c *api.Container, podIP, userAgent string) (*http.Request, error) {
	port, err := ResolvePort(g.Port, c)
	if err != nil {
		return nil, err
	}
	host := g.Host
	if host == "" {
		host = podIP
	}
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	path := g.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}
	if pu, err := url.Parse(path); err == nil {
		u.Path, u.RawQuery = pu.Path, pu.RawQuery
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "*/*")
	for _, hd := range g.HTTPHeaders {
		if strings.EqualFold(hd.Name, "host") {
			req.Host = hd.Value
			continue
		}
		req.Header.Set(hd.Name, hd.Value)
	}
	return req, nil
}

// ResolvePort turns a probe port (number or container port name) into a
// number.
func ResolvePort(p api.IntOrString, c *api.Container) (int, error) {
	if p.Type == api.Int {
		if p.IntVal <= 0 || p.IntVal > 65535 {
			return 0, fmt.Errorf("invalid port number: %d", p.IntVal)
		}
		return int(p.IntVal), nil
	}
	if n, err := strconv.Atoi(p.StrVal); err == nil {
		return n, nil
	}
	if c != nil {
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				return int(cp.ContainerPort), nil
			}
		}
	}
	return 0, fmt.Errorf("couldn't find port: %s", p.StrVal)
}

type limited struct{ b []byte }

func (l *limited) Write(p []byte) (int, error) {
	if len(l.b) < 10<<10 {
		l.b = append(l.b, p...)
	}
	return len(p), nil
}

func (l *limited) String() string { return string(l.b) }
