package root_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/client"
)

// fields normalises table output: each line's columns joined by one space.
func fields(out string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	return lines
}

// TestIntegrationGetFlags covers get's less common flags: -L, --show-kind,
// --ignore-not-found, -f, and a name with -A.
func TestIntegrationGetFlags(t *testing.T) {
	c := startCluster(t)
	cms := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {app: web, example.com/tier: front}}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, labels: {app: db}}\n"
	c.mustRun(cms, "apply", "-f", "-")

	out := c.mustRun("", "get", "cm", "a", "b", "-L", "app", "-L", "example.com/tier", "--show-kind")
	got := fields(out)
	if len(got) != 3 || got[0] != "NAME DATA AGE APP TIER" || !strings.HasPrefix(got[1], "configmap/a 0 ") || !strings.HasSuffix(got[1], " web front") ||
		!strings.HasPrefix(got[2], "configmap/b 0 ") || !strings.HasSuffix(got[2], " db") {
		t.Errorf("get -L --show-kind = %q", out)
	}

	// --ignore-not-found drops missing names and says nothing.
	out, errOut, code := c.run("", "get", "cm", "a", "missing", "--ignore-not-found", "-o", "name")
	if code != 0 || out != "configmap/a\n" || errOut != "" {
		t.Errorf("get --ignore-not-found: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if out, errOut, code := c.run("", "get", "cm", "missing", "--ignore-not-found"); code != 0 || out != "" || errOut != "" {
		t.Errorf("get --ignore-not-found of nothing: exit %d stdout %q stderr %q", code, out, errOut)
	}
	c.wantFail(`Error from server (NotFound): configmaps "missing" not found`, "get", "cm", "a", "missing", "-o", "name")
	// Every missing name is reported, the found ones printed.
	out, errOut, code = c.run("", "get", "cm", "gone1", "a", "gone2", "-o", "name")
	if code != 1 || out != "configmap/a\n" ||
		errOut != "Error from server (NotFound): configmaps \"gone1\" not found\nError from server (NotFound): configmaps \"gone2\" not found\n" {
		t.Errorf("get with two missing names: exit %d stdout %q stderr %q", code, out, errOut)
	}

	// -f gets the objects a manifest names.
	file := filepath.Join(t.TempDir(), "cms.yaml")
	if err := os.WriteFile(file, []byte(cms), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := c.mustRun("", "get", "-f", file, "-o", "name"); out != "configmap/a\nconfigmap/b\n" {
		t.Errorf("get -f = %q", out)
	}
	c.wantFail("error: a resource cannot be retrieved by name across all namespaces", "get", "cm", "a", "-A")

	// --raw prints the server's body for a path, with its query.
	var l struct {
		Kind  string
		Items []struct{ Metadata struct{ Name string } }
	}
	if err := json.Unmarshal([]byte(c.mustRun("", "get", "--raw", "/api/v1/namespaces/default/configmaps?labelSelector=app%3Ddb")), &l); err != nil {
		t.Fatal(err)
	}
	if l.Kind != "ConfigMapList" || len(l.Items) != 1 || l.Items[0].Metadata.Name != "b" {
		t.Errorf("get --raw = %+v", l)
	}
	c.wantFail(`Error from server (NotFound): configmaps "zz" not found`, "get", "--raw", "/api/v1/namespaces/default/configmaps/zz")
}

// TestIntegrationDiscoveryVersion checks api-resources reads the server's
// discovery (subresources left out) and version -o json's document.
func TestIntegrationDiscoveryVersion(t *testing.T) {
	c := startCluster(t)
	out := c.mustRun("", "api-resources")
	lines := fields(out)
	if lines[0] != "NAME SHORTNAMES APIVERSION NAMESPACED KIND" || lines[1] != "bindings v1 true Binding" {
		t.Errorf("api-resources starts %q", lines[:2])
	}
	var deploy, scale bool
	for _, l := range lines {
		deploy = deploy || l == "deployments deploy apps/v1 true Deployment"
		scale = scale || strings.Contains(l, "/scale")
	}
	if !deploy || scale {
		t.Errorf("api-resources: deployments row %v, a subresource row %v:\n%s", deploy, scale, out)
	}
	out = c.mustRun("", "api-resources", "--namespaced=false", "--api-group=", "-o", "name")
	if out != "componentstatuses\nnamespaces\nnodes\npersistentvolumes\n" {
		t.Errorf("api-resources --namespaced=false --api-group= -o name = %q", out)
	}

	var v struct {
		ClientVersion, ServerVersion *struct {
			GitVersion string `json:"gitVersion"`
			Platform   string `json:"platform"`
		}
	}
	if err := json.Unmarshal([]byte(c.mustRun("", "version", "-o", "json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.ClientVersion == nil || v.ServerVersion == nil || v.ServerVersion.GitVersion == "" || v.ClientVersion.Platform == "" {
		t.Errorf("version -o json = %+v", v)
	}
	if out := c.mustRun("", "version", "--client", "-o", "yaml"); !strings.HasPrefix(out, "clientVersion:\n") || strings.Contains(out, "serverVersion") {
		t.Errorf("version --client -o yaml = %q", out)
	}
}

// TestIntegrationEvents covers "events": oldest first, --for, --types, and
// -w printing a new event.
func TestIntegrationEvents(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	evs := client.Resource[api.Event](c.client).Namespace("default")
	now := time.Now()
	mk := func(name, kind, obj, typ, reason string, ago time.Duration) {
		t.Helper()
		ts := api.Time{Time: now.Add(-ago)}
		if _, err := evs.Create(ctx, &api.Event{ObjectMeta: api.ObjectMeta{Name: name},
			InvolvedObject: api.ObjectReference{Kind: kind, Namespace: "default", Name: obj},
			Type:           typ, Reason: reason, Message: reason + " happened", Count: 1,
			FirstTimestamp: ts, LastTimestamp: ts}); err != nil {
			t.Fatal(err)
		}
	}
	mk("e1", "Pod", "web-1", "Warning", "BackOff", time.Minute)
	mk("e2", "Deployment", "web", "Normal", "ScalingReplicaSet", 3*time.Minute)
	mk("e3", "Pod", "web-1", "Normal", "Pulled", 2*time.Minute)

	// The LAST SEEN cell depends on the clock: compare the other cells.
	noAge := func(lines []string) string {
		var out []string
		for _, l := range lines[1:] {
			f := strings.Fields(l)
			out = append(out, strings.Join(f[1:], " "))
		}
		return strings.Join(out, "\n")
	}
	got := fields(c.mustRun("", "events"))
	want := "Normal ScalingReplicaSet Deployment/web ScalingReplicaSet happened\n" +
		"Normal Pulled Pod/web-1 Pulled happened\n" +
		"Warning BackOff Pod/web-1 BackOff happened"
	if got[0] != "LAST SEEN TYPE REASON OBJECT MESSAGE" || noAge(got) != want || !strings.HasPrefix(got[1], "3m") {
		t.Errorf("events:\n%s\nwant, after the header and without ages:\n%s", strings.Join(got, "\n"), want)
	}
	if got := fields(c.mustRun("", "events", "--for", "pod/web-1", "--types=Warning")); len(got) != 2 || noAge(got) != "Warning BackOff Pod/web-1 BackOff happened" {
		t.Errorf("events --for pod/web-1 --types=Warning: %q", got)
	}
	if got := fields(c.mustRun("", "events", "-A", "--for", "deploy/web")); len(got) != 2 || !strings.HasPrefix(got[0], "NAMESPACE LAST SEEN") || !strings.HasPrefix(got[1], "default 3m") {
		t.Errorf("events -A --for deploy/web: %q", got)
	}
	w := c.start("events", "-w", "--types=Warning")
	w.waitLine(0, "the listed warning", func(l string) bool { return strings.Contains(l, "BackOff happened") })
	mk("e4", "Pod", "web-2", "Normal", "Started", 0)
	mk("e5", "Pod", "web-2", "Warning", "Unhealthy", 0)
	w.waitLine(1, "the new warning", func(l string) bool {
		return strings.Contains(l, "Pod/web-2") && strings.Contains(l, "Unhealthy happened")
	})
	for _, l := range w.output() {
		if strings.Contains(l, "Started") {
			t.Errorf("events -w --types=Warning printed a Normal event: %q", l)
		}
	}
	c.wantFail("error: valid --types are Normal or Warning", "events", "--types=Error")
}
