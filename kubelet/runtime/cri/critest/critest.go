// Package critest prepares the host's containerd CRI plugin for tests
// (only tests link it): the plugin's sandbox image (sandbox_image, by
// default registry.k8s.io/pause:3.6, which a node without a registry
// cannot pull) and the busybox test image, both built locally from
// kubelet/testimage and imported into containerd's "k8s.io" namespace.
package critest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/minik8s/minik8s/kubelet/testimage"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	criapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DefaultSocket is the host containerd's socket; MINIK8S_CRI_SOCKET
// names another (a private containerd for a developer's run).
const DefaultSocket = "/run/containerd/containerd.sock"

var (
	// Socket is the containerd the tests use; Endpoint the same as a CRI
	// endpoint.
	Socket   = socket()
	Endpoint = "unix://" + Socket
)

func socket() string {
	if s := os.Getenv("MINIK8S_CRI_SOCKET"); s != "" {
		return s
	}
	return DefaultSocket
}

const (
	// Namespace is the containerd namespace of the CRI plugin.
	Namespace = "k8s.io"
	// DefaultSandboxImage is containerd's default sandbox_image.
	DefaultSandboxImage = "registry.k8s.io/pause:3.6"
)

// Available reports whether the tests can run: root and a containerd
// socket. When it is true, Prepare failing is a test failure (a host whose
// containerd has the CRI plugin disabled is broken for these tests).
func Available() bool {
	_, err := os.Stat(Socket)
	return err == nil && os.Geteuid() == 0
}

// LockFile serializes the tests that use the CRI plugin across test
// processes (go test runs packages in parallel): the plugin loads the first
// conflist of its conf_dir alone, so one test node's network at a time.
const LockFile = "/run/minik8s-critest.lock"

// Lock takes LockFile for the rest of the test.
func Lock(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(LockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
}

// PluginConfig is what the tests need of the CRI plugin's configuration
// (its verbose Status info "config").
type PluginConfig struct {
	SandboxImage        string `json:"sandboxImage"`
	RestrictOOMScoreAdj bool   `json:"restrictOOMScoreAdj"`
	CNI                 struct {
		ConfDir string `json:"confDir"`
		BinDir  string `json:"binDir"`
	} `json:"cni"`
}

// Config asks the CRI plugin (Status, verbose) for its configuration.
func Config(ctx context.Context, rs criapi.RuntimeServiceClient) (PluginConfig, error) {
	var cfg PluginConfig
	resp, err := rs.Status(ctx, &criapi.StatusRequest{Verbose: true})
	if err != nil {
		return cfg, fmt.Errorf("CRI status (is containerd's CRI plugin enabled?): %w", err)
	}
	if s := resp.Info["config"]; s != "" {
		_ = json.Unmarshal([]byte(s), &cfg)
	}
	if cfg.SandboxImage == "" {
		cfg.SandboxImage = DefaultSandboxImage
	}
	if cfg.CNI.ConfDir == "" {
		cfg.CNI.ConfDir = "/etc/cni/net.d"
	}
	return cfg, nil
}

// canLowerOOMScoreAdj reports whether this host lets root lower a
// process's oom_score_adj (CAP_SYS_RESOURCE): containerd gives every
// sandbox -998.
func canLowerOOMScoreAdj() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err != nil || caps&(1<<24) != 0
		}
	}
	return true
}

// PauseImage is the busybox test image running sleep: a pause container.
func PauseImage() (*testimage.Image, error) {
	bb, err := testimage.Busybox()
	if err != nil {
		return nil, err
	}
	var cfg ocispec.Image
	if err := json.Unmarshal(bb.Blobs[bb.Config.Digest], &cfg); err != nil {
		return nil, err
	}
	cfg.Config.Cmd = []string{"sleep", "2147483647"}
	cb, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	img := &testimage.Image{Layer: bb.Layer, Blobs: maps.Clone(bb.Blobs)}
	img.Config = ocispec.Descriptor{MediaType: ocispec.MediaTypeImageConfig, Digest: digest.FromBytes(cb), Size: int64(len(cb))}
	m := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Config: img.Config, Layers: []ocispec.Descriptor{img.Layer}}
	m.SchemaVersion = 2
	mb, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	img.Manifest = ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(mb), Size: int64(len(mb)), Platform: bb.Manifest.Platform}
	img.Blobs[img.Config.Digest], img.Blobs[img.Manifest.Digest] = cb, mb
	return img, nil
}

// Prepare makes the host containerd's CRI plugin ready for pods: its
// sandbox image and testimage.Ref present in the k8s.io namespace
// (imported when absent). The images it imported are removed when the
// test ends (after the cleanups the test registers later, which remove
// its pods): the host's k8s.io namespace keeps no stand-in named like the
// real sandbox image. It returns the plugin's configuration.
func Prepare(ctx context.Context, t testing.TB) (PluginConfig, error) {
	var pc PluginConfig
	conn, err := grpc.NewClient(Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return pc, err
	}
	defer conn.Close()
	rs, is := criapi.NewRuntimeServiceClient(conn), criapi.NewImageServiceClient(conn)
	pc, err = Config(ctx, rs)
	if err != nil {
		return pc, err
	}
	if !pc.RestrictOOMScoreAdj && !canLowerOOMScoreAdj() {
		return pc, fmt.Errorf("containerd at %s cannot start pod sandboxes on this host: it gives them oom_score_adj -998, which needs CAP_SYS_RESOURCE; "+
			"set restrict_oom_score_adj = true under [plugins.\"io.containerd.grpc.v1.cri\"] in its config and restart it", Socket)
	}
	sandbox := pc.SandboxImage
	c, err := containerd.New(Socket, containerd.WithDefaultNamespace(Namespace))
	if err != nil {
		return pc, err
	}
	defer c.Close()
	ctx = namespaces.WithNamespace(ctx, Namespace)
	pause, err := PauseImage()
	if err != nil {
		return pc, err
	}
	bb, err := testimage.Busybox()
	if err != nil {
		return pc, err
	}
	for _, want := range []struct {
		ref string
		img *testimage.Image
	}{{sandbox, pause}, {testimage.Ref, bb}} {
		if present(ctx, is, want.ref) {
			continue
		}
		ref := want.ref
		t.Cleanup(func() { removeImage(ref) })
		ar, err := want.img.Archive(want.ref)
		if err != nil {
			return pc, err
		}
		imgs, err := c.Import(ctx, bytesReader(ar))
		if err != nil {
			return pc, fmt.Errorf("import %s: %w", want.ref, err)
		}
		for _, i := range imgs {
			if err := containerd.NewImage(c, i).Unpack(ctx, ""); err != nil {
				return pc, fmt.Errorf("unpack %s: %w", i.Name, err)
			}
		}
		// The CRI plugin learns of the image from containerd's events.
		deadline := time.Now().Add(10 * time.Second)
		for !present(ctx, is, want.ref) {
			if time.Now().After(deadline) {
				return pc, fmt.Errorf("the CRI plugin does not see the imported image %s", want.ref)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return pc, nil
}

// removeImage removes ref from the CRI plugin's images (RemoveImage).
func removeImage(ref string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = criapi.NewImageServiceClient(conn).RemoveImage(ctx, &criapi.RemoveImageRequest{Image: &criapi.ImageSpec{Image: ref}})
}

func present(ctx context.Context, is criapi.ImageServiceClient, ref string) bool {
	resp, err := is.ImageStatus(ctx, &criapi.ImageStatusRequest{Image: &criapi.ImageSpec{Image: ref}})
	return err == nil && resp.Image != nil
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
