package nodeipam

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/client/clienttest"
	"github.com/minik8s/minik8s/internal/events"
	"github.com/minik8s/minik8s/internal/informer"
)

func node(name, cidr string) *api.Node {
	return &api.Node{ObjectMeta: api.ObjectMeta{Name: name}, Spec: api.NodeSpec{PodCIDR: cidr}}
}

func newTestController(t *testing.T, cluster string, mask int, objs ...api.Object) (*Controller, *clienttest.Server, *events.FakeRecorder) {
	t.Helper()
	srv := clienttest.NewServer(t, objs...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	f := informer.NewFactory(srv.Client(), informer.FactoryOptions{Logger: slog.New(slog.DiscardHandler)})
	set, err := NewCIDRSet(cluster, mask)
	if err != nil {
		t.Fatal(err)
	}
	rec := &events.FakeRecorder{}
	c := NewController(srv.Client(), informer.Shared[api.Node](f, "", client.ListOptions{}), set, rec, slog.New(slog.DiscardHandler))
	f.Start(ctx)
	if !f.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	c.occupyExisting()
	srv.ClearActions()
	return c, srv, rec
}

func TestSync(t *testing.T) {
	tests := []struct {
		name        string
		cluster     string
		mask        int
		nodes       []api.Object
		sync        string
		wantActions []string
		wantCIDR    string
		wantEvents  []string
		wantErr     bool
	}{
		{name: "assigns the first free block", cluster: "10.244.0.0/16", mask: 24,
			nodes: []api.Object{node("a", "10.244.0.0/24"), node("b", "")}, sync: "b",
			wantActions: []string{"patch nodes b"}, wantCIDR: "10.244.1.0/24"},
		{name: "node with a podCIDR is left alone", cluster: "10.244.0.0/16", mask: 24,
			nodes: []api.Object{node("a", "10.244.0.0/24")}, sync: "a"},
		{name: "deleted node", cluster: "10.244.0.0/16", mask: 24, sync: "gone"},
		{name: "range full", cluster: "10.0.0.0/31", mask: 31,
			nodes: []api.Object{node("a", "10.0.0.0/31"), node("b", "")}, sync: "b",
			wantErr: true, wantEvents: []string{"Warning CIDRNotAvailable Node b status is now: CIDRNotAvailable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv, rec := newTestController(t, tt.cluster, tt.mask, tt.nodes...)
			err := c.sync(context.Background(), tt.sync)
			if (err != nil) != tt.wantErr {
				t.Fatalf("sync error = %v, wantErr %v", err, tt.wantErr)
			}
			var got []string
			for _, a := range srv.Actions() {
				if a.Verb != "watch" && a.Verb != "list" {
					got = append(got, a.String())
				}
			}
			if !slices.Equal(got, tt.wantActions) {
				t.Fatalf("actions = %q, want %q", got, tt.wantActions)
			}
			if tt.wantCIDR != "" {
				var n api.Node
				srv.Object(client.Resource[api.Node](srv.Client()).Info(), "", tt.sync, &n)
				if n.Spec.PodCIDR != tt.wantCIDR || !slices.Equal(n.Spec.PodCIDRs, []string{tt.wantCIDR}) {
					t.Fatalf("podCIDR = %q %q, want %q", n.Spec.PodCIDR, n.Spec.PodCIDRs, tt.wantCIDR)
				}
			}
			if !slices.Equal(rec.Events(), tt.wantEvents) {
				t.Fatalf("events = %q, want %q", rec.Events(), tt.wantEvents)
			}
		})
	}
}

func TestReleaseOnDelete(t *testing.T) {
	c, _, _ := newTestController(t, "10.0.0.0/30", 31, node("a", "10.0.0.0/31"), node("b", "10.0.0.2/31"))
	if c.set.Used() != 2 {
		t.Fatalf("used = %d after rebuild, want 2", c.set.Used())
	}
	c.nodes.Store().DeleteByKey("a")
	if err := c.sync(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	if c.set.Used() != 1 {
		t.Fatalf("used = %d after delete, want 1", c.set.Used())
	}
}
