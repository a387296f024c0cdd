package queue

import (
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/scheduler/schedtest"
)

func nominatedNames(n *Nominator, node string) []string {
	var out []string
	for _, p := range n.NominatedPodsForNode(node) {
		out = append(out, p.Name)
	}
	return out
}

// TestNominator follows kube's nominator: nominations come from the status
// or from the scheduler, an in-memory nomination survives updates that
// carry none, and binding or clearing forgets it.
func TestNominator(t *testing.T) {
	t.Parallel()
	n := NewNominator()
	a := schedtest.Pod("ns", "a", "", "")
	n.AddNominatedPod(a, "") // no status, no node: nothing
	if got := n.NominatedNode(a); got != "" {
		t.Fatalf("nominated to %q without a nomination", got)
	}
	n.AddNominatedPod(a, "n1")
	b := schedtest.Pod("ns", "b", "", "")
	b.Status.NominatedNodeName = "n1"
	n.AddNominatedPod(b, "")
	if got := nominatedNames(n, "n1"); len(got) != 2 {
		t.Fatalf("n1 nominated %v, want a and b", got)
	}

	// An update without a nomination keeps the in-memory one (the status
	// patch is not back yet); one that moves it moves it.
	a2 := api.DeepCopy(a)
	a2.Labels = map[string]string{"x": "y"}
	n.UpdateNominatedPod(a, a2)
	if got := n.NominatedNode(a2); got != "n1" {
		t.Errorf("after an update without nomination: %q, want n1", got)
	}
	b2 := api.DeepCopy(b)
	b2.Status.NominatedNodeName = "n2"
	n.UpdateNominatedPod(b, b2)
	if got := nominatedNames(n, "n2"); len(got) != 1 || got[0] != "b" {
		t.Errorf("n2 nominated %v, want b", got)
	}
	b3 := api.DeepCopy(b2)
	b3.Status.NominatedNodeName = ""
	n.UpdateNominatedPod(b2, b3)
	if got := n.NominatedNode(b3); got != "" {
		t.Errorf("nomination cleared by the status still there: %q", got)
	}

	n.DeleteNominatedPodIfExists(a2)
	if got := nominatedNames(n, "n1"); len(got) != 0 {
		t.Errorf("n1 nominated %v after the delete", got)
	}
	if n.count.Load() != 0 {
		t.Errorf("count %d, want 0", n.count.Load())
	}
}
