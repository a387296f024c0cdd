package rollout

import (
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	three := int32(3)
	d := func(gen, observed int64, st api.DeploymentStatus) *api.Deployment {
		return &api.Deployment{ObjectMeta: api.ObjectMeta{Name: "web", Generation: gen},
			Spec: api.DeploymentSpec{Replicas: &three}, Status: func() api.DeploymentStatus { st.ObservedGeneration = observed; return st }()}
	}
	tests := []struct {
		name    string
		d       *api.Deployment
		want    string
		done    bool
		wantErr string
	}{
		{"not observed", d(2, 1, api.DeploymentStatus{}), "Waiting for deployment spec update to be observed...\n", false, ""},
		{"updating", d(1, 1, api.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1}), "Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...\n", false, ""},
		{"old pending", d(1, 1, api.DeploymentStatus{Replicas: 5, UpdatedReplicas: 3}), "Waiting for deployment \"web\" rollout to finish: 2 old replicas are pending termination...\n", false, ""},
		{"available", d(1, 1, api.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 2}), "Waiting for deployment \"web\" rollout to finish: 2 of 3 updated replicas are available...\n", false, ""},
		{"done", d(1, 1, api.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}), "deployment \"web\" successfully rolled out\n", true, ""},
		{"deadline", d(1, 1, api.DeploymentStatus{Conditions: []api.DeploymentCondition{{Type: "Progressing", Status: "False", Reason: "ProgressDeadlineExceeded"}}}),
			"", false, `deployment "web" exceeded its progress deadline`},
	}
	for _, tt := range tests {
		msg, done, err := Status(tt.d)
		if msg != tt.want || done != tt.done || (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
			t.Errorf("%s: Status = %q, %v, %v", tt.name, msg, done, err)
		}
	}
}
