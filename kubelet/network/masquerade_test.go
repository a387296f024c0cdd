package network

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vishvananda/netns"
)

func TestMasqueradeRules(t *testing.T) {
	got := string(masqueradeRules("10.244.3.0/24", "10.244.0.0/16"))
	want := `*nat
:MINIK8S-POD-MASQ - [0:0]
-A MINIK8S-POD-MASQ -s 10.244.3.0/24 ! -d 10.244.0.0/16 -m addrtype ! --dst-type LOCAL -m comment --comment "minik8s: SNAT for outbound traffic from pods" -j MASQUERADE
COMMIT
`
	if got != want {
		t.Errorf("rules:\n%s\nwant:\n%s", got, want)
	}
}

// inNewNetns runs f on a thread in a fresh network namespace (removed
// afterwards), so the iptables commands it runs touch only that namespace.
func inNewNetns(t *testing.T, f func()) {
	t.Helper()
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces and iptables")
	}
	for _, tool := range []string{"ip", "iptables", "iptables-restore", "iptables-save"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s (installed by scripts/deps.sh test)", tool)
		}
	}
	name := fmt.Sprintf("mk8s-masq-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	done := make(chan any, 1)
	go func() {
		// Left locked: the thread ends with the goroutine, never to run
		// another goroutine in the wrong namespace.
		runtime.LockOSThread()
		defer func() { done <- recover() }()
		ns, err := netns.GetFromName(name)
		if err != nil {
			panic(err)
		}
		defer ns.Close()
		if err := netns.Set(ns); err != nil {
			panic(err)
		}
		f()
	}()
	if p := <-done; p != nil {
		t.Fatal(p)
	}
}

// natRules is what iptables-save shows of the masquerade in this namespace.
func natRules() []string {
	out, err := exec.Command("iptables-save", "-t", "nat").CombinedOutput()
	if err != nil {
		panic(fmt.Sprintf("iptables-save: %v: %s", err, out))
	}
	var rules []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "-A") && strings.Contains(l, masqChain) {
			rules = append(rules, l)
		}
	}
	return rules
}

// With a cluster CIDR the bridge leaves masquerading to one node rule that
// spares traffic between pods; a new pod CIDR replaces the rule, a restart
// does not duplicate it, and RemoveMasquerade leaves nothing.
func TestNodeMasquerade(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{ConfDir: filepath.Join(dir, "net.d"), StateDir: filepath.Join(dir, "cni"), ClusterCIDR: "10.244.0.0/16"}
	inNewNetns(t, func() {
		configure := func(cidr string) {
			m, err := New(cfg)
			if err != nil {
				panic(err)
			}
			if err := m.Configure(cidr); err != nil {
				panic(err)
			}
		}
		rule := func(cidr string) string {
			return "-A MINIK8S-POD-MASQ -s " + cidr + " ! -d 10.244.0.0/16 -m addrtype ! --dst-type LOCAL -m comment --comment \"minik8s: SNAT for outbound traffic from pods\" -j MASQUERADE"
		}
		jump := `-A POSTROUTING -m comment --comment "minik8s: SNAT for outbound traffic from pods" -j MINIK8S-POD-MASQ`
		for _, step := range []struct{ what, cidr string }{
			{"first configure", "10.244.7.0/24"},
			{"a restart, same CIDR", "10.244.7.0/24"},
			{"a new pod CIDR", "10.244.8.0/24"},
		} {
			configure(step.cidr)
			got := strings.Join(natRules(), "\n")
			if want := jump + "\n" + rule(step.cidr); got != want {
				panic(fmt.Sprintf("after %s: nat rules\n%s\nwant\n%s", step.what, got, want))
			}
		}
		b, err := os.ReadFile(filepath.Join(cfg.ConfDir, "10-minik8s.conflist"))
		if err != nil {
			panic(err)
		}
		var conf struct {
			Plugins []struct {
				IPMasq bool `json:"ipMasq"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal(b, &conf); err != nil || conf.Plugins[0].IPMasq {
			panic(fmt.Sprintf("bridge still masquerades per pod (%v): %s", err, b))
		}
		if err := RemoveMasquerade(); err != nil {
			panic(err)
		}
		if r := natRules(); len(r) != 0 {
			panic(fmt.Sprintf("left after RemoveMasquerade: %v", r))
		}
	})
}
