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
		h := &api.HorizontalPodAutoscaler{}
		if tc.in != "" {
			if err := json.Unmarshal([]byte(tc.in), &h.Spec.Behavior); err != nil {
				t.Fatal(err)
			}
		}
		HorizontalPodAutoscaler(h)
		got := ""
		if h.Spec.Behavior != nil {
			b, err := json.Marshal(h.Spec.Behavior)
			if err != nil {
				t.Fatal(err)
			}
			got = string(b)
		}
		if got != tc.want {
			t.Errorf("behavior %s defaulted to\n%s\nwant\n%s", tc.in, got, tc.want)
		}
	}
}
