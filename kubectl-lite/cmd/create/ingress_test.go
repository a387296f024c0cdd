package create

import (
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"
)

// groupedIngress is what kubectl v1.37 prints for
//
//	kubectl create ingress grouped --rule=a.com/=s:80,tls=one \
//	  --rule=b.com/=s:80,tls=one --rule=c.com/=s:80,tls=two \
//	  --rule=a.com/x=s:81,tls=two --rule=/=s:82,tls --rule=d.com/=s:83,tls \
//	  --rule='x.com/p*=s:-5' --rule=x.com/q=s:80,tls=a,b \
//	  --rule=y.com/a=b:c=svc:80 --default-backend=web:http --class=c1 \
//	  --annotation=k=v=w --dry-run=client -o yaml
const groupedIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  annotations:
    k: v=w
  name: grouped
spec:
  defaultBackend:
    service:
      name: web
      port:
        name: http
  ingressClassName: c1
  rules:
  - host: a.com
    http:
      paths:
      - backend:
          service:
            name: s
            port:
              number: 80
        path: /
        pathType: Exact
      - backend:
          service:
            name: s
            port:
              number: 81
        path: /x
        pathType: Exact
  - host: b.com
    http:
      paths:
      - backend:
          service:
            name: s
            port:
              number: 80
        path: /
        pathType: Exact
  - host: c.com
    http:
      paths:
      - backend:
          service:
            name: s
            port:
              number: 80
        path: /
        pathType: Exact
  - http:
      paths:
      - backend:
          service:
            name: s
            port:
              number: 82
        path: /
        pathType: Exact
  - host: d.com
    http:
      paths:
      - backend:
          service:
            name: s
            port:
              number: 83
        path: /
        pathType: Exact
  - host: x.com
    http:
      paths:
      - backend:
          service:
            name: s
            port:
              number: -5
        path: /p
        pathType: Prefix
      - backend:
          service:
            name: s
            port:
              number: 80
        path: /q
        pathType: Exact
  - host: y.com
    http:
      paths:
      - backend:
          service:
            name: b
            port:
              name: c
        path: /a
        pathType: Exact
  tls:
  - hosts:
    - a.com
    - b.com
    secretName: one
  - hosts:
    - c.com
    secretName: two
  - hosts:
    - d.com
status:
  loadBalancer: {}
`

// TestBuildIngress builds the Ingress of groupedIngress's flags (TLS
// grouped by secret with each host once, a hostless rule, a Prefix path,
// odd ports, a rule with two commas, a backend cut at its '=') and
// compares it with kubectl's.
func TestBuildIngress(t *testing.T) {
	rules := []string{"a.com/=s:80,tls=one", "b.com/=s:80,tls=one", "c.com/=s:80,tls=two", "a.com/x=s:81,tls=two",
		"/=s:82,tls", "d.com/=s:83,tls", "x.com/p*=s:-5", "x.com/q=s:80,tls=a,b", "y.com/a=b:c=svc:80"}
	annotations := []string{"k=v=w"}
	if err := validateIngressFlags(rules, annotations, "web:http"); err != nil {
		t.Fatal(err)
	}
	got, err := buildIngress("grouped", "c1", rules, "web:http", annotations)
	if err != nil {
		t.Fatal(err)
	}
	gotJSON, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := yaml.Unmarshal([]byte(groupedIngress), &want); err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("built\n%s\nkubectl builds\n%s", gotJSON, wantJSON)
	}
}

// TestValidateIngressFlags checks kubectl's refusals, first one first.
func TestValidateIngressFlags(t *testing.T) {
	for _, tc := range []struct {
		rules, annotations []string
		backend, want      string
	}{
		{nil, nil, "", "not enough information provided: every ingress has to either specify a default-backend (which catches all traffic) or a list of rules (which catch specific paths)"},
		{[]string{"foo.com=svc:80"}, nil, "", "rule foo.com=svc:80 is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]"},
		{[]string{"foo.com/p=svc"}, []string{"x"}, "", "rule foo.com/p=svc is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]"},
		{[]string{"foo.com:80/p=svc:80"}, nil, "", "rule foo.com:80/p=svc:80 is invalid and should be in format host/path=svcname:svcport[,tls[=secret]]"},
		{[]string{"foo.com/p=svc:80!"}, []string{"x"}, "a", "annotation x is invalid and should be in format key=[value]"},
		{nil, []string{"x="}, "a:b:c", "default-backend should be in format servicename:serviceport"},
		{[]string{"*.foo_1.com/=svc-1:http-2,tls"}, []string{"=x"}, "a:b", ""},
	} {
		err := validateIngressFlags(tc.rules, tc.annotations, tc.backend)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("rules %q annotations %q backend %q: %q, want %q", tc.rules, tc.annotations, tc.backend, got, tc.want)
		}
	}
}
