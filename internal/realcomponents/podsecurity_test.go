package realcomponents

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// psaAnswer is one apiserver's answer: its code, its Status (for a
// refusal) and its Warning headers.
type psaAnswer struct {
	code     int
	status   map[string]any
	warnings []string
}

func psaSend(t *testing.T, e *endpoint, method, path, body string) psaAnswer {
	t.Helper()
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if method == "PATCH" {
		req.Header.Set("Content-Type", "application/merge-patch+json")
		if strings.HasPrefix(body, "[") {
			req.Header.Set("Content-Type", "application/json-patch+json")
		}
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		t.Fatalf("%s: %s %s: %v", e.name, method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: %s %s: %d, body: %v", e.name, method, path, resp.StatusCode, err)
	}
	a := psaAnswer{code: resp.StatusCode, warnings: resp.Header.Values("Warning")}
	if out["kind"] == "Status" {
		a.status = out
	}
	return a
}

// psaSame sends one request to both apiservers and fails unless the codes,
// the Status of a refusal and the Warning headers are identical and the
// code is want; it returns kube-apiserver's answer.
func psaSame(t *testing.T, both apiservers, want int, method, path, body string) psaAnswer {
	t.Helper()
	k := psaSend(t, both.kube, method, path, body)
	o := psaSend(t, both.ours, method, path, body)
	t.Logf("kube-apiserver %s %s: %d %v %q", method, path, k.code, k.status["message"], k.warnings)
	if k.code != want {
		t.Errorf("kube-apiserver answered %s %s with %d, the case expects %d: %v", method, path, k.code, want, k.status)
	}
	if k.code != o.code || !reflect.DeepEqual(k.status, o.status) || !reflect.DeepEqual(k.warnings, o.warnings) {
		kj, _ := json.MarshalIndent(k.status, "", "  ")
		oj, _ := json.MarshalIndent(o.status, "", "  ")
		t.Errorf("%s %s:\nkube-apiserver %d %s\nwarnings %q\nminik8s %d %s\nwarnings %q", method, path, k.code, kj, k.warnings, o.code, oj, o.warnings)
	}
	return k
}

// TestPodSecurityAsKube sends the same namespaces, pods and a Deployment to
// the real kube-apiserver v1.37 (PodSecurity is on by default there) and
// to minik8s' apiserver: pods breaking a namespace's enforce level are
// refused with the same 403 and message, warn levels give the same
// Warning headers, pod controllers are admitted with warnings, compliant
// pods pass everywhere, updates that only touch labels are not evaluated,
// tightening a namespace's level warns about the pods already in it, and
// a bad level label is refused the same way.
func TestPodSecurityAsKube(t *testing.T) {
	t.Parallel()
	both := startBoth(t)

	namespaces := map[string]string{
		"psa-restricted": `{"pod-security.kubernetes.io/enforce":"restricted"}`,
		"psa-baseline":   `{"pod-security.kubernetes.io/enforce":"baseline","pod-security.kubernetes.io/warn":"restricted","pod-security.kubernetes.io/audit":"restricted"}`,
		"psa-privileged": `{"pod-security.kubernetes.io/enforce":"privileged","pod-security.kubernetes.io/warn":"baseline","pod-security.kubernetes.io/warn-version":"v1.30"}`,
		"psa-open":       `{}`,
	}
	for _, name := range []string{"psa-restricted", "psa-baseline", "psa-privileged", "psa-open"} {
		psaSame(t, both, http.StatusCreated, "POST", "/api/v1/namespaces",
			fmt.Sprintf(`{"metadata":{"name":%q,"labels":%s}}`, name, namespaces[name]))
		for _, e := range both.each() {
			// kube's ServiceAccount admission needs the default account,
			// which no controller-manager creates here.
			if code, out := e.do(t, "POST", "/api/v1/namespaces/"+name+"/serviceaccounts", `{"metadata":{"name":"default"}}`); code != http.StatusCreated {
				t.Fatalf("%s: create the default service account: %d %v", e.name, code, out)
			}
		}
	}

	const (
		privileged = `{"metadata":{"name":"%s"},"spec":{"automountServiceAccountToken":false,"hostNetwork":true,
			"volumes":[{"name":"root","hostPath":{"path":"/"}}],
			"containers":[{"name":"c","image":"busybox","securityContext":{"capabilities":{"add":["SYS_ADMIN"]}},
				"volumeMounts":[{"name":"root","mountPath":"/host"}],"ports":[{"containerPort":80,"hostPort":80}]}]}}`
		plain = `{"metadata":{"name":"%s"},"spec":{"automountServiceAccountToken":false,"containers":[{"name":"c","image":"busybox"}],
			"initContainers":[{"name":"init","image":"busybox","securityContext":{"runAsUser":0}}]}}`
		restricted = `{"metadata":{"name":"%s"},"spec":{"automountServiceAccountToken":false,
			"securityContext":{"runAsNonRoot":true,"runAsUser":1000,"seccompProfile":{"type":"RuntimeDefault"}},
			"volumes":[{"name":"scratch","emptyDir":{}}],
			"containers":[{"name":"c","image":"busybox","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}},
				"volumeMounts":[{"name":"scratch","mountPath":"/scratch"}]}]}}`
		newFields = `{"metadata":{"name":"%s"},"spec":{"automountServiceAccountToken":false,
			"securityContext":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"},"seLinuxOptions":{"type":"spc_t"},
				"appArmorProfile":{"type":"Unconfined"}},
			"containers":[{"name":"c","image":"busybox","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},
				"procMount":"Default","seLinuxOptions":{"user":"root"},"windowsOptions":{"hostProcess":false}}}]}}`
	)
	pods := func(ns string) string { return "/api/v1/namespaces/" + ns + "/pods" }

	t.Run("enforce", func(t *testing.T) {
		psaSame(t, both, http.StatusForbidden, "POST", pods("psa-restricted"), fmt.Sprintf(privileged, "priv"))
		psaSame(t, both, http.StatusForbidden, "POST", pods("psa-restricted"), fmt.Sprintf(plain, "plain"))
		psaSame(t, both, http.StatusForbidden, "POST", pods("psa-restricted"), fmt.Sprintf(newFields, "fields"))
		psaSame(t, both, http.StatusForbidden, "POST", pods("psa-baseline"), fmt.Sprintf(privileged, "priv"))
		psaSame(t, both, http.StatusForbidden, "POST", pods("psa-restricted")+"?dryRun=All", fmt.Sprintf(privileged, "priv"))
	})
	t.Run("admit and warn", func(t *testing.T) {
		psaSame(t, both, http.StatusCreated, "POST", pods("psa-restricted"), fmt.Sprintf(restricted, "ok"))
		psaSame(t, both, http.StatusCreated, "POST", pods("psa-baseline"), fmt.Sprintf(restricted, "ok"))
		if w := psaSame(t, both, http.StatusCreated, "POST", pods("psa-baseline"), fmt.Sprintf(plain, "plain")).warnings; len(w) == 0 {
			t.Errorf("kube-apiserver gave no warning for a pod breaking the warn level")
		}
		psaSame(t, both, http.StatusCreated, "POST", pods("psa-privileged"), fmt.Sprintf(privileged, "priv"))
		psaSame(t, both, http.StatusCreated, "POST", pods("psa-open"), fmt.Sprintf(privileged, "priv"))
	})
	t.Run("pod controllers warn only", func(t *testing.T) {
		for _, ns := range []string{"psa-restricted", "psa-baseline"} {
			deploy := `{"metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},
				"template":{"metadata":{"labels":{"app":"web"}},"spec":{"hostPID":true,"containers":[{"name":"c","image":"busybox","securityContext":{"capabilities":{"add":["NET_ADMIN"]}}}]}}}}`
			w := psaSame(t, both, http.StatusCreated, "POST", "/apis/apps/v1/namespaces/"+ns+"/deployments", deploy).warnings
			if ns == "psa-baseline" && len(w) == 0 {
				t.Errorf("kube-apiserver gave no warning for a privileged Deployment in %s", ns)
			}
		}
		psaSame(t, both, http.StatusCreated, "POST", "/apis/batch/v1/namespaces/psa-baseline/cronjobs", `{"metadata":{"name":"nightly"},
			"spec":{"schedule":"0 0 * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}}`)
	})
	t.Run("updates", func(t *testing.T) {
		// Only an image is a significant change to an existing pod: a
		// label change is not evaluated (no warning), an image change is.
		if w := psaSame(t, both, http.StatusOK, "PATCH", pods("psa-baseline")+"/plain", `{"metadata":{"labels":{"touched":"yes"}}}`).warnings; len(w) != 0 {
			t.Errorf("kube-apiserver evaluated a label change: %q", w)
		}
		if w := psaSame(t, both, http.StatusOK, "PATCH", pods("psa-baseline")+"/plain", `[{"op":"replace","path":"/spec/containers/0/image","value":"busybox:2"}]`).warnings; len(w) == 0 {
			t.Errorf("kube-apiserver did not evaluate an image change")
		}
	})
	t.Run("ephemeral containers", func(t *testing.T) {
		// pods/ephemeralcontainers is evaluated like the pod itself.
		psaSame(t, both, http.StatusForbidden, "PATCH", pods("psa-baseline")+"/plain/ephemeralcontainers",
			`[{"op":"add","path":"/spec/ephemeralContainers","value":[{"name":"debug","image":"busybox","securityContext":{"capabilities":{"add":["SYS_ADMIN"]}}}]}]`)
		psaSame(t, both, http.StatusOK, "PATCH", pods("psa-baseline")+"/plain/ephemeralcontainers",
			`[{"op":"add","path":"/spec/ephemeralContainers","value":[{"name":"debug","image":"busybox"}]}]`)
	})
	t.Run("namespace labels", func(t *testing.T) {
		psaSame(t, both, http.StatusUnprocessableEntity, "POST", "/api/v1/namespaces",
			`{"metadata":{"name":"psa-bad","labels":{"pod-security.kubernetes.io/enforce":"strict"}}}`)
		psaSame(t, both, http.StatusUnprocessableEntity, "PATCH", "/api/v1/namespaces/psa-open",
			`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce-version":"v1.x"}}}`)
		// Tightening warns about the pods already there.
		w := psaSame(t, both, http.StatusOK, "PATCH", "/api/v1/namespaces/psa-privileged",
			`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`).warnings
		if len(w) == 0 {
			t.Errorf("kube-apiserver gave no warning about the existing pods")
		}
		psaSame(t, both, http.StatusOK, "PATCH", "/api/v1/namespaces/psa-privileged",
			`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline"}}}`)
	})
	t.Run("relabelled namespace enforces", func(t *testing.T) {
		// The watch caches of both servers see the new labels soon after.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, e := range both.each() {
			waitFor(ctx, t, e.name+" to enforce baseline in psa-privileged", func() (bool, string) {
				a := psaSend(t, e, "POST", pods("psa-privileged")+"?dryRun=All", fmt.Sprintf(privileged, "again"))
				return a.code == http.StatusForbidden, fmt.Sprint(a.code, a.status["message"])
			})
		}
		psaSame(t, both, http.StatusForbidden, "POST", pods("psa-privileged"), fmt.Sprintf(privileged, "again"))
	})
	t.Run("securityContext validation", func(t *testing.T) {
		// The fields PodSecurity reads are validated as kube validates
		// them (a namespace without PodSecurity labels: validation alone).
		for _, sc := range []string{
			`"securityContext":{"appArmorProfile":{"type":"Localhost"}}`,
			`"securityContext":{"appArmorProfile":{"type":"Localhost","localhostProfile":" x"}}`,
			`"securityContext":{"appArmorProfile":{"type":"RuntimeDefault","localhostProfile":"x"}}`,
			`"securityContext":{"appArmorProfile":{"type":""}}`,
			`"securityContext":{"appArmorProfile":{"type":"Strict"}}`,
			`"securityContext":{"supplementalGroupsPolicy":"Loose"}`,
			`"securityContext":{"seLinuxChangePolicy":"Sometimes"}`,
			`"securityContext":{"windowsOptions":{"gmsaCredentialSpecName":"Bad_Name","gmsaCredentialSpec":""}}`,
			`"securityContext":{"windowsOptions":{"runAsUserName":"a\\b\\c"}}`,
			`"securityContext":{"windowsOptions":{"runAsUserName":"-dom\\us:er"}}`,
			`"os":{"name":"linux"},"securityContext":{"windowsOptions":{"runAsUserName":"a"}},"containers":[{"name":"c","image":"busybox","securityContext":{"windowsOptions":{}}}]`,
			`"os":{"name":"windows"},"hostPID":true,"hostUsers":true,"securityContext":{"runAsUser":1,"seLinuxOptions":{},"sysctls":[{"name":"kernel.shm_rmid_forced","value":"1"}],"supplementalGroups":[]},
				"containers":[{"name":"c","image":"busybox","securityContext":{"capabilities":{},"procMount":"Default","readOnlyRootFilesystem":true}}]`,
			`"containers":[{"name":"c","image":"busybox","securityContext":{"procMount":"Masked"}}]`,
			`"containers":[{"name":"c","image":"busybox","securityContext":{"procMount":"Unmasked"}}]`,
			`"containers":[{"name":"c","image":"busybox","securityContext":{"appArmorProfile":{"type":"Localhost","localhostProfile":""}}}]`,
			`"containers":[{"name":"c","image":"busybox","securityContext":{"windowsOptions":{"runAsUserName":"..."}}}]`,
		} {
			spec := `"automountServiceAccountToken":false,` + sc
			if !strings.Contains(sc, `"containers"`) {
				spec += `,"containers":[{"name":"c","image":"busybox"}]`
			}
			both.sameAnswer(t, http.StatusUnprocessableEntity, "POST", pods("psa-open"), `{"metadata":{"name":"bad"},"spec":{`+spec+`}}`)
		}
		// The deprecated AppArmor annotations: a container of the pod, a
		// known form, the same profile as the field, never changed; on
		// create one is copied to a container without the field, with a
		// deprecation warning.
		const annotated = `{"metadata":{"name":"%s","annotations":{%s}},
			"spec":{"automountServiceAccountToken":false,"securityContext":{"appArmorProfile":{"type":"Localhost","localhostProfile":"mine"}},
			"containers":[{"name":"c","image":"busybox"%s}]}}`
		both.sameAnswer(t, http.StatusUnprocessableEntity, "POST", pods("psa-open"), fmt.Sprintf(annotated, "bad",
			`"container.apparmor.security.beta.kubernetes.io/nope":"runtime/default","container.apparmor.security.beta.kubernetes.io/c":"docker-default"`, ""))
		both.sameAnswer(t, http.StatusUnprocessableEntity, "POST", pods("psa-open"), fmt.Sprintf(annotated, "bad",
			`"container.apparmor.security.beta.kubernetes.io/c":"unconfined"`, `,"securityContext":{"appArmorProfile":{"type":"RuntimeDefault"}}`))
		both.sameAnswer(t, http.StatusUnprocessableEntity, "POST", pods("psa-open"), fmt.Sprintf(annotated, "bad",
			`"container.apparmor.security.beta.kubernetes.io/c":"localhost/other"`, `,"securityContext":{"appArmorProfile":{"type":"Localhost","localhostProfile":"mine"}}`))
		// An empty localhost profile is not copied, and then does not
		// match the pod's profile.
		psaSame(t, both, http.StatusUnprocessableEntity, "POST", pods("psa-open"), fmt.Sprintf(annotated, "aa-empty",
			`"container.apparmor.security.beta.kubernetes.io/c":"localhost/"`, ""))
		for name, value := range map[string]string{"aa-unconfined": "unconfined", "aa-other": "localhost/other", "aa-same": "localhost/mine"} {
			psaSame(t, both, http.StatusCreated, "POST", pods("psa-open"), fmt.Sprintf(annotated, name,
				`"container.apparmor.security.beta.kubernetes.io/c":"`+value+`"`, ""))
			for _, e := range both.each() {
				got := e.must(t, http.StatusOK, "GET", pods("psa-open")+"/"+name, "")
				sc, _ := json.Marshal(got["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["securityContext"])
				t.Logf("%s %s: container securityContext %s", e.name, name, sc)
			}
		}
		both.sameAnswer(t, http.StatusUnprocessableEntity, "POST", "/apis/apps/v1/namespaces/psa-open/deployments", `{"metadata":{"name":"bad"},
			"spec":{"selector":{"matchLabels":{"app":"bad"}},"template":{"metadata":{"labels":{"app":"bad"},
			"annotations":{"container.apparmor.security.beta.kubernetes.io/c":"runtime/default"}},
			"spec":{"containers":[{"name":"c","image":"busybox","securityContext":{"appArmorProfile":{"type":"Unconfined"}}}]}}}}`)
		psaSame(t, both, http.StatusCreated, "POST", pods("psa-open"), `{"metadata":{"name":"userns"},"spec":{"automountServiceAccountToken":false,"hostUsers":false,
			"securityContext":{"supplementalGroupsPolicy":"Strict","seLinuxChangePolicy":"MountOption","appArmorProfile":{"type":"Localhost","localhostProfile":"p"}},
			"containers":[{"name":"c","image":"busybox","securityContext":{"procMount":"Unmasked","seLinuxOptions":{"level":"s0:c1"}}}]}}`)
		both.sameAnswer(t, http.StatusUnprocessableEntity, "PATCH", pods("psa-open")+"/userns",
			`{"metadata":{"annotations":{"container.apparmor.security.beta.kubernetes.io/c":"localhost/p"}}}`)
	})
}
