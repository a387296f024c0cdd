package resource

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		listing bool
		want    string // refs as "kind.group/name@ns", types as "+resource"
		wantErr string
	}{
		{args: []string{"po", "a", "b"}, want: "pod/a@ns pod/b@ns"},
		{args: []string{"deploy/web", "no/n1"}, want: "deployment.apps/web@ns node/n1@"},
		{args: []string{"po,svc"}, listing: true, want: "+pods +services"},
		{args: []string{"po"}, wantErr: "resource(s) were provided, but no name was specified"},
		{args: []string{"frob", "x"}, wantErr: `the server doesn't have a resource type "frob"`},
		// kubectl's normalizeMultipleResourcesArgs: every name of each type.
		{args: []string{"po,svc,po", "x", "y"}, want: "pod/x@ns pod/y@ns service/x@ns service/y@ns"},
		{args: []string{"clusterrolebinding,clusterrole", "admin"}, want: "clusterrolebinding.rbac.authorization.k8s.io/admin@ clusterrole.rbac.authorization.k8s.io/admin@"},
		{args: []string{"all", "x"}, wantErr: "you must specify only one resource type when naming objects"},
		{args: nil, wantErr: "You must provide one or more resources"},
	}
	for _, tt := range tests {
		sel, err := Parse(tt.args, "ns", tt.listing)
		if tt.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%v) error %v, want %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%v): %v", tt.args, err)
			continue
		}
		var got []string
		for _, r := range sel.Refs {
			got = append(got, r.String()+"@"+r.Namespace)
		}
		for _, i := range sel.Types {
			got = append(got, "+"+i.Resource)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("Parse(%v) = %v, want %s", tt.args, got, tt.want)
		}
	}
}
