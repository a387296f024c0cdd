package testimage

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"sync"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Ref is the reference the busybox test image is imported under.
const Ref = "minik8s.local/busybox:latest"

// BusyboxPath is where Debian's busybox-static puts the binary.
const BusyboxPath = "/bin/busybox"

// Applets are the busybox applets linked into the image's /bin.
var Applets = []string{
	"sh", "echo", "sleep", "cat", "wget", "httpd", "nc", "hostname", "ls", "env",
	"true", "false", "test", "[", "printf", "touch", "mkdir", "rm", "date", "kill",
	"ps", "grep", "head", "tail", "id", "pwd", "ip", "ifconfig", "nslookup", "trap",
	"seq", "yes", "dd", "sync", "mount", "uname", "stat", "wc", "tr", "seq", "timeout",
}

// Image is a built OCI image: its blobs by digest and the descriptors that
// tie them together.
type Image struct {
	Manifest ocispec.Descriptor
	Config   ocispec.Descriptor
	Layer    ocispec.Descriptor
	Blobs    map[digest.Digest][]byte
}

var (
	buildOnce sync.Once
	built     *Image
	buildErr  error
)

// Busybox builds (once per process) the busybox image with Cmd ["sh"].
func Busybox() (*Image, error) {
	buildOnce.Do(func() { built, buildErr = build() })
	return built, buildErr
}

func blob(mediaType string, b []byte) ocispec.Descriptor {
	sum := sha256.Sum256(b)
	return ocispec.Descriptor{MediaType: mediaType, Digest: digest.Digest("sha256:" + hex.EncodeToString(sum[:])), Size: int64(len(b))}
}

func build() (*Image, error) {
	bb, err := os.ReadFile(BusyboxPath)
	if err != nil {
		return nil, fmt.Errorf("read %s (install busybox-static): %w", BusyboxPath, err)
	}
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	mtime := time.Unix(0, 0)
	for _, d := range []string{"bin/", "etc/", "tmp/", "proc/", "sys/", "dev/", "var/", "var/www/", "root/", "usr/", "usr/bin/"} {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: mtime}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/busybox", Mode: 0o755, Size: int64(len(bb)), ModTime: mtime}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bb); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, a := range Applets {
		if seen[a] {
			continue
		}
		seen[a] = true
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox", ModTime: mtime}); err != nil {
			return nil, err
		}
	}
	files := map[string]string{
		"etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n",
		"etc/group":  "root:x:0:\nnobody:x:65534:\n",
	}
	for _, name := range []string{"etc/group", "etc/passwd"} {
		c := files[name]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(c)), ModTime: mtime}); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(c)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	img := &Image{Blobs: map[digest.Digest][]byte{}}
	img.Layer = blob(ocispec.MediaTypeImageLayer, layer.Bytes())
	cfg := ocispec.Image{
		Platform: ocispec.Platform{Architecture: goruntime.GOARCH, OS: "linux"},
		Config: ocispec.ImageConfig{
			Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			Cmd: []string{"sh"},
		},
		RootFS: ocispec.RootFS{Type: "layers", DiffIDs: []digest.Digest{img.Layer.Digest}},
	}
	cb, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	img.Config = blob(ocispec.MediaTypeImageConfig, cb)
	m := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Config: img.Config, Layers: []ocispec.Descriptor{img.Layer}}
	m.SchemaVersion = 2
	mb, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	img.Manifest = blob(ocispec.MediaTypeImageManifest, mb)
	img.Manifest.Platform = &cfg.Platform
	for _, b := range [][]byte{layer.Bytes(), cb, mb} {
		img.Blobs[blob("", b).Digest] = b
	}
	return img, nil
}

// Archive returns an OCI image layout tar of img naming it ref.
func (img *Image) Archive(ref string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	put := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(b))}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	if err := put(ocispec.ImageLayoutFile, []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return nil, err
	}
	for d, b := range img.Blobs {
		if err := put("blobs/sha256/"+d.Encoded(), b); err != nil {
			return nil, err
		}
	}
	desc := img.Manifest
	desc.Annotations = map[string]string{"io.containerd.image.name": ref, ocispec.AnnotationRefName: ref}
	idx := ocispec.Index{MediaType: ocispec.MediaTypeImageIndex, Manifests: []ocispec.Descriptor{desc}}
	idx.SchemaVersion = 2
	ib, err := json.Marshal(idx)
	if err != nil {
		return nil, err
	}
	if err := put("index.json", ib); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Import builds the busybox image and imports it into c's namespace (from
// ctx or the client's default) as ref, unpacked for the default snapshotter.
func Import(ctx context.Context, c *containerd.Client, ref string) error {
	img, err := Busybox()
	if err != nil {
		return err
	}
	ar, err := img.Archive(ref)
	if err != nil {
		return err
	}
	imgs, err := c.Import(ctx, bytes.NewReader(ar))
	if err != nil {
		return fmt.Errorf("import %s: %w", ref, err)
	}
	for _, i := range imgs {
		if err := containerd.NewImage(c, i).Unpack(ctx, ""); err != nil {
			return fmt.Errorf("unpack %s: %w", i.Name, err)
		}
	}
	return nil
}
