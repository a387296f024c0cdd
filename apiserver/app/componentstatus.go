package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
)

// componentProbeTimeout is kube-apiserver's componentstatus probe timeout.
const componentProbeTimeout = 20 * time.Second

// componentProbes answers componentstatuses as kube-apiserver does: the
// scheduler's and the controller-manager's /healthz on their default
// secure ports of this host (10259, 10257; certificates not checked) and
// each etcd the apiserver stores in ("etcd-0"). Like kube's, it assumes
// the components run beside the apiserver on their default ports.
type componentProbes struct {
	etcdHealthy func(context.Context) error
	client      *http.Client
}

func newComponentProbes(etcdHealthy func(context.Context) error) *componentProbes {
	return &componentProbes{etcdHealthy: etcdHealthy, client: &http.Client{
		Timeout:   componentProbeTimeout,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // as kube: the probe reads health, not secrets
	}}
}

// ComponentStatuses implements server.ComponentStatuses.
func (p *componentProbes) ComponentStatuses(ctx context.Context) []api.ComponentStatus {
	probes := map[string]func(context.Context) (api.ConditionStatus, string, string){
		"scheduler":          p.httpProbe("https://127.0.0.1:10259/healthz"),
		"controller-manager": p.httpProbe("https://127.0.0.1:10257/healthz"),
		"etcd-0":             p.etcdProbe,
	}
	out := make([]api.ComponentStatus, 0, len(probes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, probe := range probes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, msg, errText := probe(ctx)
			cs := api.ComponentStatus{ObjectMeta: api.ObjectMeta{Name: name},
				Conditions: []api.ComponentCondition{{Type: "Healthy", Status: status, Message: msg, Error: errText}}}
			mu.Lock()
			out = append(out, cs)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// httpProbe is kube's HTTP prober: healthy on a 2xx or 3xx answer (the
// body is the message), unhealthy with the client's error or the status
// code otherwise.
func (p *componentProbes) httpProbe(url string) func(context.Context) (api.ConditionStatus, string, string) {
	return func(ctx context.Context) (api.ConditionStatus, string, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return api.ConditionUnknown, "", fmt.Sprintf("failed to construct probe request: %v", err)
		}
		req.Header.Set("User-Agent", "kube-probe/1.37")
		req.Header.Set("Accept", "*/*")
		resp, err := p.client.Do(req)
		if err != nil {
			return api.ConditionFalse, err.Error(), ""
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 10*1024))
		if err != nil {
			return api.ConditionFalse, "", err.Error()
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 400 {
			return api.ConditionTrue, string(body), ""
		}
		return api.ConditionFalse, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode), ""
	}
}

func (p *componentProbes) etcdProbe(ctx context.Context) (api.ConditionStatus, string, string) {
	ctx, cancel := context.WithTimeout(ctx, componentProbeTimeout)
	defer cancel()
	if err := p.etcdHealthy(ctx); err != nil {
		return api.ConditionFalse, "", err.Error()
	}
	return api.ConditionTrue, "ok", ""
}
