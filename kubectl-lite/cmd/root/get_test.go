package root_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if lines[0] != "NAME SHORTNAMES APIVERSION NAMESPACED KIND" || lines[1] != "configmaps cm v1 true ConfigMap" {
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
	if out != "namespaces\nnodes\n" {
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
