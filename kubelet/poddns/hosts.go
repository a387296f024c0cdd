package poddns

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/naming"
)

// EtcHostsPath is where containers see the kubelet's hosts file.
const EtcHostsPath = "/etc/hosts"

// The first line of the hosts files the kubelet writes (the conformance
// spec "KubeletManagedEtcHosts" tells them apart by it).
const (
	managedHostsHeader            = "# Kubernetes-managed hosts file.\n"
	managedHostsHeaderHostNetwork = "# Kubernetes-managed hosts file (host network).\n"
)

// maxHostnameLen is the longest hostname (64 bytes with the terminating NUL).
const maxHostnameLen = 63

// HostnameAndDomain are the pod's hostname (spec.hostname, else its name,
// cut to 63 characters without a trailing "-" or ".") and, with a
// subdomain, its domain SUBDOMAIN.NAMESPACE.svc.CLUSTERDOMAIN, as kube's
// GeneratePodHostNameAndDomain; an invalid hostname or subdomain is an
// error with kube's message.
func HostnameAndDomain(pod *api.Pod, clusterDomain string) (hostname, domain string, err error) {
	hostname = pod.Name
	if h := pod.Spec.Hostname; h != "" {
		if msgs := naming.IsDNS1123Label(h); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod Hostname %q is not a valid DNS label: %s", h, strings.Join(msgs, ";"))
		}
		hostname = h
	}
	if len(hostname) > maxHostnameLen {
		hostname = strings.TrimRight(hostname[:maxHostnameLen], "-.")
		if hostname == "" {
			return "", "", fmt.Errorf("hostname for pod %q was invalid: %q", pod.Name, pod.Name)
		}
	}
	if sd := pod.Spec.Subdomain; sd != "" {
		if msgs := naming.IsDNS1123Label(sd); len(msgs) > 0 {
			return "", "", fmt.Errorf("pod Subdomain %q is not a valid DNS label: %s", sd, strings.Join(msgs, ";"))
		}
		domain = fmt.Sprintf("%s.%s.svc.%s", sd, pod.Namespace, strings.TrimSuffix(clusterDomain, "."))
	}
	return hostname, domain, nil
}

// HostsFile is the content of the pod's /etc/hosts, as kube's
// ensureHostsFile writes it. On the host network: the node's hosts file
// (nodeHostsFile) under its own header. Otherwise the managed file:
// localhost and the IPv6 names, each pod IP with the pod's FQDN and
// hostname (or the hostname alone without a domain). Then the
// hostAliases, one line per IP.
func HostsFile(pod *api.Pod, podIPs []string, hostname, domain, nodeHostsFile string) ([]byte, error) {
	var b bytes.Buffer
	if pod.Spec.HostNetwork {
		node, err := os.ReadFile(nodeHostsFile)
		if err != nil {
			return nil, err
		}
		b.WriteString(managedHostsHeaderHostNetwork)
		b.Write(node)
	} else {
		b.WriteString(managedHostsHeader)
		b.WriteString("127.0.0.1\tlocalhost\n")
		b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
		b.WriteString("fe00::0\tip6-localnet\n")
		b.WriteString("fe00::0\tip6-mcastprefix\n")
		b.WriteString("fe00::1\tip6-allnodes\n")
		b.WriteString("fe00::2\tip6-allrouters\n")
		for _, ip := range podIPs {
			if domain != "" {
				fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, hostname, domain, hostname)
			} else {
				fmt.Fprintf(&b, "%s\t%s\n", ip, hostname)
			}
		}
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	return b.Bytes(), nil
}

// MountsHostsFile says whether container c gets the kubelet's hosts file,
// as kube's makeMounts: when the pod has an IP or is on the host network,
// and c mounts nothing of its own at /etc/hosts.
func MountsHostsFile(pod *api.Pod, podIPs []string, c *api.Container) bool {
	if len(podIPs) == 0 && !pod.Spec.HostNetwork {
		return false
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath == EtcHostsPath {
			return false
		}
	}
	return true
}
