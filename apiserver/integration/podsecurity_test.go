package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
)

// podSecurityConfig is an --admission-control-config-file as kube's
// documentation writes it: PodSecurity's defaults for namespaces without
// labels, and its exemptions.
const podSecurityConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
      enforce-version: latest
      audit: restricted
      audit-version: latest
      warn: restricted
      warn-version: latest
    exemptions:
      usernames: ["trusted-deployer"]
      runtimeClasses: ["kata"]
      namespaces: ["exempt-ns"]
`

type psAnswer struct {
	code     int
	body     map[string]any
	warnings []string
}

func psDo(t *testing.T, hc *http.Client, method, url, body string) psAnswer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := psAnswer{code: resp.StatusCode, warnings: resp.Header.Values("Warning")}
	_ = json.Unmarshal(data, &a.body)
	if a.body == nil {
		a.body = map[string]any{"text": string(data)}
	}
	return a
}

// TestPodSecurityConfigurationFile starts the apiserver with a
// PodSecurityConfiguration in --admission-control-config-file: namespaces
// without labels get its defaults (baseline enforced, restricted warned
// and audited, the audit annotations in the audit log), and its exempt
// user, runtime class and namespace pass pods the defaults refuse, as in
// kube-apiserver. The evaluations are counted in /metrics.
func TestPodSecurityConfigurationFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "admission.yaml")
	if err := os.WriteFile(cfg, []byte(podSecurityConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "audit.log")
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) {
		o.AdmissionControlConfigFile = cfg
		o.AuditLogPath = logPath
	})
	admin := userClient(t, s, "someone", "system:masters")
	trusted := userClient(t, s, "trusted-deployer", "system:masters")
	base := s.SecureURL() + "/api/v1/namespaces"

	for _, ns := range []string{"plain"} {
		if a := psDo(t, admin, "POST", base, `{"metadata":{"name":"`+ns+`"}}`); a.code != http.StatusCreated {
			t.Fatalf("create namespace %s: %d %v", ns, a.code, a.body)
		}
	}
	// An exempt namespace that asks for a level is told it is ignored.
	a := psDo(t, admin, "POST", base, `{"metadata":{"name":"exempt-ns","labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`)
	wantWarning := `299 - "namespace \"exempt-ns\" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored"`
	if a.code != http.StatusCreated || len(a.warnings) != 1 || a.warnings[0] != wantWarning {
		t.Errorf("create exempt-ns: %d %q, want 201 %q", a.code, a.warnings, wantWarning)
	}

	const hostNet = `{"metadata":{"name":"%s"},"spec":{%s"hostNetwork":true,"containers":[{"name":"c","image":"busybox"}]}}`
	pod := func(name, extra string) string {
		return strings.Replace(strings.Replace(hostNet, "%s", name, 1), "%s", extra, 1)
	}

	a = psDo(t, admin, "POST", base+"/plain/pods", pod("host", ""))
	wantMsg := `pods "host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)`
	if a.code != http.StatusForbidden || a.body["message"] != wantMsg {
		t.Errorf("hostNetwork pod under the default level: %d %v, want 403 %q", a.code, a.body["message"], wantMsg)
	}
	// The RuntimeClass admission plugin refuses a pod naming a class
	// that does not exist (before PodSecurity sees it).
	if a := psDo(t, admin, "POST", strings.TrimSuffix(base, "/api/v1/namespaces")+"/apis/node.k8s.io/v1/runtimeclasses", `{"metadata":{"name":"kata"},"handler":"kata"}`); a.code != http.StatusCreated {
		t.Fatalf("create RuntimeClass kata: %d %v", a.code, a.body["message"])
	}
	for _, c := range []struct {
		what string
		hc   *http.Client
		url  string
		body string
	}{
		{"exempt user", trusted, base + "/plain/pods", pod("by-trusted", "")},
		{"exempt runtime class", admin, base + "/plain/pods", pod("kata", `"runtimeClassName":"kata",`)},
		{"exempt namespace", admin, base + "/exempt-ns/pods", pod("host", "")},
	} {
		if a := psDo(t, c.hc, "POST", c.url, c.body); a.code != http.StatusCreated || len(a.warnings) != 0 {
			t.Errorf("%s: %d %q %v, want 201 without warnings", c.what, a.code, a.warnings, a.body["message"])
		}
	}

	// Baseline but not restricted: admitted, warned and audited.
	a = psDo(t, admin, "POST", base+"/plain/pods", `{"metadata":{"name":"baseline"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`)
	if a.code != http.StatusCreated || len(a.warnings) != 1 || !strings.HasPrefix(a.warnings[0], `299 - "would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false`) {
		t.Errorf("baseline pod: %d %q, want 201 with the restricted warning", a.code, a.warnings)
	}
	waitFor(t, 10*time.Second, func() bool {
		f, err := os.Open(logPath)
		if err != nil {
			return false
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev struct {
				Verb           string            `json:"verb"`
				Annotations    map[string]string `json:"annotations"`
				ResponseStatus struct {
					Code int `json:"code"`
				} `json:"responseStatus"`
			}
			// The baseline pod's create is the only one admitted in
			// "plain" with an audit violation.
			if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Verb != "create" || ev.ResponseStatus.Code != http.StatusCreated ||
				!bytes.Contains(sc.Bytes(), []byte(`"requestURI":"/api/v1/namespaces/plain/pods"`)) {
				continue
			}
			if ev.Annotations["pod-security.kubernetes.io/enforce-policy"] == "baseline:latest" &&
				strings.HasPrefix(ev.Annotations["pod-security.kubernetes.io/audit-violations"], `would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false`) {
				return true
			}
		}
		return false
	})

	m := psDo(t, admin, "GET", s.SecureURL()+"/metrics", "")
	for _, want := range []string{
		`pod_security_evaluations_total{decision="deny",mode="enforce",policy_level="baseline",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1`,
		`pod_security_exemptions_total{request_operation="create",resource="pod",subresource=""} 3`,
	} {
		if !bytes.Contains([]byte(m.body["text"].(string)), []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestPodSecurityBadConfigurationFile: a PodSecurityConfiguration kube
// refuses keeps the apiserver from starting, with the reason.
func TestPodSecurityBadConfigurationFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("integration test")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "admission.yaml")
	bad := strings.Replace(podSecurityConfig, "enforce: baseline", "enforce: strict", 1)
	if err := os.WriteFile(cfg, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := apiservertest.Options(dir)
	opts.AdmissionControlConfigFile = cfg
	a := app.New(opts, nil, apiservertest.Logger())
	err := a.Start(context.Background())
	if err == nil {
		a.Stop()
		t.Fatal("the apiserver started with an invalid PodSecurity level")
	}
	if !strings.Contains(err.Error(), "--admission-control-config-file") || !strings.Contains(err.Error(), "enforce: must be one of privileged, baseline, restricted") {
		t.Errorf("start = %v, want the config file and the bad level named", err)
	}
	_ = a.Wait()
}
