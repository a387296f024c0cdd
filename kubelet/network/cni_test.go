package network

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestConfigure(t *testing.T) {
	dir := t.TempDir()
	// A bridge name no host has: Configure repairs an existing bridge.
	m, err := New(Config{ConfDir: filepath.Join(dir, "net.d"), StateDir: filepath.Join(dir, "cni"), BridgeName: "mk8s-nobridge"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Ready() == nil {
		t.Fatal("ready before a podCIDR")
	}
	if err := m.Configure("10.244.3.0/24"); err != nil {
		t.Fatal(err)
	}
	if err := m.Ready(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "net.d", "10-minik8s.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Name    string `json:"name"`
		Plugins []struct {
			Type      string `json:"type"`
			Bridge    string `json:"bridge"`
			IsGateway bool   `json:"isGateway"`
			IPMasq    bool   `json:"ipMasq"`
			IPAM      struct {
				Type   string                `json:"type"`
				Ranges [][]map[string]string `json:"ranges"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	if conf.Name != "minik8s" || len(conf.Plugins) != 2 || conf.Plugins[0].Type != "bridge" || conf.Plugins[0].Bridge != "mk8s-nobridge" ||
		!conf.Plugins[0].IsGateway || !conf.Plugins[0].IPMasq || conf.Plugins[0].IPAM.Type != "host-local" ||
		conf.Plugins[0].IPAM.Ranges[0][0]["subnet"] != "10.244.3.0/24" || conf.Plugins[1].Type != "portmap" {
		t.Errorf("conflist: %s", b)
	}
	for _, bad := range []string{"", "10.244.3.0", "fd00::/64"} {
		if err := m.Configure(bad); err == nil {
			t.Errorf("Configure(%q) accepted", bad)
		}
	}
}
