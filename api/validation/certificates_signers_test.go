package validation

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"net/url"
	"testing"

	"github.com/minik8s/minik8s/api"
)

func TestKubeletCSRShapes(t *testing.T) {
	t.Parallel()
	node := pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}
	client := []api.KeyUsage{api.UsageDigitalSignature, api.UsageClientAuth}
	clientRSA := []api.KeyUsage{api.UsageKeyEncipherment, api.UsageClientAuth, api.UsageDigitalSignature}
	serving := []api.KeyUsage{api.UsageDigitalSignature, api.UsageServerAuth}
	tests := []struct {
		name       string
		req        x509.CertificateRequest
		usages     []api.KeyUsage
		validate   func(*x509.CertificateRequest, []api.KeyUsage) error
		wantErrMsg string
	}{
		{name: "client", req: x509.CertificateRequest{Subject: node}, usages: client, validate: ValidateKubeletClientCSR},
		{name: "client with key encipherment", req: x509.CertificateRequest{Subject: node}, usages: clientRSA, validate: ValidateKubeletClientCSR},
		{name: "client in system:masters too", req: x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes", "system:masters"}}},
			usages: client, validate: ValidateKubeletClientCSR, wantErrMsg: "subject organization is not system:nodes"},
		{name: "client DNS", req: x509.CertificateRequest{Subject: node, DNSNames: []string{"kubernetes.default.svc"}}, usages: client,
			validate: ValidateKubeletClientCSR, wantErrMsg: "DNS subjectAltNames are not allowed"},
		{name: "client email", req: x509.CertificateRequest{Subject: node, EmailAddresses: []string{"a@b.c"}}, usages: client,
			validate: ValidateKubeletClientCSR, wantErrMsg: "Email subjectAltNames are not allowed"},
		{name: "client IP", req: x509.CertificateRequest{Subject: node, IPAddresses: []net.IP{net.ParseIP("10.0.0.1")}}, usages: client,
			validate: ValidateKubeletClientCSR, wantErrMsg: "IP subjectAltNames are not allowed"},
		{name: "client URI", req: x509.CertificateRequest{Subject: node, URIs: []*url.URL{{Scheme: "spiffe", Host: "x"}}}, usages: client,
			validate: ValidateKubeletClientCSR, wantErrMsg: "URI subjectAltNames are not allowed"},
		{name: "client not a node", req: x509.CertificateRequest{Subject: pkix.Name{CommonName: "admin", Organization: []string{"system:nodes"}}}, usages: client,
			validate: ValidateKubeletClientCSR, wantErrMsg: "subject common name does not begin with system:node:"},
		{name: "client server auth", req: x509.CertificateRequest{Subject: node}, usages: append(client, api.UsageServerAuth),
			validate: ValidateKubeletClientCSR, wantErrMsg: "usages did not match [client auth digital signature key encipherment]"},
		{name: "serving", req: x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, usages: serving, validate: ValidateKubeletServingCSR},
		{name: "serving without SAN", req: x509.CertificateRequest{Subject: node}, usages: serving,
			validate: ValidateKubeletServingCSR, wantErrMsg: "DNS or IP subjectAltName is required"},
		{name: "serving client auth", req: x509.CertificateRequest{Subject: node, DNSNames: []string{"n1"}}, usages: client,
			validate: ValidateKubeletServingCSR, wantErrMsg: "usages did not match [digital signature key encipherment server auth]"},
		{name: "apiserver client", req: x509.CertificateRequest{Subject: pkix.Name{CommonName: "u"}}, usages: clientRSA, validate: ValidateKubeAPIServerClientCSR},
		{name: "apiserver client server auth", req: x509.CertificateRequest{Subject: pkix.Name{CommonName: "u"}},
			usages: []api.KeyUsage{api.UsageDigitalSignature, api.UsageServerAuth, api.UsageClientAuth}, validate: ValidateKubeAPIServerClientCSR,
			wantErrMsg: "invalid usage for client certificate: server auth"},
		{name: "apiserver client without client auth", req: x509.CertificateRequest{Subject: pkix.Name{CommonName: "u"}},
			usages: []api.KeyUsage{api.UsageDigitalSignature}, validate: ValidateKubeAPIServerClientCSR,
			wantErrMsg: "missing required usage for client certificate: client auth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.validate(&tt.req, tt.usages)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErrMsg {
				t.Errorf("got %q, want %q", got, tt.wantErrMsg)
			}
		})
	}
}
