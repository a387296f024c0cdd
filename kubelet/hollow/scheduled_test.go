package hollow_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/resource"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/kubelet/hollow"
	"github.com/minik8s/minik8s/scheduler/scheduling"
)

// TestHollowNodesScheduled: the real scheduler places pods on hollow
// nodes by the capacity they report (2 CPUs each: three pods of 600m fit,
// a fourth does not), and they run there.
func TestHollowNodesScheduled(t *testing.T) {
	const nodes, perNode = 10, 3
	s := apiservertest.Start(t, apiservertest.WithTLS)
	admin := adminClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	startFleet(t, hollow.FleetConfig{
		Client: admin, Count: nodes, NamePrefix: "hn-", RootDir: t.TempDir(), Logger: apiservertest.Logger(),
		Template: hollow.Config{Capacity: api.ResourceList{api.ResourceCPU: resource.MustParse("2")}},
	})
	log := slog.New(slog.DiscardHandler)
	sctx, scancel := context.WithCancel(context.Background())
	bc := events.NewBroadcaster(admin, events.Options{Component: scheduling.DefaultSchedulerName, Host: "test", Logger: log})
	sched, err := scheduling.New(scheduling.Config{Client: admin, Recorder: bc.Recorder(), Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go bc.Run(sctx)
	go func() { defer close(done); _ = sched.Run(sctx) }()
	t.Cleanup(func() { scancel(); <-done })

	podsc := client.Resource[api.Pod](admin).Namespace("default")
	for i := range nodes * perNode {
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "default"},
			Spec: api.PodSpec{Containers: []api.Container{{Name: "web", Image: "registry.example/web:1",
				Resources: api.ResourceRequirements{Requests: api.ResourceList{api.ResourceCPU: resource.MustParse("600m")}}}}}}
		if _, err := podsc.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	poll(t, ctx, "every pod scheduled onto a hollow node and Running", func() error {
		l, err := podsc.List(ctx, client.ListOptions{})
		if err != nil {
			return err
		}
		byNode := map[string]int{}
		for i := range l.Items {
			p := &l.Items[i]
			if p.Status.Phase != api.PodRunning || p.Status.PodIP == "" {
				return fmt.Errorf("pod %s on %q: %s", p.Name, p.Spec.NodeName, p.Status.Phase)
			}
			byNode[p.Spec.NodeName]++
		}
		if len(byNode) != nodes {
			return fmt.Errorf("pods on %d nodes: %v", len(byNode), byNode)
		}
		for n, c := range byNode {
			if c != perNode {
				return fmt.Errorf("node %s runs %d pods, want %d: %v", n, c, perNode, byNode)
			}
		}
		return nil
	})
}
