package app

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestStaticPodPathConfig: staticPodPath in the KubeletConfiguration sets
// --pod-manifest-path, and the flag wins over it.
func TestStaticPodPathConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kubelet.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nstaticPodPath: /etc/kubernetes/manifests\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) Options {
		t.Helper()
		var got Options
		cmd := newCommand(func(_ context.Context, o Options, _ *slog.Logger) error { got = o; return nil })
		var stdout, stderr bytes.Buffer
		if code := cmd.Execute(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
		}
		return got
	}
	if o := run("--config", file); o.StaticPods.Path != "/etc/kubernetes/manifests" {
		t.Errorf("staticPodPath gave %q", o.StaticPods.Path)
	}
	if o := run("--config", file, "--pod-manifest-path", "/srv/pods"); o.StaticPods.Path != "/srv/pods" {
		t.Errorf("--pod-manifest-path over the file gave %q", o.StaticPods.Path)
	}
	if o := run(); o.StaticPods.Path != "" {
		t.Errorf("default %q, want none", o.StaticPods.Path)
	}
}

// TestManifestURLFlags: --manifest-url, --manifest-url-header (kube's
// colon-separated multimap, repeatable) and the check frequencies, from
// flags and from the config file (staticPodURL, staticPodURLHeader,
// fileCheckFrequency, httpCheckFrequency); bad values are refused with the
// flag's name.
func TestManifestURLFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kubelet.yaml")
	cfg := `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodURL: http://pods.example/node.yaml
staticPodURLHeader: {Authorization: ["Bearer abc"], X-Node: [a, b]}
fileCheckFrequency: 5s
httpCheckFrequency: 7s
`
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	exec := func(args ...string) (Options, int, string) {
		t.Helper()
		var got Options
		cmd := newCommand(func(_ context.Context, o Options, _ *slog.Logger) error { got = o; return nil })
		var stdout, stderr bytes.Buffer
		code := cmd.Execute(args, &stdout, &stderr)
		return got, code, stderr.String()
	}
	o, code, out := exec("--manifest-url", "https://pods.example/n1", "--manifest-url-header", "a:hello,b:again,c:world", "--manifest-url-header", "b:beautiful", "--http-check-frequency", "3s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	want := map[string][]string{"a": {"hello"}, "b": {"again", "beautiful"}, "c": {"world"}}
	if o.StaticPods.URL != "https://pods.example/n1" || !reflect.DeepEqual(o.StaticPods.URLHeader, want) || o.StaticPods.HTTPFrequency != 3*time.Second || o.StaticPods.FileFrequency != 20*time.Second {
		t.Errorf("flags gave %+v, want the URL, headers %v, http 3s, file 20s", o.StaticPods, want)
	}
	o, code, out = exec("--config", file)
	if code != 0 {
		t.Fatalf("--config: exit %d: %s", code, out)
	}
	want = map[string][]string{"Authorization": {"Bearer abc"}, "X-Node": {"a", "b"}}
	if o.StaticPods.URL != "http://pods.example/node.yaml" || !reflect.DeepEqual(o.StaticPods.URLHeader, want) || o.StaticPods.HTTPFrequency != 7*time.Second || o.StaticPods.FileFrequency != 5*time.Second {
		t.Errorf("config file gave %+v, want headers %v, http 7s, file 5s", o.StaticPods, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--manifest-url", "ftp://x/y"}, `--manifest-url "ftp://x/y": want an http or https URL`},
		{[]string{"--manifest-url-header", "a:b"}, "--manifest-url-header needs --manifest-url"},
		{[]string{"--manifest-url", "http://x/", "--manifest-url-header", "nocolon"}, "malformed pair, expect string:string"},
		{[]string{"--http-check-frequency", "0s"}, "--http-check-frequency 0s: must be positive"},
		{[]string{"--manifest-url", "http://x/", "--manifest-url-header", " :v"}, "empty header name"},
	} {
		if _, code, out := exec(tc.args...); code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure naming %q", tc.args, code, out, tc.want)
		}
	}
}
