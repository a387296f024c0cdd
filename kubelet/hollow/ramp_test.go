package hollow_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubelet/hollow"
)

// rampWatch counts the nodes in their start phase through the fleet's
// StartPhaseHook.
type rampWatch struct {
	mu                sync.Mutex
	in, max           int
	entered, left     map[string]int
	leftUnregistered  []string
	enteredRegistered []string
}

// TestFleetStartRamp: 40 nodes with StartConcurrency 5 never have more
// than 5 in their start phase at once (as the hook sees them: entered
// before the node's Run, left once it is registered with synced
// informers), every node goes through it once, registered when it leaves,
// and all 40 become Ready.
func TestFleetStartRamp(t *testing.T) {
	const count, conc = 40, 5
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := adminClient(t, s)
	nodes := client.Resource[api.Node](admin)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	w := &rampWatch{entered: map[string]int{}, left: map[string]int{}}
	hook := func(n *hollow.Node, entering bool) {
		if entering {
			// The fleet calls this before the node's Run: nothing is
			// asked of the apiserver here, so the hook does not slow the
			// fleet's dispatch of the next node.
			w.mu.Lock()
			defer w.mu.Unlock()
			w.in++
			w.max = max(w.max, w.in)
			w.entered[n.Name()]++
			if n.Ready() {
				w.enteredRegistered = append(w.enteredRegistered, n.Name())
			}
			return
		}
		// Whether the apiserver has the Node, read outside the lock.
		_, err := nodes.Get(ctx, n.Name())
		registered := err == nil
		w.mu.Lock()
		defer w.mu.Unlock()
		w.in--
		w.left[n.Name()]++
		if !registered {
			w.leftUnregistered = append(w.leftUnregistered, n.Name())
		}
	}
	fleet := startFleet(t, hollow.FleetConfig{
		Client: admin, Count: count, NamePrefix: "ramp-", RootDir: t.TempDir(), Logger: apiservertest.Logger(),
		StartConcurrency: conc, StartPhaseHook: hook, ProgressInterval: 500 * time.Millisecond,
	})
	poll(t, ctx, "all nodes Ready and out of their start phase", func() error {
		l, err := nodes.List(ctx, client.ListOptions{LabelSelector: hollow.LabelHollow + "=true"})
		if err != nil {
			return err
		}
		ready := 0
		for i := range l.Items {
			if nodeReady(&l.Items[i]) {
				ready++
			}
		}
		w.mu.Lock()
		left := len(w.left)
		w.mu.Unlock()
		if ready != count || left != count {
			return fmt.Errorf("%d of %d nodes Ready (%d registered), %d out of their start phase", ready, count, len(l.Items), left)
		}
		return nil
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Logf("at most %d nodes in their start phase at once", w.max)
	if w.max > conc {
		t.Errorf("%d nodes in their start phase at once, want at most %d", w.max, conc)
	}
	if w.in != 0 {
		t.Errorf("%d nodes still in their start phase", w.in)
	}
	for i := range count {
		name := fmt.Sprintf("ramp-%d", i)
		if w.entered[name] != 1 || w.left[name] != 1 {
			t.Errorf("%s entered its start phase %d times and left it %d times, want once each", name, w.entered[name], w.left[name])
		}
	}
	if len(w.leftUnregistered) > 0 {
		t.Errorf("nodes left their start phase before their Node was registered: %v", w.leftUnregistered)
	}
	if len(w.enteredRegistered) > 0 {
		t.Errorf("nodes were registered before their start phase: %v", w.enteredRegistered)
	}
	if got := fleet.ReadyCount(); got != count {
		t.Errorf("fleet reports %d Ready nodes, want %d", got, count)
	}
}
