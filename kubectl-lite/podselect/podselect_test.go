package podselect

import (
	"bytes"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
)

func TestDefaultContainer(t *testing.T) {
	t.Parallel()
	pod := func(annotation string, names ...string) *api.Pod {
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web"}}
		if annotation != "" {
			p.Annotations = map[string]string{DefaultContainerAnnotation: annotation}
		}
		for _, n := range names {
			p.Spec.Containers = append(p.Spec.Containers, api.Container{Name: n})
		}
		return p
	}
	for _, tc := range []struct {
		name       string
		pod        *api.Pod
		want, note string
	}{
		{"one", pod("", "app"), "app", ""},
		{"several", pod("", "app", "sidecar"), "app", "Defaulted container \"app\" out of: app, sidecar\n"},
		{"annotated", pod("sidecar", "app", "sidecar"), "sidecar", ""},
		{"annotated missing", pod("gone", "app"), "app", "Default container name \"gone\" not found in pod web\n"},
		{"none", pod(""), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errOut bytes.Buffer
			if got := DefaultContainer(cli.Streams{ErrOut: &errOut}, tc.pod); got != tc.want || errOut.String() != tc.note {
				t.Errorf("DefaultContainer = %q, said %q; want %q, %q", got, errOut.String(), tc.want, tc.note)
			}
		})
	}
}

func TestContainer(t *testing.T) {
	t.Parallel()
	p := &api.Pod{Spec: api.PodSpec{
		Containers:          []api.Container{{Name: "app"}},
		InitContainers:      []api.Container{{Name: "init"}},
		EphemeralContainers: []api.EphemeralContainer{{Container: api.Container{Name: "debugger", TTY: true}}},
	}}
	for _, name := range []string{"app", "init", "debugger"} {
		if c := Container(p, name); c == nil || c.Name != name {
			t.Errorf("Container(%q) = %+v", name, c)
		}
	}
	if c := Container(p, "debugger"); !c.TTY {
		t.Errorf("Container(debugger) is not the pod's own: %+v", c)
	}
	if c := Container(p, "nothere"); c != nil {
		t.Errorf("Container(nothere) = %+v, want nil", c)
	}
}
