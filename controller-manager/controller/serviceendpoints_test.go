package controller

import (
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestFindPort(t *testing.T) {
	pod := &api.Pod{Spec: api.PodSpec{Containers: []api.Container{
		{Name: "a", Ports: []api.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "dns", ContainerPort: 53, Protocol: api.ProtocolUDP}}},
		{Name: "b", Ports: []api.ContainerPort{{Name: "metrics", ContainerPort: 9100}}},
	}}}
	tests := []struct {
		name    string
		port    api.ServicePort
		want    int32
		wantErr bool
	}{
		{name: "number", port: api.ServicePort{Port: 80, TargetPort: api.FromInt(8081)}, want: 8081},
		{name: "defaults to port", port: api.ServicePort{Port: 80}, want: 80},
		{name: "name in first container", port: api.ServicePort{Port: 80, TargetPort: api.FromString("http")}, want: 8080},
		{name: "name in second container", port: api.ServicePort{Port: 80, TargetPort: api.FromString("metrics")}, want: 9100},
		{name: "name with protocol", port: api.ServicePort{Port: 53, Protocol: api.ProtocolUDP, TargetPort: api.FromString("dns")}, want: 53},
		{name: "protocol mismatch", port: api.ServicePort{Port: 53, Protocol: api.ProtocolTCP, TargetPort: api.FromString("dns")}, wantErr: true},
		{name: "unknown name", port: api.ServicePort{Port: 80, TargetPort: api.FromString("nope")}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindPort(pod, &tt.port)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("FindPort = %d, %v; want %d, err %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestShouldPodBeInEndpoints(t *testing.T) {
	now := api.Now()
	tests := []struct {
		name        string
		phase       api.PodPhase
		restart     api.RestartPolicy
		ip          string
		terminating bool
		include     bool
		want        bool
	}{
		{name: "running", phase: api.PodRunning, ip: "10.0.0.1", want: true},
		{name: "no ip", phase: api.PodRunning},
		{name: "succeeded", phase: api.PodSucceeded, ip: "10.0.0.1"},
		{name: "failed under OnFailure still restarts", phase: api.PodFailed, restart: api.RestartPolicyOnFailure, ip: "10.0.0.1", want: true},
		{name: "failed under Never", phase: api.PodFailed, restart: api.RestartPolicyNever, ip: "10.0.0.1"},
		{name: "terminating excluded", phase: api.PodRunning, ip: "10.0.0.1", terminating: true},
		{name: "terminating included", phase: api.PodRunning, ip: "10.0.0.1", terminating: true, include: true, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &api.Pod{Spec: api.PodSpec{RestartPolicy: tt.restart}, Status: api.PodStatus{Phase: tt.phase, PodIP: tt.ip}}
			if tt.terminating {
				p.DeletionTimestamp = &now
			}
			if got := ShouldPodBeInEndpoints(p, tt.include); got != tt.want {
				t.Fatalf("ShouldPodBeInEndpoints = %v, want %v", got, tt.want)
			}
		})
	}
}
