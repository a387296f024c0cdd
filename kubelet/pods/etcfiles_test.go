package pods

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/events"
)

// TestEtcFilesAsKube: the pod's resolv.conf and /etc/hosts are what kube's
// kubelet gives the conformance DNS specs' probe pods (the cluster search
// path then the node's, the FQDN from hostname and subdomain, the
// hostAliases block), a container that mounts its own /etc/hosts keeps it
// ("KubeletManagedEtcHosts"), a pod without an IP gets no hosts file, and
// the DNS events are recorded on the pod and the node.
func TestEtcFilesAsKube(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	nodeResolv := filepath.Join(dir, "node-resolv.conf")
	if err := os.WriteFile(nodeResolv, []byte("nameserver 127.0.0.11\nsearch corp.example\noptions ndots:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &events.FakeRecorder{}
	m := &Manager{rec: rec, opts: Options{RootDir: dir, NodeName: "node-1", ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", ResolvConf: nodeResolv}}
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "dns-test-1", Namespace: "dns-42", UID: "u1"}, Spec: api.PodSpec{
		Hostname: "dns-querier-1", Subdomain: "dns-test-service",
		HostAliases: []api.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}},
	}}
	if err := m.writeEtcFiles(pod, "10.244.1.5"); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(m.podDir("u1"), name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got, want := read("resolv.conf"), "search dns-42.svc.cluster.local svc.cluster.local cluster.local corp.example\nnameserver 10.96.0.10\noptions ndots:5\n"; got != want {
		t.Errorf("resolv.conf:\n%s\nwant:\n%s", got, want)
	}
	wantHosts := "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n" +
		"10.244.1.5\tdns-querier-1.dns-test-service.dns-42.svc.cluster.local\tdns-querier-1\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n"
	if got := read("etc-hosts"); got != wantHosts {
		t.Errorf("etc-hosts:\n%q\nwant:\n%q", got, wantHosts)
	}

	paths := func(c *api.Container) []string {
		ms, err := m.mounts(pod, c, map[string]string{"host-etc-hosts": "/etc/hosts"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, mt := range ms {
			out = append(out, mt.ContainerPath+"="+strings.TrimPrefix(mt.HostPath, m.podDir("u1")+"/"))
		}
		return out
	}
	if got := paths(&api.Container{Name: "c"}); !slices.Equal(got, []string{"/etc/resolv.conf=resolv.conf", "/etc/hosts=etc-hosts"}) {
		t.Errorf("mounts of a plain container: %v", got)
	}
	own := &api.Container{Name: "c", VolumeMounts: []api.VolumeMount{{Name: "host-etc-hosts", MountPath: "/etc/hosts"}}}
	if got := paths(own); !slices.Equal(got, []string{"/etc/resolv.conf=resolv.conf", "/etc/hosts=/etc/hosts"}) {
		t.Errorf("mounts of a container mounting its own /etc/hosts: %v", got)
	}

	// No IP: no hosts file, and no mount of one. No cluster DNS: the
	// node's resolver, with kube's events on the node and the pod.
	m.opts.ClusterDNS = nil
	if err := m.writeEtcFiles(pod, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m.podDir("u1"), "etc-hosts")); !os.IsNotExist(err) {
		t.Errorf("etc-hosts of a pod without an IP: %v", err)
	}
	if got := paths(&api.Container{Name: "c"}); !slices.Equal(got, []string{"/etc/resolv.conf=resolv.conf"}) {
		t.Errorf("mounts without a pod IP: %v", got)
	}
	if got, want := read("resolv.conf"), "search corp.example\nnameserver 127.0.0.11\noptions ndots:0\n"; got != want {
		t.Errorf("resolv.conf without cluster DNS:\n%s\nwant:\n%s", got, want)
	}
	msg := `kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`
	if got, want := rec.Events(), []string{"Warning MissingClusterDNS " + msg, `Warning MissingClusterDNS pod: "dns-test-1_dns-42(u1)". ` + msg}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
