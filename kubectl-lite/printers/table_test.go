package printers

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

var now = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)

func obj(t *testing.T, s string) Obj {
	t.Helper()
	var m Obj
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPrintTable(t *testing.T) {
	t.Parallel()
	created := `"creationTimestamp":"2026-01-02T11:55:00Z"`
	tests := []struct {
		name  string
		opts  Options
		items []string
		want  string
	}{
		{
			name: "pods",
			opts: Options{Kind: "Pod"},
			items: []string{
				`{"metadata":{"name":"web-1",` + created + `},"spec":{"containers":[{"name":"a"},{"name":"b"}]},
				  "status":{"phase":"Running","containerStatuses":[{"ready":true,"restartCount":2},{"ready":false,"restartCount":1,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}}`,
				`{"metadata":{"name":"web-2",` + created + `,"deletionTimestamp":"2026-01-02T12:00:00Z"},"spec":{"containers":[{"name":"a"}]},"status":{"phase":"Running"}}`,
				`{"metadata":{"name":"new"},"spec":{"containers":[{"name":"a"}]}}`,
			},
			want: "NAME    READY   STATUS             RESTARTS   AGE\n" +
				"web-1   1/2     CrashLoopBackOff   3          5m\n" +
				"web-2   0/1     Terminating        0          5m\n" +
				"new     0/1     Pending            0          <unknown>\n",
		},
		{
			name:  "pods wide with namespace",
			opts:  Options{Kind: "Pod", Wide: true, WithNamespace: true},
			items: []string{`{"metadata":{"name":"p","namespace":"ns1",` + created + `},"spec":{"nodeName":"n1","containers":[{}]},"status":{"phase":"Pending","podIP":"10.0.0.5"}}`},
			want: "NAMESPACE   NAME   READY   STATUS    RESTARTS   AGE   IP         NODE   NOMINATED NODE   READINESS GATES\n" +
				"ns1         p      0/1     Pending   0          5m    10.0.0.5   n1     <none>           <none>\n",
		},
		{
			name:  "deployments",
			opts:  Options{Kind: "Deployment", Group: "apps", WithKind: true},
			items: []string{`{"metadata":{"name":"web",` + created + `},"spec":{"replicas":3},"status":{"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}}`},
			want: "NAME                  READY   UP-TO-DATE   AVAILABLE   AGE\n" +
				"deployment.apps/web   2/3     3            2           5m\n",
		},
		{
			name: "nodes",
			opts: Options{Kind: "Node"},
			items: []string{
				`{"metadata":{"name":"n1","creationTimestamp":"2025-12-30T12:00:00Z","labels":{"node-role.kubernetes.io/control-plane":""}},
				  "spec":{"unschedulable":true},"status":{"conditions":[{"type":"Ready","status":"True"}],"nodeInfo":{"kubeletVersion":"v1.34.0"}}}`,
				`{"metadata":{"name":"n2",` + created + `},"status":{"conditions":[{"type":"Ready","status":"False"}]}}`,
			},
			want: "NAME   STATUS                     ROLES           AGE   VERSION\n" +
				"n1     Ready,SchedulingDisabled   control-plane   3d    v1.34.0\n" +
				"n2     NotReady                   <none>          5m    \n",
		},
		{
			name:  "services",
			opts:  Options{Kind: "Service"},
			items: []string{`{"metadata":{"name":"web",` + created + `},"spec":{"type":"NodePort","clusterIP":"10.96.0.10","ports":[{"port":80,"nodePort":30080,"protocol":"TCP"},{"port":53,"protocol":"UDP"}]}}`},
			want: "NAME   TYPE       CLUSTER-IP   EXTERNAL-IP   PORT(S)               AGE\n" +
				"web    NodePort   10.96.0.10   <none>        80:30080/TCP,53/UDP   5m\n",
		},
		{
			name:  "secrets",
			opts:  Options{Kind: "Secret"},
			items: []string{`{"metadata":{"name":"s",` + created + `},"type":"Opaque","data":{"a":"eA==","b":"eQ=="}}`},
			want:  "NAME   TYPE     DATA   AGE\ns      Opaque   2      5m\n",
		},
		{
			name:  "generic kind",
			opts:  Options{Kind: "Widget"},
			items: []string{`{"metadata":{"name":"l",` + created + `}}`},
			want:  "NAME   AGE\nl      5m\n",
		},
		{
			name:  "leases",
			opts:  Options{Kind: "Lease"},
			items: []string{`{"metadata":{"name":"n1",` + created + `},"spec":{"holderIdentity":"n1"}}`},
			want:  "NAME   HOLDER   AGE\nn1     n1       5m\n",
		},
		{
			name: "endpoints",
			opts: Options{Kind: "Endpoints"},
			items: []string{
				`{"metadata":{"name":"web",` + created + `},"subsets":[{"addresses":[{"ip":"10.0.0.1"},{"ip":"10.0.0.2"}],"ports":[{"port":80},{"port":443}]}]}`,
				`{"metadata":{"name":"none",` + created + `}}`,
			},
			want: "NAME   ENDPOINTS                                          AGE\n" +
				"web    10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more...   5m\n" +
				"none   <none>                                             5m\n",
		},
		{
			name:  "endpointslices",
			opts:  Options{Kind: "EndpointSlice"},
			items: []string{`{"metadata":{"name":"web-x",` + created + `},"addressType":"IPv4","ports":[{"port":80}],"endpoints":[{"addresses":["10.0.0.1"]},{"addresses":["10.0.0.2"]}]}`},
			want:  "NAME    ADDRESSTYPE   PORTS   ENDPOINTS           AGE\nweb-x   IPv4          80      10.0.0.1,10.0.0.2   5m\n",
		},
		{
			name: "jobs",
			opts: Options{Kind: "Job"},
			items: []string{
				`{"metadata":{"name":"done",` + created + `},"spec":{"completions":3},"status":{"succeeded":3,"startTime":"2026-01-02T11:55:00Z","completionTime":"2026-01-02T11:56:10Z","conditions":[{"type":"Complete","status":"True"}]}}`,
				`{"metadata":{"name":"run",` + created + `},"spec":{"parallelism":2},"status":{"startTime":"2026-01-02T11:58:00Z"}}`,
			},
			want: "NAME   STATUS     COMPLETIONS   DURATION   AGE\n" +
				"done   Complete   3/3           70s        5m\n" +
				"run    Running    0/1 of 2      2m         5m\n",
		},
		{
			name:  "rolebindings wide",
			opts:  Options{Kind: "RoleBinding", Wide: true},
			items: []string{`{"metadata":{"name":"rb",` + created + `},"roleRef":{"kind":"ClusterRole","name":"view"},"subjects":[{"kind":"User","name":"alice"},{"kind":"ServiceAccount","namespace":"ns","name":"sa"}]}`},
			want:  "NAME   ROLE               AGE   USERS   GROUPS   SERVICEACCOUNTS\nrb     ClusterRole/view   5m    alice            ns/sa\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var items []Obj
			for _, s := range tt.items {
				items = append(items, obj(t, s))
			}
			tt.opts.Now = now
			var out bytes.Buffer
			if err := PrintTable(&out, items, tt.opts); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
}

func TestHumanDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-2 * time.Second, "<invalid>"},
		{-500 * time.Millisecond, "0s"},
		{90 * time.Second, "90s"},
		{5*time.Minute + 3*time.Second, "5m3s"},
		{5 * time.Minute, "5m"},
		{150 * time.Minute, "150m"},
		{5*time.Hour + 30*time.Minute, "5h30m"},
		{30 * time.Hour, "30h"},
		{3*24*time.Hour + 4*time.Hour, "3d4h"},
		{100 * 24 * time.Hour, "100d"},
		{3*365*24*time.Hour + 10*24*time.Hour, "3y10d"},
		{10 * 365 * 24 * time.Hour, "10y"},
	}
	for _, tt := range tests {
		if got := HumanDuration(tt.d); got != tt.want {
			t.Errorf("HumanDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestPrintObjects(t *testing.T) {
	t.Parallel()
	o := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"key":"1"}}`)
	var out bytes.Buffer
	if err := PrintObjects(&out, "yaml", []Obj{o}, false); err != nil {
		t.Fatal(err)
	}
	if want := "apiVersion: v1\ndata:\n  key: \"1\"\nkind: ConfigMap\nmetadata:\n  name: x\n"; out.String() != want {
		t.Errorf("yaml = %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := PrintObjects(&out, "json", []Obj{o}, true); err != nil {
		t.Fatal(err)
	}
	var l map[string]any
	if err := json.Unmarshal(out.Bytes(), &l); err != nil || l["kind"] != "List" || len(l["items"].([]any)) != 1 {
		t.Errorf("json list = %s (%v)", out.String(), err)
	}
	if err := PrintObjects(&out, "xml", []Obj{o}, false); err == nil {
		t.Error("unknown format accepted")
	}
}
