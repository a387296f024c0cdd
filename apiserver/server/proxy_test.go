package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

func TestPodContainer(t *testing.T) {
	t.Parallel()
	pod := func(init []string, cs ...string) *api.Pod {
		p := &api.Pod{ObjectMeta: api.ObjectMeta{Name: "web"}}
		for _, c := range cs {
			p.Spec.Containers = append(p.Spec.Containers, api.Container{Name: c})
		}
		for _, c := range init {
			p.Spec.InitContainers = append(p.Spec.InitContainers, api.Container{Name: c})
		}
		return p
	}
	tests := []struct {
		name      string
		pod       *api.Pod
		container string
		allowInit bool
		want      string
		wantErr   string
	}{
		{"the only container", pod(nil, "app"), "", true, "app", ""},
		{"named", pod(nil, "a", "b"), "b", true, "b", ""},
		{"an init container by name", pod([]string{"setup"}, "a"), "setup", true, "setup", ""},
		{"must choose", pod(nil, "a", "b"), "", false, "", "a container name must be specified for pod web, choose one of: [a b]"},
		{"must choose, with init containers", pod([]string{"setup"}, "a", "b"), "", true, "",
			"a container name must be specified for pod web, choose one of: [a b] or one of the init containers: [setup]"},
		{"unknown", pod(nil, "a"), "zz", true, "", "container zz is not valid for pod web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := podContainer(tt.pod, tt.container, tt.allowInit)
			if tt.wantErr != "" {
				if !apierrors.IsBadRequest(err) || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want BadRequest %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestLogQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		// As kube's LogLocation: a flag is passed on as "true" when set,
		// left out when false; insecureSkipTLSVerifyBackend is the
		// apiserver's choice of transport, not the kubelet's parameter.
		{"follow=true&tailLines=10&container=app&timestamps=1", "follow=true&tailLines=10&timestamps=true", ""},
		{"follow=false&previous=0&insecureSkipTLSVerifyBackend=true", "", ""},
		{"insecureSkipTLSVerifyBackend=maybe", "", "insecureSkipTLSVerifyBackend"},
		{"previous=true&limitBytes=100&sinceSeconds=60", "limitBytes=100&previous=true&sinceSeconds=60", ""},
		{"sinceTime=2026-12-02T17:00:00Z", "sinceTime=2026-12-02T17%3A00%3A00Z", ""},
		{"tailLines=-1", "", "tailLines"},
		{"limitBytes=0", "", "limitBytes"},
		{"follow=maybe", "", "follow"},
		{"sinceSeconds=10&sinceTime=2026-12-02T17:00:00Z", "", "at most one of sinceTime or sinceSeconds"},
	}
	for _, tt := range tests {
		q, _ := url.ParseQuery(tt.in)
		got, err := logQuery(q)
		if tt.wantErr != "" {
			if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.Encode() != tt.want {
			t.Errorf("%s: got %q, %v; want %q", tt.in, got.Encode(), err, tt.want)
		}
	}
}

func TestPreferredAddress(t *testing.T) {
	t.Parallel()
	node := &api.Node{Status: api.NodeStatus{Addresses: []api.NodeAddress{
		{Type: api.NodeHostName, Address: "n1"}, {Type: api.NodeExternalIP, Address: "203.0.113.5"}, {Type: api.NodeInternalIP, Address: "10.0.0.5"},
	}}}
	tests := []struct {
		name  string
		node  *api.Node
		types []api.NodeAddressType
		want  string
	}{
		{"default prefers InternalIP", node, nil, "10.0.0.5"},
		{"configured order", node, []api.NodeAddressType{api.NodeExternalIP, api.NodeInternalIP}, "203.0.113.5"},
		{"falls back to Hostname", &api.Node{Status: api.NodeStatus{Addresses: []api.NodeAddress{{Type: api.NodeHostName, Address: "n2"}}}}, nil, "n2"},
		{"none", &api.Node{}, nil, ""},
	}
	for _, tt := range tests {
		got, err := preferredAddress(tt.node, tt.types)
		if tt.want == "" {
			if err == nil || !strings.Contains(err.Error(), "no preferred addresses found") {
				t.Errorf("%s: got %q, %v", tt.name, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: got %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

func TestConnectOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		sub, query string
		want       string // the options' JSON
		wantErr    string
	}{
		{"exec", "command=ls&command=-l&stdin=true&stdout=1&stderr=0&tty=FALSE&container=app",
			`{"kind":"PodExecOptions","apiVersion":"v1","stdin":true,"stdout":true,"container":"app","command":["ls","-l"]}`, ""},
		// kube's parameter codec: only absent, "false" and "0" are false.
		{"exec", "command=ls&stdin=&tty=yes", `{"kind":"PodExecOptions","apiVersion":"v1","stdin":true,"tty":true,"command":["ls"]}`, ""},
		{"exec", "", `{"kind":"PodExecOptions","apiVersion":"v1","command":null}`, ""},
		{"attach", "stdin=true&stderr=true&command=ignored", `{"kind":"PodAttachOptions","apiVersion":"v1","stdin":true,"stderr":true}`, ""},
		{"portforward", "ports=8080,9090&ports=53", `{"kind":"PodPortForwardOptions","apiVersion":"v1","ports":[8080,9090,53]}`, ""},
		{"portforward", "ports=70000", "", "cannot convert to []int32"},
		{"portforward", "ports=http", "", "cannot convert to []int32"},
	}
	for _, tt := range tests {
		q, _ := url.ParseQuery(tt.query)
		got, err := connectOptions(tt.sub, q)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s?%s: error %v, want %q", tt.sub, tt.query, err, tt.wantErr)
			}
			continue
		}
		data, _ := json.Marshal(got)
		if err != nil || string(data) != tt.want {
			t.Errorf("%s?%s: got %s, %v; want %s", tt.sub, tt.query, data, err, tt.want)
		}
	}
}

// TestKubeletCANotLoaded: with --kubelet-certificate-authority set
// (VerifyKubelets) and its CA not loaded yet, kubelet requests answer a
// 500 Status instead of dialling without verification; once the CA is
// there they verify.
func TestKubeletCANotLoaded(t *testing.T) {
	t.Parallel()
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	p := &kubeletProxy{cfg: KubeletConfig{TLS: tc, VerifyKubelets: true}}
	for name, get := range map[string]func() (*http.Transport, error){"verifying": p.rt, "insecureSkipTLSVerifyBackend": p.insecureRT} {
		rt, err := get()
		if rt != nil || err == nil {
			t.Fatalf("%s transport without the CA: %v, %v", name, rt, err)
		}
		rec := httptest.NewRecorder()
		writeError(rec, httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/default/pods/web/log", nil), err)
		var st api.Status
		if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || rec.Code != http.StatusInternalServerError || st.Kind != "Status" ||
			st.Code != http.StatusInternalServerError || st.Reason != "InternalError" ||
			!strings.Contains(st.Message, "kubelet certificate authority (--kubelet-certificate-authority) is not loaded") {
			t.Errorf("%s: %d %s", name, rec.Code, rec.Body)
		}
	}
	tc.RootCAs = x509.NewCertPool()
	rt, err := p.rt()
	if err != nil || rt.TLSClientConfig.InsecureSkipVerify || rt.TLSClientConfig.RootCAs == nil {
		t.Fatalf("transport with the CA loaded: %+v, %v", rt, err)
	}

	// Without the flag: not verified, as kube-apiserver.
	plain := &kubeletProxy{cfg: KubeletConfig{TLS: &tls.Config{MinVersion: tls.VersionTLS12}}}
	if rt, err := plain.rt(); err != nil || !rt.TLSClientConfig.InsecureSkipVerify {
		t.Errorf("transport without --kubelet-certificate-authority: %+v, %v", rt, err)
	}
}
