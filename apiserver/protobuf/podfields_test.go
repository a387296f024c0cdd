package protobuf

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestV137FieldsSurviveProtobuf: objects carrying the fields of
// k8s.io/api v0.37 that our types gained for field parity (pods'
// resizePolicy, restartPolicyRules, resources.claims, status.resize,
// containerStatuses[].resources...; nodes' runtimeHandlers, features,
// config...; jobs' scheduling) keep every one of them through protobuf and
// our types, as client-go sends and reads them.
func TestV137FieldsSurviveProtobuf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		obj  api.Object
	}{
		{"pod_v137_fields.json", &api.Pod{}},
		{"node_v137_fields.json", &api.Node{}},
		{"job_v137_fields.json", &api.Job{}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			in, err := os.ReadFile("../../api/testdata/" + tc.file)
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
			if err := json.Unmarshal(decoded, tc.obj); err != nil {
				t.Fatal(err)
			}
			out, err := json.Marshal(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, in, out)
		})
	}
}
