package staticpods

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/defaults"
	"github.com/minik8s/minik8s/api/validation"
	"sigs.k8s.io/yaml"
)

// Annotations the kubelet puts on the pods of its sources (kube's
// kubetypes).
const (
	ConfigSourceAnnotationKey    = "kubernetes.io/config.source"
	ConfigHashAnnotationKey      = "kubernetes.io/config.hash"
	ConfigFirstSeenAnnotationKey = "kubernetes.io/config.seen"
	ConfigMirrorAnnotationKey    = api.MirrorPodAnnotationKey
	// FileSource is the config.source of the pods of this package.
	FileSource = "file"
)

// DefaultPeriod is how often the path is listed again besides the watch
// (kube's --file-check-frequency).
const DefaultPeriod = 20 * time.Second

// maxConfigLength is the largest manifest read (kube's 10 MB).
const maxConfigLength = 10 << 20

// Options configure a Source.
type Options struct {
	// Path is the manifest directory or file.
	Path     string
	NodeName string
	// Period is the re-list period (DefaultPeriod when zero).
	Period time.Duration
	Logger *slog.Logger
	// Report, when set, is told of a manifest that was refused (once per
	// file and error).
	Report func(path string, err error)
}

// Source reads the static pods of a manifest path.
type Source struct {
	opts Options
	log  *slog.Logger

	mu sync.Mutex
	// seen is when each pod (by UID) was first read, its config.seen.
	seen map[api.UID]string
	// reported is the error last reported for each file.
	reported map[string]string
}

// New returns a source of opts.Path.
func New(opts Options) *Source {
	if opts.Period <= 0 {
		opts.Period = DefaultPeriod
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Source{opts: opts, log: opts.Logger.With("source", FileSource, "path", opts.Path),
		seen: map[api.UID]string{}, reported: map[string]string{}}
}

// List reads every manifest of the path now and returns its pods, sorted
// by file name. A missing path has none.
func (s *Source) List() []*api.Pod {
	path := s.opts.Path
	st, err := os.Stat(path)
	if err != nil {
		s.reportOnce(path, err, !os.IsNotExist(err))
		return nil
	}
	s.forget(path)
	var files []string
	switch {
	case st.IsDir():
		entries, err := os.ReadDir(path)
		if err != nil {
			s.reportOnce(path, err, true)
			return nil
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			files = append(files, filepath.Join(path, e.Name()))
		}
	case st.Mode().IsRegular():
		files = []string{path}
	default:
		s.reportOnce(path, errors.New("path is not a directory or file"), true)
		return nil
	}
	sort.Strings(files)
	var pods []*api.Pod
	keep := map[string]bool{}
	uids := map[api.UID]bool{}
	for _, f := range files {
		keep[f] = true
		fi, err := os.Stat(f)
		switch {
		case err != nil:
			if !os.IsNotExist(err) {
				s.reportOnce(f, err, true)
			}
			continue
		case fi.IsDir():
			s.reportOnce(f, errors.New("provided manifest path is a directory, not recursing into manifest path"), false)
			continue
		case !fi.Mode().IsRegular():
			s.reportOnce(f, fmt.Errorf("manifest path is not a directory or file (mode %v)", fi.Mode()), false)
			continue
		}
		pod, err := ReadFile(f, s.opts.NodeName)
		if err != nil {
			if !os.IsNotExist(err) {
				s.reportOnce(f, err, true)
			}
			continue
		}
		s.forget(f)
		s.stampSeen(pod)
		uids[pod.UID] = true
		pods = append(pods, pod)
	}
	s.mu.Lock()
	for f := range s.reported {
		if !keep[f] && f != path {
			delete(s.reported, f)
		}
	}
	for uid := range s.seen {
		if !uids[uid] {
			delete(s.seen, uid)
		}
	}
	s.mu.Unlock()
	return pods
}

// stampSeen sets config.seen to when the pod was first read.
func (s *Source) stampSeen(pod *api.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.seen[pod.UID]
	if !ok {
		t = time.Now().UTC().Format(time.RFC3339Nano)
		s.seen[pod.UID] = t
	}
	pod.Annotations[ConfigFirstSeenAnnotationKey] = t
}

// reportOnce logs (and reports) err about file unless it was the last
// error reported for it.
func (s *Source) reportOnce(file string, err error, hook bool) {
	s.mu.Lock()
	last, ok := s.reported[file]
	s.reported[file] = err.Error()
	s.mu.Unlock()
	if ok && last == err.Error() {
		return
	}
	if os.IsNotExist(err) {
		s.log.Info("static pod path does not exist, ignoring", "file", file)
		return
	}
	s.log.Error("could not process manifest file", "file", file, "err", err)
	if hook && s.opts.Report != nil {
		s.opts.Report(file, err)
	}
}

func (s *Source) forget(file string) {
	s.mu.Lock()
	delete(s.reported, file)
	s.mu.Unlock()
}

// Run sends the pods to update at the start, after every change the watch
// sees (changes within 100 ms count as one) and every Period, until ctx
// ends. update gets the complete set each time, also when it did not
// change.
func (s *Source) Run(ctx context.Context, update func([]*api.Pod)) error {
	changed := make(chan struct{}, 1)
	w := newWatcher(s.log, func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer w.close()
	t := time.NewTicker(s.opts.Period)
	defer t.Stop()
	for {
		w.watch(s.watchDir())
		update(s.List())
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-changed:
			// Let a writer finish: a burst of events is one list.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(100 * time.Millisecond):
			}
			select {
			case <-changed:
			default:
			}
		}
	}
}

// watchDir is the directory to watch: the path, a file's directory
// (editors replace a file rather than write it in place), or for a path
// that does not exist yet its nearest existing parent, whose changes make
// the source look again (and then watch the path itself).
func (s *Source) watchDir() string {
	p := filepath.Clean(s.opts.Path)
	st, err := os.Stat(p)
	if err == nil && !st.IsDir() {
		return filepath.Dir(p)
	}
	for err != nil && p != filepath.Dir(p) {
		p = filepath.Dir(p)
		_, err = os.Stat(p)
	}
	return p
}

// ReadFile reads one manifest as the static pod of node nodeName.
func ReadFile(path, nodeName string) (*api.Pod, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigLength+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigLength {
		return nil, fmt.Errorf("%s: the manifest is larger than %d bytes", path, maxConfigLength)
	}
	return Decode(data, path, nodeName)
}

// Decode turns a manifest read from source into the static pod of node
// nodeName, as kube's tryDecodeSinglePod and applyDefaults.
func Decode(data []byte, source, nodeName string) (*api.Pod, error) {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: couldn't parse as pod(%v), please check config file", source, err)
	}
	var tm api.TypeMeta
	if err := json.Unmarshal(j, &tm); err != nil {
		return nil, fmt.Errorf("%s: couldn't parse as pod(%v), please check config file", source, err)
	}
	switch {
	case tm.Kind == "":
		return nil, fmt.Errorf("%s: couldn't parse as pod(Object 'Kind' is missing in '%s'), please check config file", source, strings.TrimSpace(string(j)))
	case tm.Kind != "Pod" || tm.APIVersion != "v1":
		return nil, fmt.Errorf("%s: couldn't parse as pod(invalid pod: kind %q of apiVersion %q is not a v1 Pod), please check config file", source, tm.Kind, tm.APIVersion)
	}
	return decodePod(j, source, nodeName, true)
}

// decodePod defaults, names and validates one pod read from source (a file
// when isFile, else a URL).
func decodePod(j []byte, source, nodeName string, isFile bool) (*api.Pod, error) {
	pod := &api.Pod{}
	if err := json.Unmarshal(j, pod); err != nil {
		return nil, fmt.Errorf("%s: couldn't parse as pod(%v), please check config file", source, err)
	}
	if pod.Name == "" {
		return nil, errors.New("invalid pod: name is needed for the pod")
	}
	defaults.Pod(pod)
	if err := applyDefaults(pod, source, nodeName, isFile); err != nil {
		return nil, err
	}
	if errs := validation.ValidatePod(pod); len(errs) > 0 {
		return nil, fmt.Errorf("invalid pod: %s", errs.ToAggregate())
	}
	resource, err := api.PodAPIObjectReference(pod)
	if err != nil {
		return nil, err
	}
	if resource != "" {
		return nil, fmt.Errorf("static pods may not reference %s", resource)
	}
	return pod, nil
}

// applyDefaults is kube's: the UID hashes the decoded pod with the node and
// the file (or with the URL); the name gets the node's; the pod is bound to
// the node, tolerates NoExecute taints and is Pending.
func applyDefaults(pod *api.Pod, source, nodeName string, isFile bool) error {
	if pod.UID == "" {
		b, err := json.Marshal(pod)
		if err != nil {
			return err
		}
		h := fnv.New128a()
		h.Write(b)
		if isFile {
			fmt.Fprintf(h, "host:%s", nodeName)
			fmt.Fprintf(h, "file:%s", source)
		} else {
			fmt.Fprintf(h, "url:%s", source)
		}
		pod.UID = api.UID(hex.EncodeToString(h.Sum(nil)))
	}
	pod.Name = fmt.Sprintf("%s-%s", pod.Name, strings.ToLower(nodeName))
	if pod.Namespace == "" {
		pod.Namespace = api.NamespaceDefault
	}
	pod.Spec.NodeName = nodeName
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[ConfigHashAnnotationKey] = string(pod.UID)
	pod.Annotations[ConfigSourceAnnotationKey] = FileSource
	if !isFile {
		pod.Annotations[ConfigSourceAnnotationKey] = HTTPSource
	}
	tol := api.Toleration{Operator: api.TolerationOpExists, Effect: api.TaintEffectNoExecute}
	if !slices.ContainsFunc(pod.Spec.Tolerations, func(t api.Toleration) bool {
		return t.Key == "" && t.Operator == tol.Operator && t.Effect == tol.Effect
	}) {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, tol)
	}
	pod.Status.Phase = api.PodPending
	return nil
}

// IsStatic reports whether pod came from a file (or any non-API source).
func IsStatic(pod *api.Pod) bool {
	src, ok := pod.Annotations[ConfigSourceAnnotationKey]
	return ok && src != "api"
}

// IsMirror reports whether pod is the API's mirror of a static pod.
func IsMirror(pod *api.Pod) bool {
	_, ok := pod.Annotations[ConfigMirrorAnnotationKey]
	return ok
}

// Hash is a static pod's config.hash (what its mirror pod's config.mirror
// must be).
func Hash(pod *api.Pod) string { return pod.Annotations[ConfigHashAnnotationKey] }
