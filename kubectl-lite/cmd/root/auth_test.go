package root_test

import (
	"strings"
	"testing"
)

// TestIntegrationAuth runs auth whoami and auth can-i (with --list, --as,
// --as-group) against a secured apiserver, whose admin is in system:masters
// and may impersonate anyone.
func TestIntegrationAuth(t *testing.T) {
	c := startTLSCluster(t)

	if out := c.mustRun("", "auth", "whoami"); out != "ATTRIBUTE   VALUE\nUsername    kubernetes-admin\nGroups      [system:masters system:authenticated]\n" {
		t.Errorf("auth whoami =\n%s", out)
	}
	if out := c.mustRun("", "auth", "whoami", "--as", "bob", "--as-group", "qa", "--as-group", "dev"); out != "ATTRIBUTE   VALUE\nUsername    bob\nGroups      [qa dev system:authenticated]\n" {
		t.Errorf("auth whoami --as bob =\n%s", out)
	}
	if out := c.mustRun("", "auth", "whoami", "-o", "json"); !strings.Contains(out, `"kind": "SelfSubjectReview"`) || !strings.Contains(out, `"username": "kubernetes-admin"`) {
		t.Errorf("auth whoami -o json =\n%s", out)
	}

	cases := []struct {
		args     []string
		out      string
		code     int
		warnings string
	}{
		{[]string{"list", "pods"}, "yes\n", 0, ""},
		{[]string{"delete", "nodes/n1", "-A"}, "yes\n", 0, ""},
		{[]string{"list", "pods", "--as", "bob"}, "no\n", 1, ""},
		{[]string{"list", "pods", "--as", "bob", "-q"}, "", 1, ""},
		{[]string{"create", "selfsubjectaccessreviews", "--as", "bob"}, "yes\n", 0, "Warning: resource 'selfsubjectaccessreviews' is not namespace scoped in group 'authorization.k8s.io'\n"},
		{[]string{"get", "/healthz", "--as", "bob"}, "yes\n", 0, ""},
		{[]string{"impersonate", "users", "--as", "bob"}, "no\n", 1, ""},
		{[]string{"list", "widgets", "--as", "bob"}, "no\n", 1, "Warning: the server doesn't have a resource type 'widgets'\n"},
		{[]string{"fly", "pods"}, "yes\n", 0, "Warning: verb 'fly' is not a known verb\n"},
	}
	for _, tc := range cases {
		out, errOut, code := c.run("", append([]string{"auth", "can-i"}, tc.args...)...)
		if out != tc.out || code != tc.code || errOut != tc.warnings {
			t.Errorf("auth can-i %v = %q %q exit %d, want %q %q exit %d", tc.args, out, errOut, code, tc.out, tc.warnings, tc.code)
		}
	}

	out := c.mustRun("", "auth", "can-i", "--list", "--as", "bob")
	for _, row := range []string{
		"Resources                                       Non-Resource URLs   Resource Names   Verbs\n",
		"selfsubjectaccessreviews.authorization.k8s.io   []                  []               [create]\n",
		"selfsubjectreviews.authentication.k8s.io        []                  []               [create]\n",
		"                                                [/healthz]          []               [get]\n",
	} {
		if !strings.Contains(out, row) {
			t.Errorf("auth can-i --list --as bob lacks %q:\n%s", row, out)
		}
	}
	if strings.Contains(out, "pods") {
		t.Errorf("bob may do something to pods:\n%s", out)
	}
	out = c.mustRun("", "auth", "can-i", "--list", "--no-headers")
	// system:masters and cluster-admin both allow everything (both listed,
	// as kubectl lists what each source grants), sorted first.
	if first, _, _ := strings.Cut(out, "\n"); !strings.HasPrefix(first, "*.* ") || !strings.HasSuffix(first, "[* *]") {
		t.Errorf("the admin's rules lack everything:\n%s", out)
	}
	c.wantFail("error: list option must be specified with no arguments", "auth", "can-i", "--list", "get", "pods")
	c.wantFail("error: requesting uid, groups or user-extra without impersonating a user", "auth", "whoami", "--as-group", "qa")
}
