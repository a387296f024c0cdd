package taint

import (
	"reflect"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args           []string
		resources      []string
		add, remove    []api.Taint
		wantErr        string
		wantUsageError bool
	}{
		{args: []string{"nodes", "a", "b", "k=v:NoSchedule", "x:NoExecute-", "y-"}, resources: []string{"nodes", "a", "b"},
			add:    []api.Taint{{Key: "k", Value: "v", Effect: api.TaintEffectNoSchedule}},
			remove: []api.Taint{{Key: "x", Effect: api.TaintEffectNoExecute}, {Key: "y"}}},
		{args: []string{"nodes", "a", "example.com/k:PreferNoSchedule"}, resources: []string{"nodes", "a"},
			add: []api.Taint{{Key: "example.com/k", Effect: api.TaintEffectPreferNoSchedule}}},
		{args: []string{"nodes", "a", "k=v:NoSchedule", "b"}, wantErr: "all resources must be specified before taint changes: b"},
		{args: []string{"nodes", "a"}, wantErr: "at least one taint update is required"},
		{args: []string{"k=v:NoSchedule"}, wantErr: "one or more resources must be specified as <resource> <name>"},
		{args: []string{"nodes", "a", "k=v=w:NoSchedule"}, wantErr: "invalid taint spec: k=v=w:NoSchedule", wantUsageError: true},
		{args: []string{"nodes", "a", "k:v:NoSchedule"}, wantErr: "invalid taint spec: k:v:NoSchedule", wantUsageError: true},
		{args: []string{"nodes", "a", "k"}, wantErr: "at least one taint update is required"},
		{args: []string{"nodes", "a", "k=v:Never"}, wantErr: "invalid taint effect: Never, unsupported taint effect", wantUsageError: true},
		{args: []string{"nodes", "a", "k=v:NoSchedule", "k=w:NoSchedule"}, wantErr: "duplicated taints with the same key and effect: {k w NoSchedule <nil>}", wantUsageError: true},
	}
	for _, tt := range tests {
		resources, add, remove, err := parseArgs(tt.args)
		if tt.wantErr != "" {
			_, usage := err.(usageError)
			if err == nil || err.Error() != tt.wantErr || usage != tt.wantUsageError {
				t.Errorf("parseArgs(%q) = %v (usage error %t), want %q (%t)", tt.args, err, usage, tt.wantErr, tt.wantUsageError)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(resources, tt.resources) || !reflect.DeepEqual(add, tt.add) || !reflect.DeepEqual(remove, tt.remove) {
			t.Errorf("parseArgs(%q) = %q %+v %+v %v", tt.args, resources, add, remove, err)
		}
	}
}

func TestUpdate(t *testing.T) {
	ns := api.Taint{Key: "k", Value: "v", Effect: api.TaintEffectNoSchedule}
	ne := api.Taint{Key: "k", Value: "v", Effect: api.TaintEffectNoExecute}
	other := api.Taint{Key: "o", Effect: api.TaintEffectNoSchedule}
	tests := []struct {
		name        string
		have        []api.Taint
		add, remove []api.Taint
		overwrite   bool
		op          string
		want        []api.Taint
		wantErr     string
	}{
		{name: "add", have: []api.Taint{other}, add: []api.Taint{ns}, op: "tainted", want: []api.Taint{ns, other}},
		{name: "exists", have: []api.Taint{ns}, add: []api.Taint{{Key: "k", Value: "w", Effect: api.TaintEffectNoSchedule}},
			wantErr: "node n already has k taint(s) with same effect(s) and --overwrite is false"},
		{name: "overwrite", have: []api.Taint{ns, other}, add: []api.Taint{{Key: "k", Value: "w", Effect: api.TaintEffectNoSchedule}}, overwrite: true,
			op: "modified", want: []api.Taint{{Key: "k", Value: "w", Effect: api.TaintEffectNoSchedule}, other}},
		{name: "remove by key", have: []api.Taint{ns, ne, other}, remove: []api.Taint{{Key: "k"}}, op: "untainted", want: []api.Taint{other}},
		{name: "remove by key and effect", have: []api.Taint{ns, ne}, remove: []api.Taint{{Key: "k", Effect: api.TaintEffectNoExecute}}, op: "untainted", want: []api.Taint{ns}},
		{name: "add and remove", have: []api.Taint{other}, add: []api.Taint{ns}, remove: []api.Taint{{Key: "o"}}, op: "modified", want: []api.Taint{ns}},
		{name: "remove missing", have: []api.Taint{other}, remove: []api.Taint{{Key: "k", Effect: api.TaintEffectNoSchedule}}, wantErr: `taint "k:NoSchedule" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, got, err := update(&api.Node{ObjectMeta: api.ObjectMeta{Name: "n"}, Spec: api.NodeSpec{Taints: tt.have}}, tt.add, tt.remove, tt.overwrite)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || op != tt.op || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("update = %q %+v %v, want %q %+v", op, got, err, tt.op, tt.want)
			}
		})
	}
}
