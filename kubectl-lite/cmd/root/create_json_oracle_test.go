package root_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/oracle"
)

// TestIntegrationCreateJSONOracle: every generator kubectl-lite has prints in a client dry run, with -o
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
		`create service loadbalancer lb --tcp=80:8080 --tcp=443:https --tcp=0`,
		`create service externalname en --external-name=bar.example.com`,
		`create service externalname en2 --external-name=bar.com --tcp=80`,
		`create role r1 --verb=get,list,get --verb=watch --resource=pods,rs.apps,pods/status,deploy --resource-name=a --resource-name=b --resource-name=a`,
		`create role r2 --verb=* --resource=*`,
		`create role r6 --verb=get --resource=Pods,Deployment.apps,pod,cm,sts.apps,rs/scale,services/status`,
		`create role r3 --verb=get --verb=* --resource=widgets.example.com,services`,
		`create role r4 --verb=bind,escalate --resource=roles.rbac.authorization.k8s.io`,
		`create clusterrole cr1 --verb=get,list --resource=nodes,pods/log --non-resource-url=/logs/* --non-resource-url=/healthz`,
		`create clusterrole cr2 --aggregation-rule=rbac.example.com/aggregate-to-view=true,b=c`,
		`create clusterrole cr3 --verb=get --non-resource-url=*`,
		`create rolebinding rb1 --role=r1 --user=u1 --user=u2 --group=g1 --serviceaccount=ns:sa`,
		`create rolebinding rb2 --clusterrole=view`,
		`create clusterrolebinding crb1 --clusterrole=view --group=g1 --user=u1 --serviceaccount=kube-system:default`,
		`create clusterrolebinding crb2 --clusterrole=edit`,
		`create quota q1 --hard=cpu=1000m,memory=1G,pods=2,requests.storage=1.5Gi,services=3e3 --scopes=BestEffort,NotTerminating`,
		`create quota q2`,
		`create quota q4 -n kube-system --hard=pods=1`,
		`create role r5 -n kube-system --verb=get --resource=configmaps`,
		`create rolebinding rb3 -n kube-system --clusterrole=view --serviceaccount=kube-system:default`,
		`create pdb pdb4 -n kube-system --selector=a=b --max-unavailable=1`,
		`create resourcequota q3 --hard=pods=0.5`,
		`create priorityclass pc1 --value=1000 --description=high --global-default`,
		`create priorityclass pc2`,
		`create pc pc3 --value=-5 --preemption-policy=Never`,
		`create poddisruptionbudget pdb1 --selector=app=rails,tier!=db --min-available=1`,
		`create pdb pdb2 --selector=app=nginx --max-unavailable=50%`,
		`create secret docker-registry d1 --docker-username=u --docker-password=p --docker-email=e@x.org --docker-server=reg.example.com:5000`,
		`create secret docker-registry d2 --docker-username=u --docker-password=p`,
		`create secret docker-registry d3 --docker-username=u --docker-password=p --append-hash`,
		`create secret docker-registry d4 --from-file=/etc/hostname --from-file=other=/etc/hostname`,
		`create pdb pdb3 --selector=app,!legacy,env_in_(a,b) --min-available=0`,
		`run pod1 --image=nginx --port=80 --labels=app=x --env=A=1`,
	} {
		for _, out := range []string{"json", "yaml"} {
			name := strings.Join(strings.Fields(args)[:3], "-") + "-" + out
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

// TestIntegrationCreateRBACErrorsOracle: create role, clusterrole,
// rolebinding, clusterrolebinding, quota, priorityclass and pdb refuse what kubectl v1.37 refuses,
// with its exit code and stderr (warnings included), and print what it
// prints for the rest.
func TestIntegrationCreateRBACErrorsOracle(t *testing.T) {
	oracle.Path(t, "kubectl")
	c := startCluster(t)
	for _, args := range []string{
		`create role`,
		`create role a b --verb=get --resource=pods`,
		`create role r --resource=pods`,
		`create role r --verb=get`,
		`create role r --verb=frob --resource=pods`,
		`create role r --verb=get --resource=nosuchthings`,
		`create role r --verb=get --resource=pods.nosuchgroup`,
		`create role r --verb=get --resource=.apps`,
		`create role r --verb=get --resource=/status`,
		`create role r --verb=use --resource=pods`,
		`create role r --verb=impersonate --resource=users,serviceaccounts`,
		`create role r --verb=get --resource=pods --dry-run=maybe`,
		`create role r --verb=get --resource=pods -o name`,
		`create clusterrole cr`,
		`create clusterrole cr --verb=get`,
		`create clusterrole cr --verb=post --non-resource-url=/x`,
		`create clusterrole cr --verb=get --non-resource-url=x`,
		`create clusterrole cr --verb=get --non-resource-url=/a*/b`,
		`create clusterrole cr --verb=get --aggregation-rule=a=b`,
		`create clusterrole cr --verb=frob --resource=pods --non-resource-url=/x`,
		`create rolebinding rb`,
		`create rolebinding rb --role=a --clusterrole=b`,
		`create rolebinding rb --role=a --serviceaccount=nocolon`,
		`create rolebinding rb --role=a --serviceaccount=:x`,
		`create rolebinding rb --role=a -o name`,
		`create clusterrolebinding crb`,
		`create clusterrolebinding crb --clusterrole=x --serviceaccount=a:b:c`,
		`create quota q --hard=cpu=lots`,
		`create quota q --hard=cpu`,
		`create quota q --hard=cpu=1=2`,
		`create quota q --hard=pods=1 --scopes=BestEffort,`,
		`create quota`,
		`create clusterrole cr --aggregation-rule=novalue`,
		`create quota q --bogus`,
		`create priorityclass pc --value=x`,
		`create priorityclass pc --value=5 -o name`,
		`create secret docker-registry d`,
		`create secret docker-registry d --docker-username=u`,
		`create secret docker-registry d --from-file=/nonexistent/config.json`,
		`create secret docker-registry d --from-file=/tmp`,
		`create secret docker-registry d --docker-username=u --docker-password=p -o name`,
		`create service loadbalancer lb`,
		`create service loadbalancer lb --tcp=x`,
		`create service loadbalancer lb --tcp=70000`,
		`create service loadbalancer lb --tcp=80:0`,
		`create service loadbalancer lb --tcp=80:Bad_Name`,
		`create service loadbalancer lb --tcp=80 -o name`,
		`create service externalname en`,
		`create service externalname en --external-name=Bad_Name`,
		`create pdb p --min-available=1`,
		`create pdb p --selector=a=b`,
		`create pdb p --selector=a=b --min-available=1 --max-unavailable=1`,
		`create pdb p --selector=a=b --min-available=-1`,
		`create pdb p --selector=a=b --max-unavailable=1.5`,
		`create pdb p --selector=a==b=c --min-available=1`,
		`create pdb p --selector=a=b --min-available=1 --dry-run=nope`,
	} {
		t.Run(strings.ReplaceAll(args, " ", "_"), func(t *testing.T) {
			full := append(strings.Fields(args), "--dry-run=client")
			if strings.Contains(args, "--dry-run") {
				full = strings.Fields(args)
			}
			want, wantErr, wantCode := c.kubectl(full...)
			got, gotErr, gotCode := c.run("", full...)
			gotErr = strings.ReplaceAll(gotErr, "kubectl-lite", "kubectl")
			if got != want {
				t.Errorf("kubectl-lite %s differs from kubectl:\n--- kubectl-lite\n%s\n--- kubectl\n%s", full, got, want)
			}
			if gotErr != wantErr || gotCode != wantCode {
				t.Errorf("kubectl-lite %s: exit %d, stderr %q; kubectl: exit %d, stderr %q", full, gotCode, gotErr, wantCode, wantErr)
			}
		})
	}
}

// TestIntegrationCreateGeneratorsServerOracle: the generators added after
// the first ones (role to service externalname) against the server: a
// server dry run says what kubectl says, a real create prints kubectl's
// "KIND/NAME created" and the object exists, and creating it again fails
// with kubectl's exit code and message.
func TestIntegrationCreateGeneratorsServerOracle(t *testing.T) {
	oracle.Path(t, "kubectl")
	c := startCluster(t)
	for _, args := range []string{
		`create role sr --verb=get,list --resource=pods,deployments.apps`,
		`create clusterrole scr --verb=get --resource=nodes --non-resource-url=/healthz`,
		`create clusterrole sagg --aggregation-rule=a=b`,
		`create rolebinding srb --role=sr --user=u1 --serviceaccount=default:default`,
		`create clusterrolebinding scrb --clusterrole=scr --group=g1`,
		`create quota sq --hard=pods=2,cpu=1`,
		`create priorityclass spc --value=100`,
		`create pdb spdb --selector=app=x --min-available=50%`,
		`create secret docker-registry sdr --docker-username=u --docker-password=p`,
		`create service loadbalancer slb --tcp=80:8080`,
		`create service externalname sen --external-name=example.com`,
	} {
		t.Run(strings.Join(strings.Fields(args)[1:3], "-"), func(t *testing.T) {
			full := strings.Fields(args)
			for _, extra := range [][]string{{"--dry-run=server"}, {"--dry-run=server", "-o", "name"}} {
				a := append(append([]string{}, full...), extra...)
				want, wantErr, wantCode := c.kubectl(a...)
				got, gotErr, gotCode := c.run("", a...)
				if got != want || gotErr != wantErr || gotCode != wantCode {
					t.Errorf("kubectl-lite %s: exit %d, stdout %q, stderr %q; kubectl: exit %d, stdout %q, stderr %q", a, gotCode, got, gotErr, wantCode, want, wantErr)
				}
				if wantCode != 0 {
					t.Fatalf("kubectl %s failed: %s", a, wantErr)
				}
			}
			dry, _, _ := c.kubectl(append(append([]string{}, full...), "--dry-run=server")...)
			got, gotErr, gotCode := c.run("", full...)
			if want := strings.Replace(dry, " (server dry run)", "", 1); got != want || gotCode != 0 {
				t.Fatalf("kubectl-lite %s: exit %d, stdout %q, stderr %q; want %q", full, gotCode, got, gotErr, want)
			}
			name := strings.TrimSuffix(strings.TrimSpace(got), " created")
			if out, errOut, code := c.kubectl("get", name, "-o", "name"); code != 0 || strings.TrimSpace(out) != name {
				t.Errorf("kubectl get %s after kubectl-lite created it: exit %d, %q %q", name, code, out, errOut)
			}
			want, wantErr, wantCode := c.kubectl(full...)
			got, gotErr, gotCode = c.run("", full...)
			if got != want || gotErr != wantErr || gotCode != wantCode || wantCode == 0 {
				t.Errorf("kubectl-lite %s again: exit %d, stdout %q, stderr %q; kubectl: exit %d, stdout %q, stderr %q", full, gotCode, got, gotErr, wantCode, want, wantErr)
			}
		})
	}
}

// TestIntegrationCreateFieldManager: the generators, run and expose
// record the field manager kubectl does: kubectl-create, kubectl-run and
// kubectl-expose by default, --field-manager's value when given.
func TestIntegrationCreateFieldManager(t *testing.T) {
	oracle.Path(t, "kubectl")
	c := startCluster(t)
	for _, tc := range []struct{ args, object, want string }{
		{`create role fm1 --verb=get --resource=pods`, "role/fm1", "kubectl-create"},
		{`create quota fm2 --hard=pods=1 --field-manager=mine`, "quota/fm2", "mine"},
		{`create configmap fm3 --from-literal=a=b --field-manager=other`, "configmap/fm3", "other"},
		{`run fm4 --image=nginx`, "pod/fm4", "kubectl-run"},
		{`expose pod fm4 --port=80 --name=fm5`, "service/fm5", "kubectl-expose"},
	} {
		if out, errOut, code := c.run("", strings.Fields(tc.args)...); code != 0 {
			t.Fatalf("kubectl-lite %s: exit %d, %q %q", tc.args, code, out, errOut)
		}
		got, errOut, code := c.kubectl("get", tc.object, "-o", "jsonpath={.metadata.managedFields[*].manager}")
		if code != 0 || got != tc.want {
			t.Errorf("%s after kubectl-lite %s: managers %q (exit %d, %q), want %q", tc.object, tc.args, got, code, errOut, tc.want)
		}
	}
}

// TestIntegrationCreateSecretTLSOracle: create secret tls from a key pair
// prints kubectl's bytes (json, yaml, --append-hash), and a missing flag,
// an unreadable file or a key that does not match fail as kubectl's.
func TestIntegrationCreateSecretTLSOracle(t *testing.T) {
	oracle.Path(t, "kubectl")
	c := startCluster(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "example.com"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(4e9, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"t1", "--cert=" + certFile, "--key=" + keyFile, "-o", "json"},
		{"t2", "--cert=" + certFile, "--key=" + keyFile, "-o", "yaml", "--append-hash"},
		{"t3", "--cert=" + certFile, "--key=" + keyFile},
		{"t4", "--cert=" + certFile},
		{"t5", "--cert=" + certFile, "--key=" + filepath.Join(dir, "missing.key")},
		{"t6", "--cert=" + certFile, "--key=" + certFile},
		{"t7", "--cert=" + keyFile, "--key=" + keyFile},
	} {
		t.Run(args[0], func(t *testing.T) {
			full := append([]string{"create", "secret", "tls", "--dry-run=client"}, args...)
			want, wantErr, wantCode := c.kubectl(full...)
			got, gotErr, gotCode := c.run("", full...)
			if got != want || gotErr != wantErr || gotCode != wantCode {
				t.Errorf("kubectl-lite %s: exit %d, stdout %q, stderr %q; kubectl: exit %d, stdout %q, stderr %q", full, gotCode, got, gotErr, wantCode, want, wantErr)
			}
		})
	}
}
