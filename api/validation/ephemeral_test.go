package validation

import (
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestValidatePodEphemeralContainersUpdate(t *testing.T) {
	t.Parallel()
	debugger := func(name string) api.EphemeralContainer {
		return api.EphemeralContainer{Container: api.Container{Name: name, Image: "busybox", ImagePullPolicy: api.PullIfNotPresent,
			TerminationMessagePolicy: api.TerminationMessageReadFile, Stdin: true, TTY: true}, TargetContainerName: "nginx"}
	}
	old := validPod()
	old.Spec.EphemeralContainers = []api.EphemeralContainer{debugger("dbg")}
	ec := "spec.ephemeralContainers"
	tests := []struct {
		name   string
		mutate func(*api.Pod)
		want   []string
	}{
		{"add one", func(p *api.Pod) { p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugger("dbg2")) }, nil},
		{"unchanged", func(*api.Pod) {}, nil},
		{"remove", func(p *api.Pod) { p.Spec.EphemeralContainers = nil }, []string{
			ec + ": Forbidden: existing ephemeral containers \"dbg\" may not be removed\n"}},
		{"change", func(p *api.Pod) { p.Spec.EphemeralContainers[0].Image = "other" }, []string{
			ec + ": Forbidden: existing ephemeral containers \"dbg\" may not be changed\n"}},
		{"fields not allowed, duplicate name, unknown target", func(p *api.Pod) {
			d := debugger("nginx")
			d.Ports = []api.ContainerPort{{ContainerPort: 80, Protocol: api.ProtocolTCP}}
			d.ReadinessProbe = &api.Probe{}
			d.Resources.Limits = api.ResourceList{api.ResourceCPU: q("1")}
			d.TargetContainerName = "nope"
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, d)
		}, []string{
			ec + `[1].name: Duplicate value: "nginx"`,
			ec + `[1].targetContainerName: Not found: "nope"`,
			ec + `[1].ports: Forbidden: cannot be set for an Ephemeral Container`,
			ec + `[1].resources: Forbidden: cannot be set for an Ephemeral Container`,
			ec + `[1].readinessProbe: Forbidden: cannot be set for an Ephemeral Container`,
		}},
		{"duplicate among ephemeral", func(p *api.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugger("dbg"))
		}, []string{ec + `[1].name: Duplicate value: "dbg"`}},
	}
	for _, tc := range tests {
		p := deepCopyPod(old)
		tc.mutate(p)
		checkErrs(t, tc.name, ValidatePodEphemeralContainersUpdate(p, old), tc.want)
	}
	created := validPod()
	created.Spec.EphemeralContainers = []api.EphemeralContainer{debugger("dbg")}
	checkErrs(t, "set on create", ValidatePod(created), []string{ec + ": Forbidden: cannot be set on create"})
}
