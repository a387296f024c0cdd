package servicealloc

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/etcd/etcdtest"
	"github.com/minik8s/minik8s/apiserver/storage"
)

func newAllocator(t *testing.T, cidr, ports string) *Allocator {
	t.Helper()
	if testing.Short() {
		t.Skip("starts etcd")
	}
	b := etcdtest.Start(t)
	a, err := New(storage.New(b.Client(), "/registry/"), cidr, ports)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestNewRejectsBadRanges(t *testing.T) {
	for _, tc := range []struct{ cidr, ports string }{
		{"10.96.0.0", "30000-32767"},
		{"fd00::/112", "30000-32767"},
		{"10.0.0.0/4", "30000-32767"},
		{"10.0.0.0/30", "30000-32767"},
		{"10.96.0.0/12", "32767-30000"},
		{"10.96.0.0/12", "0-10"},
		{"10.96.0.0/12", "x"},
	} {
		if _, err := New(nil, tc.cidr, tc.ports); err == nil {
			t.Errorf("New(%q, %q) accepted", tc.cidr, tc.ports)
		}
	}
}

func TestAllocateIPs(t *testing.T) {
	a := newAllocator(t, "10.96.0.0/28", "30000-30002")
	ctx := context.Background()
	if got := a.FirstIP().String(); got != "10.96.0.1" {
		t.Fatalf("FirstIP = %s", got)
	}
	svc := func(n string) Owner { return Owner{Namespace: "default", Name: n, UID: "uid-" + n} }

	// A requested address: in range, once.
	if _, err := a.AllocateIP(ctx, net.ParseIP("10.96.0.1"), svc("kubernetes"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AllocateIP(ctx, net.ParseIP("10.96.0.1"), svc("other"), false); !errors.Is(err, ErrAllocated) {
		t.Fatalf("second claim of 10.96.0.1: %v", err)
	}
	// The same owner again is a no-op, not a conflict.
	if _, err := a.AllocateIP(ctx, net.ParseIP("10.96.0.1"), svc("kubernetes"), false); err != nil {
		t.Fatalf("re-claim by owner: %v", err)
	}
	var nir *NotInRangeError
	for _, ip := range []string{"10.97.0.1", "10.96.0.0", "10.96.0.15"} {
		if _, err := a.AllocateIP(ctx, net.ParseIP(ip), svc("x"), false); !errors.As(err, &nir) {
			t.Errorf("%s: %v, want not in range", ip, err)
		}
	}
	if nir.Error() != "the provided IP (10.96.0.15) is not in the valid range. The range of valid IPs is 10.96.0.0/28" {
		t.Errorf("message %q", nir.Error())
	}
	// Dynamic: 14 usable addresses, one taken; the other 13 are handed out
	// once each, then the range is full.
	seen := map[string]bool{"10.96.0.1": true}
	for i := 0; i < 13; i++ {
		ip, err := a.AllocateIP(ctx, nil, svc("s"+string(rune('a'+i))), false)
		if err != nil {
			t.Fatalf("allocation %d: %v", i, err)
		}
		if seen[ip.String()] {
			t.Fatalf("%s handed out twice", ip)
		}
		seen[ip.String()] = true
	}
	if _, err := a.AllocateIP(ctx, nil, svc("full"), false); !errors.Is(err, ErrFull) {
		t.Fatalf("full range: %v", err)
	}
	// Only the owner's release frees an address.
	if err := a.ReleaseIP(ctx, "10.96.0.1", "uid-other"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AllocateIP(ctx, net.ParseIP("10.96.0.1"), svc("y"), false); !errors.Is(err, ErrAllocated) {
		t.Fatalf("release by a non-owner freed the address: %v", err)
	}
	if err := a.ReleaseIP(ctx, "10.96.0.1", "uid-kubernetes"); err != nil {
		t.Fatal(err)
	}
	if ip, err := a.AllocateIP(ctx, nil, svc("y"), false); err != nil || ip.String() != "10.96.0.1" {
		t.Fatalf("after release the only free address is 10.96.0.1; got %v, %v", ip, err)
	}
}

func TestConcurrentDynamicAllocationNeverDuplicates(t *testing.T) {
	a := newAllocator(t, "10.96.0.0/26", "30000-30010")
	ctx := context.Background()
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 62)
	for i := 0; i < 62; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ip, err := a.AllocateIP(ctx, nil, Owner{Name: "s", UID: string(rune('A' + i))}, false)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			got[ip.String()]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("allocation failed: %v", err)
	}
	if len(got) != 62 {
		t.Fatalf("%d distinct addresses for 62 allocations", len(got))
	}
}

func TestPortsReleaseAndDryRun(t *testing.T) {
	a := newAllocator(t, "10.96.0.0/24", "30000-30002")
	ctx := context.Background()
	o1, o2 := Owner{Name: "a", UID: "1"}, Owner{Name: "b", UID: "2"}
	if _, err := a.AllocatePort(ctx, 30001, o1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AllocatePort(ctx, 30001, o2, true); !errors.Is(err, ErrPortAllocated) {
		t.Fatalf("dry run on a taken port: %v", err)
	}
	if _, err := a.AllocatePort(ctx, 30002, o2, true); err != nil {
		t.Fatalf("dry run on a free port: %v", err)
	}
	var nir *NotInRangeError
	if _, err := a.AllocatePort(ctx, 31000, o2, false); !errors.As(err, &nir) ||
		err.Error() != "provided port is not in the valid range. The range of valid ports is 30000-30002" {
		t.Fatalf("out of range: %v", err)
	}
	p1, err := a.AllocatePort(ctx, 0, o2, false)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := a.AllocatePort(ctx, 0, o2, false)
	if err != nil {
		t.Fatal(err)
	}
	if p1 == p2 || p1 == 30001 || p2 == 30001 {
		t.Fatalf("dynamic ports %d, %d (30001 taken; the dry run must not have reserved 30002)", p1, p2)
	}
	if _, err := a.AllocatePort(ctx, 0, o2, false); !errors.Is(err, ErrFull) {
		t.Fatalf("full: %v", err)
	}
	if err := a.ReleasePort(ctx, 30001, "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AllocatePort(ctx, 30001, o2, false); err != nil {
		t.Fatalf("released port not reusable: %v", err)
	}
}

func TestRepair(t *testing.T) {
	a := newAllocator(t, "10.96.0.0/24", "30000-30100")
	ctx := context.Background()
	clock := time.Now()
	a.now = func() time.Time { return clock }
	live := Owner{Namespace: "default", Name: "live", UID: "live"}
	leaked := Owner{Namespace: "default", Name: "gone", UID: "gone"}
	fresh := Owner{Namespace: "default", Name: "creating", UID: "creating"}
	for _, step := range []struct {
		o  Owner
		ip string
	}{{live, "10.96.0.10"}, {leaked, "10.96.0.11"}} {
		if _, err := a.AllocateIP(ctx, net.ParseIP(step.ip), step.o, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.AllocatePort(ctx, 30050, leaked, false); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(5 * time.Minute)
	if _, err := a.AllocateIP(ctx, net.ParseIP("10.96.0.12"), fresh, false); err != nil {
		t.Fatal(err)
	}
	// "live" also holds 10.96.0.20 and 30060, whose keys are missing.
	res, err := a.Repair(ctx, []Held{{Owner: live, IPs: []string{"10.96.0.10", "10.96.0.20"}, Ports: []int{30060}}}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Freed != 2 || res.Restored != 2 {
		t.Fatalf("repair = %+v, want 2 freed (leaked IP and port), 2 restored", res)
	}
	if _, err := a.AllocateIP(ctx, net.ParseIP("10.96.0.11"), fresh, false); err != nil {
		t.Errorf("leaked IP not freed: %v", err)
	}
	if _, err := a.AllocateIP(ctx, net.ParseIP("10.96.0.12"), leaked, false); !errors.Is(err, ErrAllocated) {
		t.Errorf("an allocation younger than the grace period was freed: %v", err)
	}
	if _, err := a.AllocateIP(ctx, net.ParseIP("10.96.0.20"), fresh, false); !errors.Is(err, ErrAllocated) {
		t.Errorf("a live service's address was not restored: %v", err)
	}
}
