package poddns

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func ptr[T any](v T) *T { return &v }

// nodeResolvConf is a node's resolv.conf with what the parser must get
// right: a comment, two search lines (the last wins, "." and trailing
// dots dropped) and options over two lines.
const nodeResolvConf = `# node resolver
nameserver 192.168.65.1
search old.example
search example.com corp.local. .
options ndots:1 timeout:2
options attempts:3 timeout:4
`

func pod(mut func(*api.Pod)) *api.Pod {
	p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web", Namespace: "ns1", UID: "uid-1"}}
	if mut != nil {
		mut(p)
	}
	return p
}

func TestPodDNS(t *testing.T) {
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(resolv, []byte(nodeResolvConf), 0o644); err != nil {
		t.Fatal(err)
	}
	cluster := Configurer{ClusterDNS: []string{"10.96.0.10"}, ClusterDomain: "cluster.local", ResolvConf: resolv}
	const clusterSearch = "search ns1.svc.cluster.local svc.cluster.local cluster.local example.com corp.local\n"
	const nodeFile = "search example.com corp.local\nnameserver 192.168.65.1\noptions ndots:1 timeout:4 attempts:3\n"
	var many []string
	for i := range 35 {
		many = append(many, fmt.Sprintf("s%d.example", i))
	}
	for _, tc := range []struct {
		name     string
		c        Configurer
		pod      *api.Pod
		want     string
		warnings []string
	}{
		{"ClusterFirst: the cluster's server and search path, then the node's search path", cluster, pod(nil),
			clusterSearch + "nameserver 10.96.0.10\noptions ndots:5\n", nil},
		{"an empty policy is ClusterFirst", cluster, pod(func(p *api.Pod) { p.Spec.DNSPolicy = "" }),
			clusterSearch + "nameserver 10.96.0.10\noptions ndots:5\n", nil},
		{"Default: the node's", cluster, pod(func(p *api.Pod) { p.Spec.DNSPolicy = api.DNSDefault }), nodeFile, nil},
		{"ClusterFirst on the host network is Default", cluster, pod(func(p *api.Pod) {
			p.Spec.DNSPolicy, p.Spec.HostNetwork = api.DNSClusterFirst, true
		}), nodeFile, nil},
		{"ClusterFirstWithHostNet", cluster, pod(func(p *api.Pod) {
			p.Spec.DNSPolicy, p.Spec.HostNetwork = api.DNSClusterFirstWithHostNet, true
		}), clusterSearch + "nameserver 10.96.0.10\noptions ndots:5\n", nil},
		{"None with dnsConfig (the conformance spec's)", cluster, pod(func(p *api.Pod) {
			p.Spec.DNSPolicy = api.DNSNone
			p.Spec.DNSConfig = &api.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"resolv.conf.local"},
				Options: []api.PodDNSConfigOption{{Name: "ndots", Value: ptr("2")}}}
		}), "search resolv.conf.local\nnameserver 1.1.1.1\noptions ndots:2\n", nil},
		{"dnsConfig merged: duplicates once, options replaced by name", cluster, pod(func(p *api.Pod) {
			p.Spec.DNSConfig = &api.PodDNSConfig{Nameservers: []string{"10.96.0.10", "1.1.1.1"}, Searches: []string{"svc.cluster.local", ".", "_sip._tcp.abc_d.example.com"},
				Options: []api.PodDNSConfigOption{{Name: "edns0"}, {Name: "ndots", Value: ptr("3")}}}
		}), "search ns1.svc.cluster.local svc.cluster.local cluster.local example.com corp.local . _sip._tcp.abc_d.example.com\nnameserver 10.96.0.10\nnameserver 1.1.1.1\noptions ndots:3 edns0\n", nil},
		{"no cluster DNS: Default, with kube's events", Configurer{ClusterDomain: "cluster.local", ResolvConf: resolv}, pod(nil), nodeFile, []string{
			`node MissingClusterDNS: kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`,
			`pod MissingClusterDNS: pod: "web_ns1(uid-1)". kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`}},
		{"no node resolv.conf: Default is the local resolver", Configurer{ClusterDNS: []string{"10.96.0.10"}}, pod(func(p *api.Pod) { p.Spec.DNSPolicy = api.DNSDefault }),
			"search .\nnameserver 127.0.0.1\n", nil},
		{"more than 3 nameservers", cluster, pod(func(p *api.Pod) {
			p.Spec.DNSConfig = &api.PodDNSConfig{Nameservers: []string{"1.1.1.1", "1.1.1.2", "1.1.1.3"}}
		}), clusterSearch + "nameserver 10.96.0.10\nnameserver 1.1.1.1\nnameserver 1.1.1.2\noptions ndots:5\n", []string{
			"pod DNSConfigForming: Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: 10.96.0.10 1.1.1.1 1.1.1.2"}},
		{"more than 32 search paths, and one longer than a domain name", cluster, pod(func(p *api.Pod) {
			p.Spec.DNSConfig = &api.PodDNSConfig{Searches: append([]string{strings.Repeat("a", 254)}, many...)}
		}), "search ns1.svc.cluster.local svc.cluster.local cluster.local example.com corp.local " + strings.Join(many[:26], " ") + "\nnameserver 10.96.0.10\noptions ndots:5\n", []string{
			"pod DNSConfigForming: Search Line limits were exceeded, some search paths have been omitted, the applied search line is: ns1.svc.cluster.local svc.cluster.local cluster.local example.com corp.local " + strings.Join(many[:26], " ")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, warnings, err := tc.c.PodDNS(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.ResolvConf(); got != tc.want {
				t.Errorf("resolv.conf:\n%s\nwant:\n%s", got, tc.want)
			}
			var got []string
			for _, w := range warnings {
				on := "pod"
				if w.OnNode {
					on = "node"
				}
				got = append(got, on+" "+w.Reason+": "+w.Message)
			}
			if strings.Join(got, "\n") != strings.Join(tc.warnings, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.warnings, "\n"))
			}
		})
	}
}

func TestPodDNSBadResolvConf(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(bad, []byte("nameserver\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		bad:                          "Encountered error while parsing resolv conf file. Error: nameserver list is empty ",
		filepath.Join(dir, "absent"): "no such file or directory",
	} {
		_, _, err := Configurer{ClusterDNS: []string{"10.96.0.10"}, ResolvConf: file}.PodDNS(pod(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
}

func TestHostsFile(t *testing.T) {
	const managed = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"
	nodeHosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(nodeHosts, []byte("127.0.0.1\tlocalhost\n172.18.0.3\tnode-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	aliases := []api.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}, {IP: "10.0.0.1", Hostnames: []string{"baz"}}}
	for _, tc := range []struct {
		name string
		pod  *api.Pod
		want string
	}{
		{"hostname only", pod(nil), managed + "10.244.1.5\tweb\n"},
		{"hostname and subdomain (the DNS specs' probe pods)", pod(func(p *api.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "dns-querier-1", "dns-test-service" }),
			managed + "10.244.1.5\tdns-querier-1.dns-test-service.ns1.svc.cluster.local\tdns-querier-1\n"},
		{"hostAliases", pod(func(p *api.Pod) { p.Spec.HostAliases = aliases }),
			managed + "10.244.1.5\tweb\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n10.0.0.1\tbaz\n"},
		{"host network: the node's file", pod(func(p *api.Pod) { p.Spec.HostNetwork, p.Spec.HostAliases = true, aliases[:1] }),
			"# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n172.18.0.3\tnode-1\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host, domain, err := HostnameAndDomain(tc.pod, "cluster.local")
			if err != nil {
				t.Fatal(err)
			}
			got, err := HostsFile(tc.pod, []string{"10.244.1.5"}, host, domain, nodeHosts)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("hosts:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

func TestHostnameAndDomain(t *testing.T) {
	long := strings.Repeat("a", 62) + "-b"
	for _, tc := range []struct {
		pod                *api.Pod
		host, domain, fail string
	}{
		{pod(nil), "web", "", ""},
		{pod(func(p *api.Pod) { p.Name = long }), strings.Repeat("a", 62), "", ""},
		{pod(func(p *api.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "h", "sub" }), "h", "sub.ns1.svc.cluster.local", ""},
		{pod(func(p *api.Pod) { p.Spec.Hostname = "Bad_Name" }), "", "", `pod Hostname "Bad_Name" is not a valid DNS label`},
		{pod(func(p *api.Pod) { p.Spec.Subdomain = "a.b" }), "", "", `pod Subdomain "a.b" is not a valid DNS label`},
	} {
		host, domain, err := HostnameAndDomain(tc.pod, "cluster.local")
		if tc.fail != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.fail) {
				t.Errorf("%+v: %v, want %q", tc.pod.Spec, err, tc.fail)
			}
			continue
		}
		if err != nil || host != tc.host || domain != tc.domain {
			t.Errorf("%s: %q %q %v, want %q %q", tc.pod.Name, host, domain, err, tc.host, tc.domain)
		}
	}
}

func TestMountsHostsFile(t *testing.T) {
	own := &api.Container{Name: "c", VolumeMounts: []api.VolumeMount{{Name: "v", MountPath: "/etc/hosts"}}}
	plain := &api.Container{Name: "c", VolumeMounts: []api.VolumeMount{{Name: "v", MountPath: "/etc/hosts-original"}}}
	for _, tc := range []struct {
		pod  *api.Pod
		ips  []string
		c    *api.Container
		want bool
	}{
		{pod(nil), []string{"10.244.1.5"}, plain, true},
		{pod(nil), []string{"10.244.1.5"}, own, false},
		{pod(nil), nil, plain, false},
		{pod(func(p *api.Pod) { p.Spec.HostNetwork = true }), nil, plain, true},
	} {
		if got := MountsHostsFile(tc.pod, tc.ips, tc.c); got != tc.want {
			t.Errorf("hostNetwork %v, IPs %v, mounts %v: %v, want %v", tc.pod.Spec.HostNetwork, tc.ips, tc.c.VolumeMounts, got, tc.want)
		}
	}
}
