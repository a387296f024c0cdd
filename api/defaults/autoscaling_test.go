package defaults

import (
	"encoding/json"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestHPABehaviorDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{`{}`, `{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},"scaleDown":{"selectPolicy":"Max","policies":[{"type":"Percent","value":100,"periodSeconds":15}]}}`},
		{`{"scaleDown":{"stabilizationWindowSeconds":0,"policies":[{"type":"Pods","value":1,"periodSeconds":60}]},"scaleUp":{"selectPolicy":"Disabled"}}`,
			`{"scaleUp":{"stabilizationWindowSeconds":0,"selectPolicy":"Disabled","policies":[{"type":"Pods","value":4,"periodSeconds":15},{"type":"Percent","value":100,"periodSeconds":15}]},"scaleDown":{"stabilizationWindowSeconds":0,"selectPolicy":"Max","policies":[{"type":"Pods","value":1,"periodSeconds":60}]}}`},
	} {
		h := &api.HorizontalPodAutoscaler{Spec: api.HorizontalPodAutoscalerSpec{Behavior: json.RawMessage(tc.in)}}
		HorizontalPodAutoscaler(h)
		if string(h.Spec.Behavior) != tc.want {
			t.Errorf("behavior %s defaulted to\n%s\nwant\n%s", tc.in, h.Spec.Behavior, tc.want)
		}
	}
}
