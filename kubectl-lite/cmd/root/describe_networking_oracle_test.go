package root_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/oracle"
	"github.com/minik8s/minik8s/kubectl-lite/internal/crdtest"
)

// networkingObjects are Ingresses (rules, TLS with and without a secret,
// default backends, a backend whose Service has endpoints, one whose
// Service has none and one whose Service does not exist, a resource
// backend, a rule without paths), IngressClasses (the default one with
// parameters, a bare one) and NetworkPolicies (default deny both ways, an
// ingress-only one left to the server's default policy types, ingress and
// egress rules with namespace and pod selectors together, an ipBlock with
// except, named ports, port ranges, a port without a number).
const networkingObjects = `apiVersion: v1
kind: Namespace
metadata: {name: dsc-net, labels: {team: a}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: dsc-net}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
  - {name: metrics, port: 9090}
---
apiVersion: v1
kind: Service
metadata: {name: lonely, namespace: dsc-net}
spec:
  selector: {app: nothing}
  ports: [{port: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: noslice, namespace: dsc-net}
spec:
  ports: [{name: grpc, port: 9000}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc, namespace: dsc-net, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports:
- {name: http, port: 8080, protocol: TCP}
- {name: metrics, port: 9090, protocol: TCP}
endpoints:
- addresses: [10.244.1.5]
  conditions: {ready: true}
- addresses: [10.244.2.7]
- addresses: [10.244.2.9]
  conditions: {ready: false}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: lonely-x, namespace: dsc-net, labels: {kubernetes.io/service-name: lonely}}
addressType: IPv4
ports: [{port: 8080, protocol: TCP}]
endpoints: []
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: dsc-nginx
  labels: {app.kubernetes.io/component: controller}
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
spec:
  controller: k8s.io/ingress-nginx
  parameters: {apiGroup: k8s.example.com, kind: IngressParameters, name: external-lb, scope: Namespace, namespace: dsc-net}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: dsc-plain}
spec:
  controller: example.com/ingress
  parameters: {kind: ConfigMap, name: plain-params, scope: Cluster}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: dsc-bare}
spec: {controller: example.com/bare}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: site
  namespace: dsc-net
  labels: {app: site, tier: edge}
  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /, note: front door}
spec:
  ingressClassName: dsc-nginx
  defaultBackend:
    service: {name: web, port: {name: http}}
  tls:
  - hosts: [web.example, www.web.example]
    secretName: web-cert
  - hosts: [sni.example]
  - secretName: wildcard-cert
  rules:
  - host: web.example
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
      - {path: /metrics, pathType: Exact, backend: {service: {name: web, port: {name: metrics}}}}
      - {path: /empty, pathType: Prefix, backend: {service: {name: lonely, port: {number: 8080}}}}
      - {path: /wrong-port, pathType: Prefix, backend: {service: {name: web, port: {number: 81}}}}
      - {path: /rpc, pathType: Prefix, backend: {service: {name: noslice, port: {name: grpc}}}}
      - {path: /gone, pathType: ImplementationSpecific, backend: {service: {name: gone, port: {number: 81}}}}
  - host: nopaths.example
  - http:
      paths:
      - {path: /static, pathType: Prefix, backend: {resource: {apiGroup: k8s.example.com, kind: StorageBucket, name: static-assets}}}
      - {pathType: ImplementationSpecific, backend: {resource: {kind: ConfigMap, name: pages}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: catch-all, namespace: dsc-net}
spec:
  defaultBackend:
    service: {name: lonely, port: {number: 8080}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: hosts-only, namespace: dsc-net}
spec:
  ingressClassName: missing
  rules:
  - host: a.example
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny, namespace: dsc-net}
spec:
  podSelector: {}
  policyTypes: [Ingress, Egress]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-ingress, namespace: dsc-net, labels: {policy: base}, annotations: {owner: netops}}
spec:
  podSelector: {}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db, namespace: dsc-net}
spec:
  podSelector:
    matchLabels: {app: db}
    matchExpressions:
    - {key: tier, operator: In, values: [backend, cache]}
  policyTypes: [Ingress, Egress]
  ingress:
  - from:
    - namespaceSelector: {matchLabels: {team: a}}
      podSelector: {matchLabels: {role: frontend}}
    - ipBlock: {cidr: 172.17.0.0/16, except: [172.17.1.0/24, 172.17.2.0/24]}
    - namespaceSelector: {}
    - podSelector: {matchExpressions: [{key: role, operator: Exists}]}
    ports:
    - {protocol: TCP, port: 6379}
    - {port: redis}
    - {protocol: UDP, port: 32000, endPort: 32768}
  - {}
  - ports: [{port: 5432}]
  egress:
  - to:
    - ipBlock: {cidr: 10.0.0.0/8}
    ports:
    - {protocol: UDP, port: 53}
    - {protocol: TCP, port: dns-tcp}
  - to:
    - podSelector: {}
      namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kube-system}}
  - ports: [{protocol: SCTP}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: egress-only, namespace: dsc-net}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Egress]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-all-egress, namespace: dsc-net}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Egress]
  egress: [{}]
`

// calicoPolicyCRD is a custom NetworkPolicy kind in another group, as
// Calico installs one: kubectl describes its objects with the generic
// describer, not the NetworkPolicy one.
const calicoPolicyCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: networkpolicies.crd.example.org}
spec:
  group: crd.example.org
  scope: Namespaced
  names: {plural: networkpolicies, singular: networkpolicy, kind: NetworkPolicy}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`

// TestIntegrationDescribeNetworkingOracle describes Ingresses,
// IngressClasses and NetworkPolicies with kubectl-lite and the real
// kubectl v1.37 against the same objects and events: the outputs are
// identical byte for byte.
func TestIntegrationDescribeNetworkingOracle(t *testing.T) {
	oracle.Path(t, "kubectl")
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.mustRun(networkingObjects, "create", "-f", "-")
	calico := crdtest.Create(t, c.client, calicoPolicyCRD)[0]
	if _, err := c.client.Dynamic(calico).Namespace("dsc-net").Create(ctx, &client.Unstructured{Object: map[string]any{
		"apiVersion": "crd.example.org/v1", "kind": "NetworkPolicy",
		"metadata": map[string]any{"name": "db"},
		"spec":     map[string]any{"selector": "app == 'db'", "ingress": []any{map[string]any{"action": "Allow"}}},
	}}); err != nil {
		t.Fatalf("create custom network policy: %v", err)
	}

	ings, ok := api.FindResource("ingresses")
	if !ok {
		t.Fatal("no resource ingresses")
	}
	if _, err := c.client.Dynamic(ings).Namespace("dsc-net").Patch(ctx, "site", client.MergePatchType,
		[]byte(`{"status":{"loadBalancer":{"ingress":[{"ip":"192.168.5.20"},{"hostname":"lb.example"},{"ip":"192.168.5.10"},{"ip":"192.168.5.20"}]}}}`), "status"); err != nil {
		t.Fatalf("status of ingress site: %v", err)
	}

	now := time.Now().UTC()
	evs := client.Resource[api.Event](c.client)
	for i, e := range []struct {
		kind, resource, ns, name, typ, reason, msg, from string
		count                                            int32
	}{
		{"Ingress", "ingresses", "dsc-net", "site", "Normal", "Sync", "Scheduled for sync", "nginx-ingress-controller", 3},
		{"Ingress", "ingresses", "dsc-net", "catch-all", "Warning", "BackendMissing", "service \"lonely\" has no endpoints", "nginx-ingress-controller", 1},
		{"IngressClass", "ingressclasses", "", "dsc-nginx", "Normal", "Adopted", "controller took the class", "nginx-ingress-controller", 1},
		{"NetworkPolicy", "networkpolicies", "dsc-net", "db", "Normal", "Enforced", "rules synced", "netpol", 1},
	} {
		info, _ := api.FindResource(e.resource)
		u, err := c.client.Dynamic(info).Namespace(e.ns).Get(ctx, e.name)
		if err != nil {
			t.Fatalf("%s %s: %v", e.resource, e.name, err)
		}
		uid, _ := u.Object["metadata"].(map[string]any)["uid"].(string)
		first := now.Add(-time.Duration(3+i) * time.Hour)
		last := first
		if e.count > 1 {
			last = now.Add(-2 * time.Hour)
		}
		evNS := e.ns
		if evNS == "" {
			evNS = "default"
		}
		if _, err := evs.Namespace(evNS).Create(ctx, &api.Event{
			ObjectMeta:     api.ObjectMeta{Name: fmt.Sprintf("%s.%d", e.name, i)},
			InvolvedObject: api.ObjectReference{Kind: e.kind, Namespace: e.ns, Name: e.name, UID: api.UID(uid)},
			Type:           e.typ, Reason: e.reason, Message: e.msg, Count: e.count,
			Source:         api.EventSource{Component: e.from},
			FirstTimestamp: api.Time{Time: first}, LastTimestamp: api.Time{Time: last},
		}); err != nil {
			t.Fatal(err)
		}
	}

	for _, args := range []string{
		"describe ingress site",
		"describe ing catch-all",
		"describe ingresses.networking.k8s.io hosts-only",
		"describe ing site --show-events=false",
		"describe ing",
		"describe ing/site ing/nothere",
		"describe ing ca",
		"describe ingressclass dsc-nginx",
		"describe ingressclass dsc-plain",
		"describe ingressclass dsc-bare --show-events=false",
		"describe ingressclasses",
		"describe netpol default-deny",
		"describe netpol deny-ingress",
		"describe networkpolicy db",
		"describe netpol egress-only",
		"describe netpol allow-all-egress",
		"describe networkpolicies.networking.k8s.io",
		"describe netpol de",
		"describe networkpolicies.crd.example.org db",
		"get ing,ingressclass,netpol",
		"get ing -o wide --show-labels",
		"get netpol -o wide -A",
		"get ingressclasses dsc-nginx dsc-bare",
	} {
		t.Run(strings.ReplaceAll(args, " ", "-"), func(t *testing.T) {
			full := append([]string{"-n", "dsc-net"}, strings.Fields(args)...)
			want, wantErr, wantCode := c.kubectl(full...)
			got, gotErr, gotCode := c.run("", full...)
			if strings.HasPrefix(args, "get") {
				// Ages of objects made during the test.
				got, want = maskVolatile(got), maskVolatile(want)
			}
			if got != want {
				t.Errorf("kubectl-lite %s differs from kubectl:\n--- kubectl-lite\n%s\n--- kubectl\n%s", args, got, want)
			}
			if gotErr != wantErr || gotCode != wantCode {
				t.Errorf("kubectl-lite %s: exit %d, stderr %q; kubectl: exit %d, stderr %q", args, gotCode, gotErr, wantCode, wantErr)
			}
		})
	}
}

// TestIntegrationCreateIngressOracle builds Ingresses with kubectl-lite
// and the real kubectl v1.37's "create ingress": the client dry run's
// YAML and JSON for many rule forms, the errors for bad input, and the
// objects both create on the server, are the same.
func TestIntegrationCreateIngressOracle(t *testing.T) {
	oracle.Path(t, "kubectl")
	c := startCluster(t)
	ctx := context.Background()
	c.mustRun("", "create", "namespace", "ing-a")
	c.mustRun("", "create", "namespace", "ing-b")

	for _, args := range []string{
		// Exact and Prefix paths, hosts, TLS with and without a secret.
		`simple --rule=foo.com/bar=svc1:8080,tls=my-cert`,
		`catch-all --class=otheringress --rule=/path=svc:port`,
		`annotated --class=default --rule=foo.com/bar=svc:port --annotation ingress.annotation1=foo --annotation=ingress.annotation2=bla=x --annotation empty=`,
		`multipath --class=default --rule=foo.com/=svc:port --rule=foo.com/admin/=svcadmin:portadmin`,
		`ingress1 --class=default --rule=foo.com/path*=svc:8080 --rule=bar.com/admin*=svc2:http`,
		`ingtls --class=default --rule=foo.com/=svc:https,tls --rule=foo.com/path/subpath*=othersvc:8080`,
		`ingsecret --class=default --rule=foo.com/*=svc:8080,tls=secret1`,
		`ingdefault --class=default --default-backend=defaultsvc:http --rule=foo.com/*=svc:8080,tls=secret1`,
		`only-default --default-backend=web:80`,
		// TLS grouped by secret, each host once; a hostless TLS rule.
		`grouped --rule=a.com/=s:80,tls=one --rule=b.com/=s:80,tls=one --rule=c.com/=s:80,tls=two --rule=a.com/x=s:81,tls=two --rule=/=s:82,tls --rule=d.com/=s:83,tls`,
		`hostless-tls --rule=/=s:80,tls`,
		`hostless-secret --rule=/=s:80,tls=cert --rule=/other*=s:81,tls=cert`,
		// Wildcard hosts, ports 0 and negative, a rule the grammar only
		// matches at its start, several commas (no TLS).
		`wild --rule=*.foo.com/=svc:80 --rule=*.foo.com/api=svc:0`,
		`odd-ports --rule=x.com/a=svc:-5 --rule=x.com/b=svc:007`,
		`trailing --rule=foo.com/a=svc:80!!! --rule=foo.com/b=svc:80,tlsx=y --rule=foo.com/c=svc:80,tls=a,b`,
		`colons --rule=foo.com/a=b:c=svc:80`,
		`-n ing-a namespaced --rule=foo.com/=svc:80`,
	} {
		for _, out := range []string{"yaml", "json"} {
			t.Run(strings.TrimPrefix(args, "-n ing-a ")[:strings.Index(strings.TrimPrefix(args, "-n ing-a "), " ")]+"-"+out, func(t *testing.T) {
				full := append(append([]string{"create", "ingress"}, strings.Fields(args)...), "--dry-run=client", "-o", out)
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

	for _, args := range []string{
		`none`,
		`none --class=x`,
		`bad --rule=foo.com=svc:80`,
		`bad --rule=foo.com/path=svc`,
		`bad --rule=foo.com/path=svc:`,
		`bad --rule=foo.com/path=:80`,
		`bad --rule=foo_bar.com/ok=svc:80 --rule=foo.com:8080/=svc:80`,
		`bad --rule=foo.com/=svc.x:80`,
		`bad --rule=foo.com/=svc:80 --annotation=novalue`,
		`bad --rule=foo.com/=svc:80 --default-backend=svc`,
		`bad --default-backend=svc:80:90`,
		`bad --default-backend=svc:80 --annotation==x`,
		`bad --rule=foo.com/=svc:80 --dry-run=maybe`,
	} {
		t.Run("error-"+strings.ReplaceAll(args, " ", "_"), func(t *testing.T) {
			full := append([]string{"create", "ingress"}, strings.Fields(args)...)
			want, wantErr, wantCode := c.kubectl(full...)
			got, gotErr, gotCode := c.run("", full...)
			if got != want || gotErr != wantErr || gotCode != wantCode {
				t.Errorf("kubectl-lite %s: exit %d, stdout %q, stderr %q; kubectl: exit %d, stdout %q, stderr %q",
					full, gotCode, got, gotErr, wantCode, want, wantErr)
			}
		})
	}

	// Created for real: the same message, and the same object on the
	// server.
	rule := []string{"--class=default", "--rule=foo.com/*=svc:8080,tls=secret1", "--rule=bar.com/api=api:grpc", "--default-backend=web:http", "--annotation=a=b"}
	want, wantErr, wantCode := c.kubectl(append([]string{"-n", "ing-a", "create", "ingress", "made"}, rule...)...)
	got, gotErr, gotCode := c.run("", append([]string{"-n", "ing-b", "create", "ingress", "made"}, rule...)...)
	if got != want || gotErr != wantErr || gotCode != wantCode {
		t.Errorf("create ingress: kubectl-lite exit %d, %q, %q; kubectl exit %d, %q, %q", gotCode, got, gotErr, wantCode, want, wantErr)
	}
	ingresses := client.Resource[api.Ingress](c.client)
	a, err := ingresses.Namespace("ing-a").Get(ctx, "made")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ingresses.Namespace("ing-b").Get(ctx, "made")
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal([]any{a.Spec, a.Annotations})
	jb, _ := json.Marshal([]any{b.Spec, b.Annotations})
	if string(ja) != string(jb) {
		t.Errorf("created by kubectl-lite:\n%s\nby kubectl:\n%s", jb, ja)
	}
	// Once more: the server's refusal, with create ingress's words.
	want, wantErr, wantCode = c.kubectl(append([]string{"-n", "ing-a", "create", "ingress", "made"}, rule...)...)
	got, gotErr, gotCode = c.run("", append([]string{"-n", "ing-b", "create", "ingress", "made"}, rule...)...)
	if got != want || strings.ReplaceAll(gotErr, "ing-b", "ing-a") != wantErr || gotCode != wantCode {
		t.Errorf("create ingress again: kubectl-lite exit %d, %q, %q; kubectl exit %d, %q, %q", gotCode, got, gotErr, wantCode, want, wantErr)
	}
}

// canonicalJSON is s's JSON value re-encoded with sorted keys; s itself
// when it is not JSON.
func canonicalJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}
