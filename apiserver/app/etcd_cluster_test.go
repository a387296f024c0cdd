package app

import (
	"strings"
	"testing"
)

// TestValidateEtcdCluster checks the --embedded-etcd-* cluster flags' errors.
func TestValidateEtcdCluster(t *testing.T) {
	base := func() Options {
		o := DefaultOptions()
		o.EtcdClientURL = "https://10.0.0.1:2379"
		o.EtcdPeerURL = "https://10.0.0.1:2380"
		return o
	}
	for _, tc := range []struct {
		name string
		set  func(*Options)
		want string // "" valid
	}{
		{"single member (default)", func(o *Options) { *o = DefaultOptions() }, ""},
		{"three members", func(o *Options) {
			o.EtcdCluster = EmbeddedEtcdCluster{Name: "a", InitialCluster: "a=https://10.0.0.1:2380,b=https://10.0.0.2:2380,c=https://c:2380"}
		}, ""},
		{"join", func(o *Options) {
			o.EtcdCluster = EmbeddedEtcdCluster{Name: "d", Join: []string{"https://a:2379"}}
		}, ""},
		{"names not this member", func(o *Options) {
			o.EtcdCluster = EmbeddedEtcdCluster{Name: "x", InitialCluster: "a=https://10.0.0.1:2380"}
		}, "does not name this member"},
		{"other peer URL", func(o *Options) {
			o.EtcdCluster = EmbeddedEtcdCluster{Name: "a", InitialCluster: "a=https://10.0.0.9:2380"}
		}, "not its advertise peer URL"},
		{"bad state", func(o *Options) { o.EtcdCluster = EmbeddedEtcdCluster{InitialClusterState: "old"} }, `must be "new" or "existing"`},
		{"existing alone", func(o *Options) { o.EtcdCluster = EmbeddedEtcdCluster{InitialClusterState: "existing"} }, "needs --embedded-etcd-initial-cluster"},
		{"join with the initial cluster (not read then)", func(o *Options) {
			o.EtcdCluster = EmbeddedEtcdCluster{Name: "a", Join: []string{"https://b:2379"}, InitialCluster: "a=https://10.0.0.1:2380"}
		}, ""},
		{"join and new", func(o *Options) {
			o.EtcdCluster = EmbeddedEtcdCluster{Join: []string{"https://b:2379"}, InitialClusterState: "new"}
		}, "contradicts"},
		{"wildcard without advertise", func(o *Options) {
			o.EtcdPeerURL = "https://0.0.0.0:2380"
			o.EtcdCluster = EmbeddedEtcdCluster{Name: "a", InitialCluster: "a=https://10.0.0.1:2380"}
		}, "give --embedded-etcd-advertise-peer-url"},
		{"wildcard with advertise", func(o *Options) {
			o.EtcdPeerURL, o.EtcdClientURL = "https://0.0.0.0:2380", "https://0.0.0.0:2379"
			o.EtcdCluster = EmbeddedEtcdCluster{Name: "a", AdvertisePeerURL: "https://cp-a:2380", AdvertiseClientURL: "https://cp-a:2379",
				InitialCluster: "a=https://cp-a:2380,b=https://cp-b:2380"}
		}, ""},
		{"plain advertise URL", func(o *Options) {
			o.EtcdCluster = EmbeddedEtcdCluster{AdvertiseClientURL: "http://a:2379"}
		}, "TLS with client certificates only"},
		{"malformed initial cluster", func(o *Options) {
			o.EtcdCluster = EmbeddedEtcdCluster{InitialCluster: "a"}
		}, "want NAME=PEER-URL"},
		{"with external etcd", func(o *Options) {
			*o = DefaultOptions()
			o.EtcdServers = []string{"https://10.0.0.5:2379"}
			o.EtcdCluster = EmbeddedEtcdCluster{Name: "a"}
		}, "which --etcd-servers replaces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base()
			tc.set(&o)
			err := o.validateEtcd()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
