package protobuf

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestV137PodFieldsSurviveProtobuf: a pod carrying the pod and container
// fields of k8s.io/api v0.37 that our types gained for field parity
// (resizePolicy, restartPolicyRules, resources.claims, status.resize,
// containerStatuses[].resources, ...) keeps every one of them through
// protobuf and our api.Pod, as client-go sends and reads it.
func TestV137PodFieldsSurviveProtobuf(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile("../../api/testdata/pod_v137_fields.json")
	if err != nil {
		t.Fatal(err)
	}
	wire, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	decoded, _, err := Decode(wire)
	if err != nil {
		t.Fatal(err)
	}
	var pod api.Pod
	if err := json.Unmarshal(decoded, &pod); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(&pod)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, in, out)
}
