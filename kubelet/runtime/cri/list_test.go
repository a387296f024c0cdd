package cri

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/kubelet/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeRuntime is a CRI runtime service holding one sandbox and its
// containers; it counts the status calls.
type fakeRuntime struct {
	criapi.UnimplementedRuntimeServiceServer
	mu         sync.Mutex
	sandbox    *criapi.PodSandbox
	containers []*criapi.Container
	// statuses counts the status calls by ID, verbose those asking for
	// the verbose info.
	statuses, verbose map[string]int
}

func (f *fakeRuntime) Version(context.Context, *criapi.VersionRequest) (*criapi.VersionResponse, error) {
	return &criapi.VersionResponse{RuntimeName: "fake", RuntimeVersion: "1"}, nil
}

func (f *fakeRuntime) ListPodSandbox(context.Context, *criapi.ListPodSandboxRequest) (*criapi.ListPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &criapi.ListPodSandboxResponse{Items: []*criapi.PodSandbox{f.sandbox}}, nil
}

func (f *fakeRuntime) ListContainers(context.Context, *criapi.ListContainersRequest) (*criapi.ListContainersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &criapi.ListContainersResponse{Containers: f.containers}, nil
}

func (f *fakeRuntime) count(id string, verbose bool) {
	f.statuses[id]++
	if verbose {
		f.verbose[id]++
	}
}

func (f *fakeRuntime) PodSandboxStatus(_ context.Context, req *criapi.PodSandboxStatusRequest) (*criapi.PodSandboxStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count(req.PodSandboxId, req.Verbose)
	return &criapi.PodSandboxStatusResponse{Status: &criapi.PodSandboxStatus{Id: f.sandbox.Id, Metadata: f.sandbox.Metadata, State: f.sandbox.State,
		Network: &criapi.PodSandboxNetworkStatus{Ip: "10.0.0.2"}}, Info: map[string]string{"info": `{"pid":42}`}}, nil
}

func (f *fakeRuntime) ContainerStatus(_ context.Context, req *criapi.ContainerStatusRequest) (*criapi.ContainerStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.count(req.ContainerId, req.Verbose)
	for _, c := range f.containers {
		if c.Id == req.ContainerId {
			st := &criapi.ContainerStatus{Id: c.Id, Metadata: c.Metadata, State: c.State, Labels: c.Labels, Annotations: c.Annotations}
			if c.State == criapi.ContainerState_CONTAINER_EXITED {
				st.ExitCode, st.Reason = 1, "Error"
			}
			return &criapi.ContainerStatusResponse{Status: st, Info: map[string]string{"info": `{"pid":43}`}}, nil
		}
	}
	return nil, nil
}

// TestListAsksStatusOnlyWhenStateChanges: a list reads the status of a
// sandbox or container it has not seen, or whose listed state changed,
// verbosely only for one running; the next lists ask nothing more.
func TestListAsksStatusOnlyWhenStateChanges(t *testing.T) {
	labels := map[string]string{LabelPodUID: "u1", LabelPodName: "p", LabelPodNamespace: "default"}
	f := &fakeRuntime{statuses: map[string]int{}, verbose: map[string]int{},
		sandbox: &criapi.PodSandbox{Id: "sb", Metadata: &criapi.PodSandboxMetadata{Name: "p", Namespace: "default", Uid: "u1"},
			State: criapi.PodSandboxState_SANDBOX_READY, Labels: labels},
		containers: []*criapi.Container{
			{Id: "run", PodSandboxId: "sb", Metadata: &criapi.ContainerMetadata{Name: "a"}, State: criapi.ContainerState_CONTAINER_RUNNING, Labels: labels},
			{Id: "done", PodSandboxId: "sb", Metadata: &criapi.ContainerMetadata{Name: "b"}, State: criapi.ContainerState_CONTAINER_EXITED, Labels: labels},
		}}
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	criapi.RegisterRuntimeServiceServer(srv, f)
	go srv.Serve(l)
	defer srv.Stop()
	ctx := context.Background()
	r, err := New(ctx, Config{Endpoint: sock, RelistPeriod: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	list := func() map[string]runtime.Container {
		t.Helper()
		cs, err := r.ListPodContainers(ctx, "u1")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]runtime.Container{}
		for _, c := range cs {
			out[c.ID] = c
		}
		return out
	}
	calls := func(want map[string]int, wantVerbose map[string]int) {
		t.Helper()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, id := range []string{"sb", "run", "done"} {
			if f.statuses[id] != want[id] || f.verbose[id] != wantVerbose[id] {
				t.Errorf("%s: %d status calls (%d verbose), want %d (%d)", id, f.statuses[id], f.verbose[id], want[id], wantVerbose[id])
			}
		}
	}

	cs := list()
	if cs["sb"].PID != 42 || cs["sb"].PodIP != "10.0.0.2" || cs["run"].PID != 43 || cs["run"].SandboxID != "sb" || cs["done"].ExitCode != 1 {
		t.Fatalf("first list: %+v", cs)
	}
	calls(map[string]int{"sb": 1, "run": 1, "done": 1}, map[string]int{"sb": 1, "run": 1})
	for range 3 {
		cs = list()
	}
	if cs["run"].PID != 43 || cs["run"].State != runtime.StateRunning || cs["done"].ExitCode != 1 {
		t.Fatalf("listed from the cache: %+v", cs)
	}
	calls(map[string]int{"sb": 1, "run": 1, "done": 1}, map[string]int{"sb": 1, "run": 1})

	f.mu.Lock()
	f.containers[0].State = criapi.ContainerState_CONTAINER_EXITED
	f.mu.Unlock()
	cs = list()
	if cs["run"].State != runtime.StateExited || cs["run"].ExitCode != 1 {
		t.Fatalf("exited container: %+v", cs["run"])
	}
	calls(map[string]int{"sb": 1, "run": 2, "done": 1}, map[string]int{"sb": 1, "run": 1})

	// An update of the resources drops the status: the next list reads it.
	_ = r.UpdateContainerResources(ctx, "done", runtime.Resources{})
	list()
	calls(map[string]int{"sb": 1, "run": 2, "done": 2}, map[string]int{"sb": 1, "run": 1})
}

// TestIsNotFound: the runtime's NotFound code tells a missing ID, also
// wrapped; an error merely saying "not found" does not.
func TestIsNotFound(t *testing.T) {
	for err, want := range map[error]bool{
		status.Error(codes.NotFound, "an error occurred when try to find sandbox"):                    true,
		fmt.Errorf("PodSandboxStatus x: %w", status.Error(codes.NotFound, "not found")):               true,
		status.Error(codes.Unknown, "failed to stop container: image not found in the content store"): false,
		errors.New("not found"): false,
		nil:                     false,
	} {
		if got := isNotFound(err); got != want {
			t.Errorf("isNotFound(%v) = %v, want %v", err, got, want)
		}
	}
}

// TestStaleStatusNotCached: a status read before its entry was dropped
// (an update of the resources, a removal) is not cached; one read after is.
func TestStaleStatusNotCached(t *testing.T) {
	r := &Runtime{statuses: map[string]cachedStatus{}, sandboxes: map[string]bool{}}
	running := int32(criapi.ContainerState_CONTAINER_RUNNING)
	_, gen, ok := r.cachedStatus("c1", running)
	if ok {
		t.Fatal("empty cache answered")
	}
	r.dropStatus("c1") // UpdateContainerResources while the list reads
	r.cacheStatus("c1", running, runtime.Container{ID: "c1", Image: "old"}, gen)
	if _, _, ok := r.cachedStatus("c1", running); ok {
		t.Fatal("a status read before the drop was cached")
	}
	_, gen, _ = r.cachedStatus("c1", running)
	r.cacheStatus("c1", running, runtime.Container{ID: "c1", Image: "new"}, gen)
	if ct, _, ok := r.cachedStatus("c1", running); !ok || ct.Image != "new" {
		t.Fatalf("a status read after the drop: %+v %v, want cached", ct, ok)
	}
	_, gen, _ = r.cachedStatus("c2", running)
	r.forget("c1")
	r.cacheStatus("c2", running, runtime.Container{ID: "c2"}, gen)
	if _, _, ok := r.cachedStatus("c2", running); ok {
		t.Fatal("a status read before a forget was cached")
	}
}
