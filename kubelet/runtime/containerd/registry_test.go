package containerd

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestRegistryHosts: a registry with a hosts.toml in the hosts directory is
// reached through its mirror first and then itself, as containerd's CRI
// plugin reads config_path; an insecure registry over plain HTTP; any
// other directly over HTTPS.
func TestRegistryHosts(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "registry.k8s.io"), 0o755); err != nil {
		t.Fatal(err)
	}
	hostsToml := "server = \"https://registry.k8s.io\"\n\n[host.\"http://registry:5000\"]\n  capabilities = [\"pull\", \"resolve\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "registry.k8s.io", "hosts.toml"), []byte(hostsToml), 0o644); err != nil {
		t.Fatal(err)
	}
	type endpoint struct{ scheme, host string }
	for _, tc := range []struct {
		name, path, host string
		want             []endpoint
	}{
		{"mirrored", dir, "registry.k8s.io", []endpoint{{"http", "registry:5000"}, {"https", "registry.k8s.io"}}},
		{"not configured", dir, "quay.io", []endpoint{{"https", "quay.io"}}},
		{"insecure", dir, "10.0.0.1:5000", []endpoint{{"http", "10.0.0.1:5000"}}},
		{"no hosts directory", "", "registry.k8s.io", []endpoint{{"https", "registry.k8s.io"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Runtime{cfg: Config{RegistryConfigPath: tc.path, InsecureRegistries: []string{"10.0.0.1:5000"}}}
			hosts, err := r.registryHosts(context.Background())(tc.host)
			if err != nil {
				t.Fatal(err)
			}
			var got []endpoint
			for _, h := range hosts {
				got = append(got, endpoint{h.Scheme, h.Host})
			}
			if len(got) != len(tc.want) {
				t.Fatalf("hosts of %s: %v, want %v", tc.host, got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("hosts of %s: %v, want %v", tc.host, got, tc.want)
				}
			}
		})
	}
}
