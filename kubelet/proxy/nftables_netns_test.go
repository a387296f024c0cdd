package proxy

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/nftables"
)

// forEachMode runs a traffic test under each proxy mode.
func forEachMode(t *testing.T, f func(t *testing.T, mode string)) {
	for _, mode := range Modes {
		t.Run(mode, func(t *testing.T) { f(t, mode) })
	}
}

// nftTables reads the node namespace's table "kube-proxy" back from the
// kernel: its chains, then each set's elements with the addresses of
// their keys ("service-ips: 10.96.0.10 ..."); "" when there is no table.
func (n *testNet) nftTables() string {
	n.t.Helper()
	cc, closeFn, err := NFTables{Netns: n.node}.conn()
	if err != nil {
		n.t.Fatal(err)
	}
	defer closeFn()
	tables, err := cc.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		n.t.Fatal(err)
	}
	var t *nftables.Table
	for _, tb := range tables {
		if tb.Name == nftTable {
			t = tb
		}
	}
	if t == nil {
		return ""
	}
	var b strings.Builder
	chains, err := cc.ListChainsOfTableFamily(nftables.TableFamilyIPv4)
	if err != nil {
		n.t.Fatal(err)
	}
	var names []string
	for _, c := range chains {
		if c.Table.Name == nftTable {
			names = append(names, c.Name)
		}
	}
	sort.Strings(names)
	for _, c := range names {
		b.WriteString("chain " + c + "\n")
	}
	sets, err := cc.GetSets(t)
	if err != nil {
		n.t.Fatal(err)
	}
	for _, s := range sets {
		if s.Anonymous {
			continue
		}
		es, err := cc.GetSetElements(s)
		if err != nil {
			n.t.Fatal(err)
		}
		var keys []string
		for _, e := range es {
			k := fmt.Sprintf("%x", e.Key)
			if strings.HasPrefix(s.KeyType.Name, "ipv4_addr") && len(e.Key) >= 4 {
				k = net.IP(e.Key[:4]).String()
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "set %s: %s\n", s.Name, strings.Join(keys, " "))
	}
	return b.String()
}

// checkNFTServiceRemoved deletes default/web and waits for its chains and
// its ClusterIP to leave the table "kube-proxy".
func checkNFTServiceRemoved(t *testing.T, n *testNet, deleteService func() error, clusterIP string) {
	t.Helper()
	before := n.nftTables()
	if !strings.Contains(before, "default/web/tcp/http") || !strings.Contains(before, clusterIP+" ") && !strings.Contains(before, clusterIP+"\n") {
		t.Fatalf("no chains or elements of default/web in:\n%s", before)
	}
	if err := deleteService(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "rules removed", func() error {
		now := n.nftTables()
		if strings.Contains(now, "default/web/") {
			return fmt.Errorf("chains of default/web remain:\n%s", now)
		}
		for _, l := range strings.Split(now, "\n") {
			if strings.HasPrefix(l, "set ") && strings.Contains(l+" ", " "+clusterIP+" ") {
				return fmt.Errorf("%s remains:\n%s", clusterIP, now)
			}
		}
		return nil
	})
}
