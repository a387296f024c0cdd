package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/kubelet/pods"
	"github.com/minik8s/minik8s/kubelet/staticpods"
)

// StaticPodOptions are the kubelet's static pod sources: a manifest path
// (--pod-manifest-path, staticPodPath) and a manifest URL (--manifest-url,
// staticPodURL), each read again on its own period.
type StaticPodOptions struct {
	Path          string
	URL           string
	URLHeader     map[string][]string
	FileFrequency time.Duration
	HTTPFrequency time.Duration
}

// AddFlags adds the static pod flags under kube's names.
func (o *StaticPodOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Path, "pod-manifest-path", o.Path, "Directory (or file) of static pod manifests, one Pod per file in YAML or JSON (hidden files ignored), watched and read again every --file-check-frequency; each runs on this node without the apiserver and is mirrored to it. Empty: no static pods.")
	fs.DurationVar(&o.FileFrequency, "file-check-frequency", o.FileFrequency, "Duration between checking config files for new data")
	fs.DurationVar(&o.HTTPFrequency, "http-check-frequency", o.HTTPFrequency, "Duration between checking http for new data")
	fs.StringVar(&o.URL, "manifest-url", o.URL, "URL for accessing additional Pod specifications to run")
	fs.Var(&headerFlag{&o.URLHeader}, "manifest-url-header", "Comma-separated list of HTTP headers to use when accessing the url provided to --manifest-url. Multiple headers with the same name will be added in the same order provided. This flag can be repeatedly invoked. For example: --manifest-url-header 'a:hello,b:again,c:world' --manifest-url-header 'b:beautiful'")
}

// Validate checks the URL and the periods.
func (o *StaticPodOptions) Validate() error {
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--manifest-url %q: want an http or https URL", o.URL)
		}
	}
	if len(o.URLHeader) > 0 && o.URL == "" {
		return errors.New("--manifest-url-header needs --manifest-url")
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"file-check-frequency", o.FileFrequency}, {"http-check-frequency", o.HTTPFrequency}} {
		if f.d <= 0 {
			return fmt.Errorf("--%s %v: must be positive", f.name, f.d)
		}
	}
	return nil
}

// headerFlag is kube's ColonSeparatedMultimapStringString: "k:v,k2:v2",
// repeatable, each use adding to the headers.
type headerFlag struct{ m *map[string][]string }

func (h *headerFlag) String() string {
	if h.m == nil || *h.m == nil {
		return ""
	}
	var pairs []string
	keys := make([]string, 0, len(*h.m))
	for k := range *h.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range (*h.m)[k] {
			pairs = append(pairs, k+":"+v)
		}
	}
	return strings.Join(pairs, ",")
}

func (h *headerFlag) Set(value string) error {
	if *h.m == nil {
		*h.m = map[string][]string{}
	}
	for _, pair := range strings.Split(value, ",") {
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, ":")
		if !ok {
			return errors.New("malformed pair, expect string:string")
		}
		if k = strings.TrimSpace(k); k == "" {
			return fmt.Errorf("malformed pair %q: empty header name", pair)
		}
		(*h.m)[k] = append((*h.m)[k], strings.TrimSpace(v))
	}
	return nil
}

func (h *headerFlag) Type() string { return "colonSeparatedMultimapStringString" }

// staticPodsRunner reads the static pod sources once, hands their pods to
// the pod manager before it starts, and returns what keeps them in line
// with the sources (nil without any). The manager gets the pods of both
// sources together. A refused manifest file is a Warning event
// FailedStaticPodManifest on the Node, once per file and error (kube's
// kubelet only logs it: the reason is minik8s').
func staticPodsRunner(o StaticPodOptions, nodeName string, mgr *pods.Manager, rec events.Recorder, log *slog.Logger) func(context.Context) error {
	if o.Path == "" && o.URL == "" {
		return nil
	}
	var (
		mu                sync.Mutex
		filePods, urlPods []*api.Pod
	)
	set := func(file bool, ps []*api.Pod) {
		mu.Lock()
		defer mu.Unlock()
		if file {
			filePods = ps
		} else {
			urlPods = ps
		}
		mgr.SetStaticPods(append(slices.Clone(filePods), urlPods...))
	}
	var runners []func(context.Context) error
	if o.Path != "" {
		nodeRef := &api.Node{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: api.ObjectMeta{Name: nodeName, UID: api.UID(nodeName)}}
		src := staticpods.New(staticpods.Options{Path: o.Path, NodeName: nodeName, Logger: log, Period: o.FileFrequency,
			Report: func(file string, err error) {
				rec.Eventf(nodeRef, api.EventTypeWarning, "FailedStaticPodManifest", "Could not process manifest file %s: %v", file, err)
			}})
		set(true, src.List())
		runners = append(runners, func(ctx context.Context) error {
			return src.Run(ctx, func(ps []*api.Pod) { set(true, ps) })
		})
	}
	if o.URL != "" {
		src := staticpods.NewURL(staticpods.URLOptions{URL: o.URL, Header: http.Header(o.URLHeader), NodeName: nodeName,
			Period: o.HTTPFrequency, Logger: log})
		runners = append(runners, func(ctx context.Context) error {
			return src.Run(ctx, func(ps []*api.Pod) { set(false, ps) })
		})
	}
	return func(ctx context.Context) error {
		var wg sync.WaitGroup
		for _, r := range runners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = r(ctx)
			}()
		}
		wg.Wait()
		return nil
	}
}
