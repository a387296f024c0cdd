package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/discovery"
)

// acceptV2 asks an extension apiserver's /apis for its aggregated
// document, the legacy list otherwise (client-go's AcceptV2).
const acceptV2 = "application/json;g=" + discovery.Group + ";v=" + discovery.Version + ";as=" + discovery.Kind + ",application/json"

// Discovery returns, for each remote APIService whose discovery was
// fetched (or failed to be), its group version's aggregated discovery
// entry: Current with the resources the server listed, or Stale with none
// when the APIService is unavailable or its server did not answer, as
// kube-aggregator's discovery manager keeps them.
func (a *Aggregator) Discovery() []discovery.Remote {
	svcs, err := a.apiServices(context.Background())
	if err != nil {
		a.log.Warn("listing APIServices for discovery", "err", err)
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []discovery.Remote
	for _, s := range svcs {
		if s.Spec.Service == nil {
			continue
		}
		if v, ok := a.fetched[s.Name]; ok {
			out = append(out, discovery.Remote{Group: s.Spec.Group, Version: v})
		}
	}
	return out
}

// Priorities returns every APIService's priorities.
func (a *Aggregator) Priorities() map[discovery.GroupVersion]discovery.Priority {
	svcs, err := a.apiServices(context.Background())
	if err != nil {
		a.log.Warn("listing APIServices for discovery", "err", err)
		return nil
	}
	out := make(map[discovery.GroupVersion]discovery.Priority, len(svcs))
	for _, s := range svcs {
		out[discovery.GroupVersion{Group: s.Spec.Group, Version: s.Spec.Version}] = discovery.Priority{Group: s.Spec.GroupPriorityMinimum, Version: s.Spec.VersionPriority}
	}
	return out
}

// refreshDiscovery fetches a remote APIService's discovery after its
// availability was checked: Stale and empty while it is unavailable or
// its server fails to answer, Current otherwise.
func (a *Aggregator) refreshDiscovery(ctx context.Context, s *api.APIService) {
	if s.Spec.Service == nil {
		return
	}
	entry := discovery.APIVersionDiscovery{Version: s.Spec.Version, Freshness: discovery.Stale}
	if c := s.AvailableCondition(); c != nil && c.Status == api.ConditionTrue {
		resources, err := a.fetchDiscovery(ctx, s)
		if err != nil {
			a.log.Warn("fetching APIService discovery", "apiservice", s.Name, "err", err)
		} else {
			entry.Resources, entry.Freshness = resources, discovery.Current
		}
	}
	a.mu.Lock()
	a.fetched[s.Name] = entry
	a.mu.Unlock()
}

// forgetDiscovery drops what was fetched for a deleted APIService.
func (a *Aggregator) forgetDiscovery(name string) {
	a.mu.Lock()
	delete(a.fetched, name)
	a.mu.Unlock()
}

// fetchDiscovery asks the APIService's server for its aggregated
// document (as system:kube-aggregator in system:masters) and takes the
// group version's entry; a server that answers with the legacy list gets
// asked for /apis/GROUP/VERSION, converted (kube-aggregator's
// fetchFreshDiscoveryForService). Each request has 5 s.
func (a *Aggregator) fetchDiscovery(ctx context.Context, s *api.APIService) ([]discovery.APIResourceDiscovery, error) {
	host, err := a.resolve(s)
	if err != nil {
		return nil, err
	}
	rt, err := a.transport(s)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path, accept string, groups ...string) (int, string, []byte, error) {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+host+path, nil)
		if err != nil {
			return 0, "", nil, err
		}
		req.Header.Set("Accept", accept)
		req.Header.Set("X-Remote-User", "system:kube-aggregator")
		for _, g := range groups {
			req.Header.Add("X-Remote-Group", g)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
		return resp.StatusCode, resp.Header.Get("Content-Type"), body, err
	}

	code, ct, body, err := get("/apis", acceptV2, "system:masters")
	if err != nil {
		return nil, fmt.Errorf("GET /apis: %w", err)
	}
	if code == http.StatusServiceUnavailable {
		return nil, fmt.Errorf("service %s/%s returned non-success response code: %d", s.Spec.Service.Namespace, s.Spec.Service.Name, code)
	}
	if code == http.StatusOK && isV2(ct) {
		var list discovery.APIGroupDiscoveryList
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, fmt.Errorf("decode aggregated discovery: %w", err)
		}
		for _, g := range list.Items {
			if g.Metadata.Name != s.Spec.Group {
				continue
			}
			for _, v := range g.Versions {
				if v.Version == s.Spec.Version {
					return withResponseKinds(v.Resources), nil
				}
			}
		}
		return nil, nil // the server lists no resources for it
	}

	path := "/apis/" + s.Spec.Group + "/" + s.Spec.Version
	code, _, body, err = get(path, "application/json")
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("failed to download legacy discovery for %s: %d %s", path, code, body)
	}
	var list discovery.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return discovery.FromAPIResources(list.Resources)
}

// isV2 says whether a Content-Type is the aggregated document's.
func isV2(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json" && params["g"] == discovery.Group && params["v"] == discovery.Version && params["as"] == discovery.Kind
}

// withResponseKinds gives every resource and subresource a responseKind,
// empty when the server sent none, as kube-aggregator does for old
// clients.
func withResponseKinds(rs []discovery.APIResourceDiscovery) []discovery.APIResourceDiscovery {
	for i := range rs {
		if rs[i].ResponseKind == nil {
			rs[i].ResponseKind = &discovery.GroupVersionKind{}
		}
		for j := range rs[i].Subresources {
			if rs[i].Subresources[j].ResponseKind == nil {
				rs[i].Subresources[j].ResponseKind = &discovery.GroupVersionKind{}
			}
		}
	}
	return rs
}
