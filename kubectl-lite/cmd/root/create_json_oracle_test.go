package root_test

import (
	"strings"
	"testing"

	"github.com/minik8s/minik8s/internal/oracle"
)

// TestIntegrationCreateJSONOracle: every generator kubectl-lite has (not
// yet: create quota, role, rolebinding, clusterrole, clusterrolebinding,
// priorityclass, poddisruptionbudget, secret docker-registry, service
// loadbalancer and externalname) prints in a client dry run, with -o
// json and -o yaml, the bytes the real kubectl v1.37 prints (kubectl
// builds these objects typed, so its JSON follows the types' field order,
// not sorted keys, and writes their empty structs).
func TestIntegrationCreateJSONOracle(t *testing.T) {
	oracle.Path(t, "kubectl")
	c := startCluster(t)
	for _, args := range []string{
		`create configmap cm --from-literal=b=2 --from-literal=a=1`,
		`create secret generic s --from-literal=k=v --type=Opaque`,
		`create deployment web --image=nginx --replicas=2 --port=80`,
		`create job j --image=busybox -- echo hi`,
		`create cronjob cj --image=busybox --schedule=*/5_*_*_*_* -- echo hi`,
		`create namespace ns1`,
		`create service clusterip svc --tcp=80:8080 --tcp=443`,
		`create service nodeport np --tcp=80:8080 --node-port=30080`,
		`create serviceaccount sa`,
		`run pod1 --image=nginx --port=80 --labels=app=x --env=A=1`,
	} {
		for _, out := range []string{"json", "yaml"} {
			name := strings.Join(strings.Fields(args)[:2], "-") + "-" + out
			t.Run(name, func(t *testing.T) {
				fields := strings.Fields(args)
				for i, f := range fields {
					fields[i] = strings.ReplaceAll(f, "_", " ")
				}
				// The flags before the words after "--" (a command).
				full := append(append(append([]string{}, fields[:3]...), "--dry-run=client", "-o", out), fields[3:]...)
				want, wantErr, wantCode := c.kubectl(full...)
				got, gotErr, gotCode := c.run("", full...)
				if got != want {
					t.Errorf("kubectl-lite %s differs from kubectl:\n--- kubectl-lite\n%s\n--- kubectl\n%s", full, got, want)
				}
				if gotErr != wantErr || gotCode != wantCode {
					t.Errorf("kubectl-lite %s: exit %d, stderr %q; kubectl: exit %d, stderr %q", full, gotCode, gotErr, wantCode, wantErr)
				}
			})
		}
	}
}
