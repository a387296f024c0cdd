package server

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api/apierrors"
)

// TestManagerOrUserAgent checks kube-apiserver's rule for the manager of a
// write without fieldManager: the User-Agent up to the first "/",
// printable characters only, at most 128 bytes.
func TestManagerOrUserAgent(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 100) // 200 bytes
	for _, tc := range []struct{ manager, ua, want string }{
		{"ci", "kubectl/v1.37.2 (linux/amd64) kubernetes/abcdef", "ci"},
		{"", "kubectl/v1.37.2 (linux/amd64) kubernetes/abcdef", "kubectl"},
		{"", "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/abcdef/system:serviceaccount:kube-system:deployment-controller", "kube-controller-manager"},
		{"", "Go-http-client/1.1", "Go-http-client"},
		{"", "no slash at all", "no slash at all"},
		{"", "tab\there\x00/x", "tabhere"},
		{"", long, strings.Repeat("é", 64)},
		{"", "", ""},
	} {
		if got := managerOrUserAgent(tc.manager, tc.ua); got != tc.want {
			t.Errorf("managerOrUserAgent(%q, %q) = %q, want %q", tc.manager, tc.ua, got, tc.want)
		}
	}
}

// TestParseWriteOptions checks the option errors as kube-apiserver words
// them (ValidatePatchOptions and friends).
func TestParseWriteOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, query, options string
		apply                bool
		code                 int32
		msg                  string
	}{
		{"apply without manager", "", "PatchOptions", true, 422,
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
		{"force on a merge patch", "?force=true", "PatchOptions", false, 422,
			`PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`},
		{"bad force", "?fieldManager=m&force=maybe", "PatchOptions", true, 400, `force: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{"long manager", "?fieldManager=" + strings.Repeat("m", 129), "CreateOptions", false, 422,
			`CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes`},
		{"unprintable manager", "?fieldManager=a%01", "UpdateOptions", false, 422,
			`UpdateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\x01": invalid character U+0001 (at position 1)`},
		{"bad dry run", "?dryRun=Some&fieldManager=m", "PatchOptions", true, 400, `Invalid dryRun value "Some": supported values: "All"`},
		{"apply", "?fieldManager=m&force=true&dryRun=All", "PatchOptions", true, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("PATCH", "/apis/apps/v1/namespaces/d/deployments/x"+tc.query, nil)
			o, err := parseWriteOptions(r, tc.options, tc.apply)
			if tc.code == 0 {
				if err != nil || o.FieldManager != "m" || !o.force || !o.DryRun {
					t.Fatalf("got %+v, %v", o, err)
				}
				return
			}
			se, ok := err.(*apierrors.StatusError)
			if !ok || se.ErrStatus.Code != tc.code || se.ErrStatus.Message != tc.msg {
				t.Fatalf("got %v, want %d %q", err, tc.code, tc.msg)
			}
		})
	}
}
