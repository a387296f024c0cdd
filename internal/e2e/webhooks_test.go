package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/pki"
)

// The webhook server's names (internal/e2e/webhook).
const (
	hookService   = "webhook"
	hookMutate    = "add-label.e2e.minik8s.io"
	hookValidate  = "deny-unwanted.e2e.minik8s.io"
	hookHang      = "hang.e2e.minik8s.io"
	hookDenied    = "the configmap contains unwanted key and value"
	hookTimeout   = 5 // timeoutSeconds of the mutating and validating webhooks
	hangTimeout   = 2 // timeoutSeconds of the webhook that does not answer
	mutatedLabel  = "e2e.minik8s.io/mutated"
	scenarioLabel = "e2e.minik8s.io/scenario"
)

// webhookServerManifest is the server's Secret (the certificate the test
// makes), Deployment and Service; %s are the certificate and key in base64.
const webhookServerManifest = `apiVersion: v1
kind: Secret
metadata:
  name: webhook-tls
  namespace: ` + xNS + `
type: kubernetes.io/tls
data:
  tls.crt: %s
  tls.key: %s
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: webhook
  namespace: ` + xNS + `
spec:
  replicas: 1
  selector:
    matchLabels:
      app: webhook
  template:
    metadata:
      labels:
        app: webhook
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: webhook
        image: minik8s/e2e-webhook:latest
        imagePullPolicy: Never
        args: ["--port=8443"]
        ports:
        - name: https
          containerPort: 8443
        readinessProbe:
          httpGet:
            path: /healthz
            port: https
            scheme: HTTPS
          periodSeconds: 1
        volumeMounts:
        - name: certs
          mountPath: /etc/webhook/certs
          readOnly: true
      volumes:
      - name: certs
        secret:
          secretName: webhook-tls
---
apiVersion: v1
kind: Service
metadata:
  name: ` + hookService + `
  namespace: ` + xNS + `
spec:
  selector:
    app: webhook
  ports:
  - name: https
    port: 443
    targetPort: https
`

// webhookConfig is one webhook configuration of the scenario: kind, name,
// webhook name, path, timeoutSeconds, caBundle, and extra webhook fields.
func webhookConfig(kind, name, hook, path string, timeout int, caBundle []byte, extra string) string {
	return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: %s
metadata:
  name: %s
  labels:
    %s: %s
webhooks:
- name: %s
  clientConfig:
    service:
      namespace: %s
      name: %s
      path: %s
      port: 443
    caBundle: %s
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  namespaceSelector:
    matchLabels:
      e2e.minik8s.io/webhooks: enabled
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: %d
%s`, kind, name, scenarioLabel, xNS, hook, xNS, hookService, path, base64.StdEncoding.EncodeToString(caBundle), timeout, extra)
}

// configMap is a ConfigMap manifest of the scenario with one data entry
// and optional labels ("k: v" lines).
func configMap(name, key, value string, labels ...string) string {
	m := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: " + xNS + "\n"
	if len(labels) > 0 {
		m += "  labels:\n"
		for _, l := range labels {
			m += "    " + l + "\n"
		}
	}
	return m + "data:\n  " + key + ": " + value + "\n"
}

func (x *extend) webhooks(t *testing.T, ctx context.Context) {
	start := time.Now()
	if err := x.c.TestImage(ctx, "./internal/e2e/webhook", "e2e-webhook"); err != nil {
		t.Fatal(err)
	}
	t.Logf("webhook server image built and loaded in %.1fs", time.Since(start).Seconds())

	// A CA of the test's own; the serving certificate names the Service.
	ca, err := pki.NewCA("e2e-webhook-ca", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dns := hookService + "." + xNS + ".svc"
	certPEM, keyPEM, err := ca.IssueServing(dns, []string{dns, dns + ".cluster.local"}, nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	out := x.apply(t, ctx, x.kubectl, fmt.Sprintf(webhookServerManifest, b64(certPEM), b64(keyPEM)))
	for _, want := range []string{"secret/webhook-tls created", "deployment.apps/webhook created", "service/webhook created"} {
		if !strings.Contains(out, want) {
			t.Fatalf("kubectl apply printed %q, want %q", out, want)
		}
	}
	x.must(t, ctx, x.lite(), "rollout", "status", "deployment/webhook", "-n", xNS, "--timeout=90s")
	// The server is on the pod network, not the node's: the apiserver
	// reaches it at its pod IP.
	var pods api.List[api.Pod]
	if err := x.get(ctx, &pods, "get", "pods", "-l", "app=webhook"); err != nil {
		t.Fatal(err)
	}
	_, podNet, _ := net.ParseCIDR("10.244.0.0/16")
	if len(pods.Items) != 1 || !podNet.Contains(net.ParseIP(pods.Items[0].Status.PodIP)) {
		t.Fatalf("webhook pods %+v, want one on the pod network 10.244.0.0/16", pods.Items)
	}
	t.Logf("webhook server pod %s at %s on %s", pods.Items[0].Name, pods.Items[0].Status.PodIP, pods.Items[0].Spec.NodeName)

	configs := webhookConfig("MutatingWebhookConfiguration", xNS+"-mutate", hookMutate, "/mutate", hookTimeout, ca.CertPEM(), "  reinvocationPolicy: Never\n") +
		"---\n" + webhookConfig("ValidatingWebhookConfiguration", xNS+"-validate", hookValidate, "/validate", hookTimeout, ca.CertPEM(), "")
	out = x.apply(t, ctx, x.lite(), configs)
	if !strings.Contains(out, "mutatingwebhookconfiguration.admissionregistration.k8s.io/"+xNS+"-mutate created") ||
		!strings.Contains(out, "validatingwebhookconfiguration.admissionregistration.k8s.io/"+xNS+"-validate created") {
		t.Fatalf("kubectl-lite apply printed %q", out)
	}
	// The configurations apply once the apiserver has seen them: until a
	// refused ConfigMap is refused (kube's e2e waits the same way).
	within(t, ctx, 30*time.Second, "the validating webhook refuses", func(ctx context.Context) (bool, string, error) {
		out, err := x.c.RunInput(ctx, []byte(configMap("readiness-marker", "e2e-webhook", "disallow")), x.lite(), "--kubeconfig", x.c.Kubeconfig, "create", "-f", "-")
		if err == nil {
			_, _ = x.c.Kubectl(ctx, "delete", "configmap", "readiness-marker", "-n", xNS)
			return false, "admitted: " + out, nil
		}
		return strings.Contains(err.Error(), hookDenied), err.Error(), nil
	})

	// Mutated: the label is added, with either client.
	for i, bin := range []string{x.lite(), x.kubectl} {
		name := fmt.Sprintf("plain-%d", i)
		x.must(t, ctx, bin, "create", "configmap", name, "-n", xNS, "--from-literal=greeting=hello")
		var cm api.ConfigMap
		if err := x.get(ctx, &cm, "get", "configmap", name); err != nil {
			t.Fatal(err)
		}
		if cm.Labels[mutatedLabel] != "true" || cm.Data["greeting"] != "hello" {
			t.Errorf("%s create configmap %s: labels %v data %v, want %s=true added by the webhook", filepath.Base(bin), name, cm.Labels, cm.Data, mutatedLabel)
		}
	}
	// Refused, with kube's message in each client's words.
	denied := fmt.Sprintf("admission webhook %q denied the request: %s", hookValidate, hookDenied)
	for _, tc := range []struct {
		bin  string
		args []string
		want string
	}{
		{x.lite(), []string{"create", "configmap", "bad", "--from-literal=e2e-webhook=disallow"}, "error: failed to create configmap: " + denied},
		{x.kubectl, []string{"create", "configmap", "bad", "--from-literal=e2e-webhook=disallow"}, "error: failed to create configmap: " + denied},
		{x.lite(), []string{"apply", "-f", "-"}, `Error from server (Forbidden): error when creating "STDIN": ` + denied},
		{x.kubectl, []string{"apply", "-f", "-"}, `Error from server (Forbidden): error when creating "STDIN": ` + denied},
	} {
		out, err := x.c.RunInput(ctx, []byte(configMap("bad", "e2e-webhook", "disallow")), tc.bin, append([]string{"--kubeconfig", x.c.Kubeconfig, "-n", xNS}, tc.args...)...)
		if err == nil {
			t.Errorf("%s %s: admitted (%s), want refused", filepath.Base(tc.bin), strings.Join(tc.args, " "), out)
			continue
		}
		if msg := strings.TrimSpace(err.(*CommandError).Stderr); msg != tc.want {
			t.Errorf("%s %s said\n%s\nwant\n%s", filepath.Base(tc.bin), strings.Join(tc.args, " "), msg, tc.want)
		}
	}
	logs := x.must(t, ctx, x.lite(), "logs", "deployment/webhook", "-n", xNS)
	for _, want := range []string{"path=/mutate", "path=/validate", "allowed=false", "namespace=" + xNS} {
		if !strings.Contains(logs, want) {
			t.Errorf("the webhook server's log lacks %q:\n%s", want, logs)
		}
	}

	// A webhook that does not answer is given up after its timeoutSeconds:
	// refused with Fail, admitted with Ignore.
	hang := webhookConfig("ValidatingWebhookConfiguration", xNS+"-hang", hookHang, "/hang", hangTimeout, ca.CertPEM(),
		"  objectSelector:\n    matchLabels:\n      e2e.minik8s.io/hang: \"true\"\n")
	x.apply(t, ctx, x.lite(), hang)
	x.timed(t, ctx, "hang-fail", hangTimeout, fmt.Sprintf(`Internal error occurred: failed calling webhook %q: failed to call webhook: Post "https://%s:443/hang?timeout=%ds": context deadline exceeded`, hookHang, dns, hangTimeout), "e2e.minik8s.io/hang: \"true\"")
	x.must(t, ctx, x.kubectl, "patch", "validatingwebhookconfiguration", xNS+"-hang", "--type=json", "-p", `[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]`)
	x.timed(t, ctx, "hang-ignore", hangTimeout, "", "e2e.minik8s.io/hang: \"true\"")
	x.must(t, ctx, x.lite(), "delete", "validatingwebhookconfiguration", xNS+"-hang")

	// The server goes away: Fail refuses at once, naming the Service.
	x.must(t, ctx, x.lite(), "scale", "deployment/webhook", "-n", xNS, "--replicas=0")
	within(t, ctx, time.Minute, "no webhook pod and no ready endpoint", func(ctx context.Context) (bool, string, error) {
		var pods api.List[api.Pod]
		if err := x.get(ctx, &pods, "get", "pods", "-l", "app=webhook"); err != nil {
			return false, "", err
		}
		var slices api.List[api.EndpointSlice]
		if err := x.get(ctx, &slices, "get", "endpointslices", "-l", "kubernetes.io/service-name="+hookService); err != nil {
			return false, "", err
		}
		ready := 0
		for _, s := range slices.Items {
			for _, e := range s.Endpoints {
				if e.Conditions.Ready == nil || *e.Conditions.Ready {
					ready++
				}
			}
		}
		return len(pods.Items) == 0 && ready == 0, fmt.Sprintf("%d pods, %d ready endpoints", len(pods.Items), ready), nil
	})
	x.timed(t, ctx, "down-fail", hookTimeout, fmt.Sprintf(`Internal error occurred: failed calling webhook %q: failed to call webhook: Post "https://%s:443/mutate?timeout=%ds": no endpoints available for service %q`, hookMutate, dns, hookTimeout, hookService))
	for _, kind := range []string{"mutatingwebhookconfiguration", "validatingwebhookconfiguration"} {
		name := xNS + "-mutate"
		if strings.HasPrefix(kind, "validating") {
			name = xNS + "-validate"
		}
		x.must(t, ctx, x.lite(), "patch", kind, name, "--type=json", "-p", `[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]`)
	}
	name := x.timed(t, ctx, "down-ignore", hookTimeout, "")
	var cm api.ConfigMap
	if err := x.get(ctx, &cm, "get", "configmap", name); err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Labels[mutatedLabel]; ok {
		t.Errorf("configmap %s admitted with the webhook down has the label %s: %v", name, mutatedLabel, cm.Labels)
	}
}

// timed creates ConfigMaps (with labels) with the real kubectl until the
// outcome is the one wanted (a refusal with message want, or, with want
// empty, an admission): a configuration just changed may take a moment
// to apply. The attempt that gets it must have taken less than the
// webhook's timeout plus a slack for kubectl's own time, or (for a webhook
// that does not answer) at least the timeout. It returns the name of the
// ConfigMap admitted.
func (x *extend) timed(t *testing.T, ctx context.Context, what string, timeoutSeconds int, want string, labels ...string) string {
	t.Helper()
	// The slack is kubectl's own time for a request no webhook delays (its
	// start, on a machine the CI shares), measured now, and 2 s.
	baseStart := time.Now()
	x.must(t, ctx, x.kubectl, "get", "configmap", "kube-root-ca.crt", "-n", xNS, "-o", "name")
	baseline := time.Since(baseStart)
	slack := baseline + 2*time.Second
	timeout := time.Duration(timeoutSeconds) * time.Second
	var took time.Duration
	var name string
	for attempt := 0; ; attempt++ {
		if attempt == 10 {
			t.Fatalf("%s: no attempt had the wanted outcome", what)
		}
		name = fmt.Sprintf("%s-%d", what, attempt)
		start := time.Now()
		out, err := x.c.RunInput(ctx, []byte(configMap(name, "k", "v", labels...)), x.kubectl, "--kubeconfig", x.c.Kubeconfig, "create", "-f", "-")
		took = time.Since(start)
		if want == "" && err == nil {
			break
		}
		if want != "" && err != nil {
			if msg := err.(*CommandError).Stderr; strings.Contains(msg, want) {
				t.Logf("%s: kubectl said %s", what, strings.TrimSpace(msg))
				break
			}
		}
		t.Logf("%s: attempt %d after %.1fs: %v %s", what, attempt, took.Seconds(), err, out)
		time.Sleep(time.Second)
	}
	t.Logf("%s: answered in %.2fs (timeoutSeconds %d; kubectl alone %.2fs)", what, took.Seconds(), timeoutSeconds, baseline.Seconds())
	if took > timeout+slack {
		t.Errorf("%s: the answer took %.2fs, more than the webhook's %ds timeout and %.2fs", what, took.Seconds(), timeoutSeconds, slack.Seconds())
	}
	if strings.HasPrefix(what, "hang") && took < timeout {
		t.Errorf("%s: the answer took %.2fs, less than the %ds the apiserver waits for the webhook", what, took.Seconds(), timeoutSeconds)
	}
	return name
}
