package poddns

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/minik8s/minik8s/api"
)

// The resolver's limits, as kube's validation (MaxDNSNameservers,
// MaxDNSSearchPaths, MaxDNSSearchListChars) and the longest domain name
// (glibc aborts on a longer search path).
const (
	maxNameservers     = 3
	maxSearchPaths     = 32
	maxSearchListChars = 2048
	maxSearchPathLen   = 253
	// maxResolvConfSize is the most of the node's resolv.conf read.
	maxResolvConfSize = 10 << 20
)

// Event reasons the kubelet records while forming a pod's DNS.
const (
	ReasonDNSConfigForming  = "DNSConfigForming"
	ReasonMissingClusterDNS = "MissingClusterDNS"
)

// Config is a resolver configuration: resolv.conf's nameserver, search
// and options lines.
type Config struct {
	Servers, Searches, Options []string
}

// ResolvConf is the file as the container runtime writes it (containerd's
// CRI: search, then nameservers, then options).
func (c Config) ResolvConf() string {
	var b strings.Builder
	if len(c.Searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(c.Searches, " "))
	}
	for _, s := range c.Servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(c.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(c.Options, " "))
	}
	return b.String()
}

// Warning is an event to record about the pod, or about the node
// (OnNode).
type Warning struct {
	Reason, Message string
	OnNode          bool
}

// Configurer forms pods' resolver configurations (kube's dns.Configurer).
type Configurer struct {
	// ClusterDNS are the cluster DNS servers (--cluster-dns) for
	// dnsPolicy ClusterFirst.
	ClusterDNS []string
	// ClusterDomain (--cluster-domain) makes the cluster search path.
	ClusterDomain string
	// ResolvConf is the node's resolver file (--resolv-conf), the base of
	// every policy but None; "" means none: dnsPolicy Default then gets
	// nameserver 127.0.0.1 and search ".".
	ResolvConf string
}

// PodDNS is the pod's resolver configuration, as kube's GetPodDNS: the
// node's configuration, replaced by the cluster's servers, search path
// (NS.svc.DOMAIN svc.DOMAIN DOMAIN, then the node's) and ndots:5 for
// ClusterFirst (ClusterFirstWithHostNet; ClusterFirst on the host network
// is Default), by nothing for None, then the pod's dnsConfig appended
// without duplicates (its options replace those of the same name), cut to
// the resolver's limits. The warnings are the events kube records.
func (c Configurer) PodDNS(pod *api.Pod) (Config, []Warning, error) {
	var warnings []Warning
	cfg, err := c.nodeConfig()
	if err != nil {
		return Config{}, nil, err
	}
	policy := pod.Spec.DNSPolicy
	if policy == "" {
		policy = api.DNSClusterFirst
	}
	switch {
	case policy == api.DNSClusterFirstWithHostNet:
		policy = api.DNSClusterFirst
	case policy == api.DNSClusterFirst && pod.Spec.HostNetwork:
		policy = api.DNSDefault
	}
	switch policy {
	case api.DNSNone:
		cfg = Config{}
	case api.DNSClusterFirst:
		if len(c.ClusterDNS) > 0 {
			cfg.Servers = append([]string(nil), c.ClusterDNS...)
			cfg.Searches = c.clusterSearches(pod.Namespace, cfg.Searches)
			cfg.Options = []string{"ndots:5"}
			break
		}
		msg := fmt.Sprintf("kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.", api.DNSClusterFirst, api.DNSDefault)
		warnings = append(warnings, Warning{Reason: ReasonMissingClusterDNS, Message: msg, OnNode: true},
			Warning{Reason: ReasonMissingClusterDNS, Message: fmt.Sprintf("pod: %q. %s", pod.Name+"_"+pod.Namespace+"("+string(pod.UID)+")", msg)})
		fallthrough
	default: // Default
		if c.ResolvConf == "" {
			cfg.Servers, cfg.Searches = []string{"127.0.0.1"}, []string{"."}
		}
	}
	if d := pod.Spec.DNSConfig; d != nil {
		cfg.Servers = omitDuplicates(append(cfg.Servers, d.Nameservers...))
		cfg.Searches = omitDuplicates(append(cfg.Searches, d.Searches...))
		for _, o := range d.Options {
			v := ""
			if o.Value != nil {
				v = *o.Value
			}
			cfg.Options = setOption(cfg.Options, o.Name, v)
		}
	}
	cfg, w := fitLimits(cfg)
	return cfg, append(warnings, w...), nil
}

func (c Configurer) clusterSearches(namespace string, node []string) []string {
	if c.ClusterDomain == "" {
		return node
	}
	d := strings.TrimSuffix(c.ClusterDomain, ".")
	return omitDuplicates(append([]string{namespace + ".svc." + d, "svc." + d, d}, node...))
}

// nodeConfig reads the node's resolv.conf (none if ResolvConf is "").
func (c Configurer) nodeConfig() (Config, error) {
	if c.ResolvConf == "" {
		return Config{}, nil
	}
	b, err := os.ReadFile(c.ResolvConf)
	if err != nil {
		return Config{}, err
	}
	cfg, err := ParseResolvConf(b)
	if err != nil {
		return Config{}, fmt.Errorf("Encountered error while parsing resolv conf file. Error: %w", err)
	}
	return cfg, nil
}

// ParseResolvConf reads a resolv.conf as kube's kubelet does: nameserver
// lines accumulate, the last search line wins (without "." and trailing
// dots), options accumulate with a later one replacing an earlier one of
// the same name.
func ParseResolvConf(b []byte) (Config, error) {
	if len(b) > maxResolvConfSize {
		b = b[:maxResolvConfSize]
	}
	cfg := Config{Servers: []string{}, Searches: []string{}, Options: []string{}}
	var errs []error
	for _, line := range bytes.Split(b, []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "nameserver":
			if len(f) < 2 {
				errs = append(errs, errors.New("nameserver list is empty "))
				continue
			}
			cfg.Servers = append(cfg.Servers, f[1])
		case "search":
			cfg.Searches = []string{}
			for _, s := range f[1:] {
				if s != "." {
					cfg.Searches = append(cfg.Searches, strings.TrimSuffix(s, "."))
				}
			}
		case "options":
			for _, o := range f[1:] {
				name, value, _ := strings.Cut(o, ":")
				cfg.Options = setOption(cfg.Options, name, value)
			}
		}
	}
	return cfg, errors.Join(errs...)
}

// setOption sets option name (name:value, or name alone for an empty
// value), in place of one of the same name.
func setOption(opts []string, name, value string) []string {
	o := name
	if value != "" {
		o += ":" + value
	}
	for i, cur := range opts {
		if n, _, _ := strings.Cut(cur, ":"); n == name {
			out := append([]string(nil), opts...)
			out[i] = o
			return out
		}
	}
	return append(opts, o)
}

func omitDuplicates(s []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// fitLimits cuts cfg to the resolver's limits with kube's warnings: at
// most 3 nameservers; at most 32 search paths, none longer than a domain
// name, 2048 characters in all (the last ones go).
func fitLimits(cfg Config) (Config, []Warning) {
	var warnings []Warning
	if len(cfg.Servers) > maxNameservers {
		cfg.Servers = cfg.Servers[:maxNameservers]
		warnings = append(warnings, Warning{Reason: ReasonDNSConfigForming,
			Message: "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: " + strings.Join(cfg.Servers, " ")})
	}
	exceeded := false
	searches := cfg.Searches
	if len(searches) > maxSearchPaths {
		searches, exceeded = searches[:maxSearchPaths], true
	}
	var kept []string
	for _, s := range searches {
		if len(s) > maxSearchPathLen {
			exceeded = true
			continue
		}
		kept = append(kept, s)
	}
	for len(strings.Join(kept, " ")) > maxSearchListChars {
		kept, exceeded = kept[:len(kept)-1], true
	}
	if exceeded {
		warnings = append(warnings, Warning{Reason: ReasonDNSConfigForming,
			Message: "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: " + strings.Join(kept, " ")})
	}
	if kept == nil && cfg.Searches != nil {
		kept = []string{}
	}
	cfg.Searches = kept
	return cfg, warnings
}
