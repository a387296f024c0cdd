package staticpods

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/minik8s/minik8s/api"
	"sigs.k8s.io/yaml"
)

// HTTPSource is the config.source of the pods of a URLSource.
const HTTPSource = "http"

// urlTimeout bounds one fetch of the manifest URL (kube's 10 s).
const urlTimeout = 10 * time.Second

// URLOptions configure a URLSource.
type URLOptions struct {
	// URL serves one v1 Pod or a v1 PodList, in YAML or JSON (kube's
	// --manifest-url).
	URL string
	// Header is sent with every request (--manifest-url-header).
	Header   http.Header
	NodeName string
	// Period is how often the URL is fetched (DefaultPeriod when zero,
	// kube's --http-check-frequency).
	Period time.Duration
	Logger *slog.Logger
	// Client fetches the URL (one with a 10 s timeout when nil).
	Client *http.Client
}

// URLSource reads the static pods served at a URL, as kube's HTTP pod
// source: fetched every Period; a failed fetch keeps the pods already
// read; an empty answer removes them; an answer that does not decode is
// reported and keeps them.
type URLSource struct {
	opts URLOptions
	log  *slog.Logger
	// last is the body last decoded; failures counts the fetches that
	// failed in a row (logged at Info three times, then at Debug).
	last     []byte
	failures int
	seen     map[api.UID]string
}

// NewURL returns a source of opts.URL.
func NewURL(opts URLOptions) *URLSource {
	if opts.Period <= 0 {
		opts.Period = DefaultPeriod
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: urlTimeout}
	}
	return &URLSource{opts: opts, log: opts.Logger.With("source", HTTPSource, "url", opts.URL), seen: map[api.UID]string{}}
}

// Run fetches the URL at the start and every Period until ctx ends, and
// calls update with the complete set whenever it changed.
func (s *URLSource) Run(ctx context.Context, update func([]*api.Pod)) error {
	t := time.NewTicker(s.opts.Period)
	defer t.Stop()
	for {
		s.poll(ctx, update)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (s *URLSource) poll(ctx context.Context, update func([]*api.Pod)) {
	pods, changed, err := s.Fetch(ctx)
	if changed {
		update(pods)
	}
	if err != nil {
		if s.failures < 3 {
			s.log.Info("Failed to read pods from URL", "err", err)
		} else {
			s.log.Debug("Failed to read pods from URL", "err", err)
		}
		s.failures++
		return
	}
	if s.failures > 0 {
		s.log.Info("Successfully read pods from URL")
		s.failures = 0
	}
}

// Fetch reads the URL once. changed is true when the pods to run are now
// pods (an answer unlike the last one, or an empty one); an error with
// changed false keeps the previous pods.
func (s *URLSource) Fetch(ctx context.Context) (pods []*api.Pod, changed bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.opts.URL, nil)
	if err != nil {
		return nil, false, err
	}
	for k, vs := range s.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := s.opts.Client.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxConfigLength+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > maxConfigLength {
		return nil, false, fmt.Errorf("%s: the answer is larger than %d bytes", s.opts.URL, maxConfigLength)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, fmt.Errorf("%v: %v", s.opts.URL, resp.Status)
	}
	if len(data) == 0 {
		s.last = nil
		return []*api.Pod{}, true, fmt.Errorf("zero-length data received from %v", s.opts.URL)
	}
	if bytes.Equal(data, s.last) {
		return nil, false, nil
	}
	pods, err = DecodeList(data, s.opts.URL, s.opts.NodeName)
	if err != nil {
		return nil, false, err
	}
	s.last = data
	uids := map[api.UID]bool{}
	for _, p := range pods {
		uids[p.UID] = true
		ts, ok := s.seen[p.UID]
		if !ok {
			ts = time.Now().UTC().Format(time.RFC3339Nano)
			s.seen[p.UID] = ts
		}
		p.Annotations[ConfigFirstSeenAnnotationKey] = ts
	}
	for uid := range s.seen {
		if !uids[uid] {
			delete(s.seen, uid)
		}
	}
	return pods, true, nil
}

// DecodeList turns what a manifest URL served, one v1 Pod or a v1
// PodList, into the static pods of node nodeName (kube's
// tryDecodeSinglePod, then tryDecodePodList).
func DecodeList(data []byte, url, nodeName string) ([]*api.Pod, error) {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%v: received '%v', but couldn't parse as single or multiple pods (%v)", url, string(data), err)
	}
	var tm api.TypeMeta
	if err := json.Unmarshal(j, &tm); err != nil {
		return nil, fmt.Errorf("%v: received '%v', but couldn't parse as single or multiple pods (%v)", url, string(data), err)
	}
	switch {
	case tm.Kind == "Pod" && tm.APIVersion == "v1":
		pod, err := decodePod(j, url, nodeName, false)
		if err != nil {
			return nil, err
		}
		return []*api.Pod{pod}, nil
	case tm.Kind == "PodList" && tm.APIVersion == "v1":
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(j, &list); err != nil {
			return nil, fmt.Errorf("%v: couldn't parse as pod list(%v)", url, err)
		}
		pods := make([]*api.Pod, 0, len(list.Items))
		for _, item := range list.Items {
			pod, err := decodePod(item, url, nodeName, false)
			if err != nil {
				return nil, err
			}
			pods = append(pods, pod)
		}
		return pods, nil
	}
	return nil, fmt.Errorf("%v: received '%v', but couldn't parse as single or multiple pods (kind %q of apiVersion %q is neither a v1 Pod nor a v1 PodList)",
		url, string(data), tm.Kind, tm.APIVersion)
}
