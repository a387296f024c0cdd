package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/internal/oracle"
)

// The real kubectl applies a ValidatingWebhookConfiguration (its default
// validation finds the kind in /openapi), prints the webhook's refusal
// and warning as it does against kube-apiserver, and lists the
// configuration as a table.
func TestAdmissionWebhookWithKubectl(t *testing.T) {
	kubectl := oracle.Path(t, "kubectl")
	s := apiservertest.Start(t, apiservertest.WithTLS)
	hook := startTestWebhook(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", s.Options.WriteKubeconfig}, args...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: guarded
  labels:
    scenario: guarded
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: deny
webhooks:
- name: deny.example.com
  clientConfig:
    url: %s/deny
    caBundle: %s
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  namespaceSelector:
    matchLabels:
      scenario: guarded
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: 5
`, hook.srv.URL, base64.StdEncoding.EncodeToString(hook.ca.pem))
	file := filepath.Join(t.TempDir(), "webhook.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run("apply", "-f", file)
	if err != nil {
		t.Fatalf("kubectl apply: %v\n%s%s", err, out, errOut)
	}
	if want := "namespace/guarded created\nvalidatingwebhookconfiguration.admissionregistration.k8s.io/deny created\n"; out != want {
		t.Errorf("kubectl apply said %q, want %q", out, want)
	}
	st := s.Store("admissionregistration.k8s.io", "validatingwebhookconfigurations")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, ok := st.Cacher().Get(st.Key("", "deny")); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the configuration did not reach the watch cache")
		}
	}

	out, errOut, err = run("create", "configmap", "refused", "-n", "guarded", "--from-literal=a=b")
	if err == nil {
		t.Fatalf("kubectl create in the guarded namespace succeeded: %s", out)
	}
	want := "Warning: denied by the test\nerror: failed to create configmap: admission webhook \"deny.example.com\" denied the request: no thanks\n"
	if errOut != want {
		t.Errorf("kubectl create said\n%q\nwant\n%q", errOut, want)
	}
	if _, errOut, err = run("create", "configmap", "allowed", "-n", "default", "--from-literal=a=b"); err != nil {
		t.Errorf("kubectl create outside the selected namespace: %v: %s", err, errOut)
	}

	out, errOut, err = run("get", "validatingwebhookconfigurations")
	if err != nil {
		t.Fatalf("kubectl get: %v: %s", err, errOut)
	}
	if !regexp.MustCompile(`^NAME\s+WEBHOOKS\s+AGE\ndeny\s+1\s+\d+s\n$`).MatchString(out) {
		t.Errorf("kubectl get validatingwebhookconfigurations =\n%s", out)
	}
	if strings.Contains(errOut, "error") {
		t.Errorf("kubectl get stderr: %s", errOut)
	}
}
