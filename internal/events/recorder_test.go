package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/events"
)

func TestRecorderWritesAndFoldsRepeats(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver")
	}
	s := apiservertest.Start(t)
	c, err := client.New(&client.Config{Host: s.URL(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	b := events.NewBroadcaster(c, events.Options{Component: "test-controller", Host: "h1"})
	go b.Run(ctx)
	rec := b.Recorder()

	// A pod as read from a list: no apiVersion/kind set.
	pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web-1", Namespace: "default", UID: "u-1"}}
	node := &api.Node{ObjectMeta: api.ObjectMeta{Name: "n1", UID: "u-2"}}
	rec.Event(pod, api.EventTypeNormal, "Scheduled", "Successfully assigned default/web-1 to n1")
	rec.Eventf(pod, api.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	rec.Eventf(pod, api.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	rec.Eventf(pod, api.EventTypeWarning, "BackOff", "Back-off restarting failed container %s", "app")
	rec.Event(node, api.EventTypeNormal, "NodeReady", "Node n1 status is now: NodeReady")

	evs := client.Resource[api.Event](c)
	var list *api.List[api.Event]
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err = evs.List(ctx, client.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 3 && countOf(list.Items, "BackOff") == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("events never settled: %+v", list.Items)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, ev := range list.Items {
		if ev.Namespace != "default" {
			t.Errorf("event %s in namespace %q, want default", ev.Name, ev.Namespace)
		}
		if ev.Source.Component != "test-controller" || ev.ReportingController != "test-controller" {
			t.Errorf("event %s source %+v reporting %q", ev.Name, ev.Source, ev.ReportingController)
		}
		switch ev.Reason {
		case "Scheduled", "BackOff":
			if ev.InvolvedObject.Kind != "Pod" || ev.InvolvedObject.APIVersion != "v1" || ev.InvolvedObject.UID != "u-1" {
				t.Errorf("involvedObject %+v", ev.InvolvedObject)
			}
		case "NodeReady":
			if ev.InvolvedObject.Kind != "Node" || ev.InvolvedObject.Namespace != "" {
				t.Errorf("node event involvedObject %+v", ev.InvolvedObject)
			}
		default:
			t.Errorf("unexpected event %+v", ev)
		}
	}
}

func countOf(items []api.Event, reason string) int32 {
	for _, ev := range items {
		if ev.Reason == reason {
			return ev.Count
		}
	}
	return 0
}

func TestFakeRecorder(t *testing.T) {
	var f events.FakeRecorder
	f.Eventf(&api.Pod{}, api.EventTypeWarning, "FailedScheduling", "0/%d nodes are available", 3)
	got := f.Events()
	if len(got) != 1 || got[0] != "Warning FailedScheduling 0/3 nodes are available" {
		t.Fatalf("got %q", got)
	}
}
