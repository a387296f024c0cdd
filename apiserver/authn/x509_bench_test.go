package authn

import (
	"crypto/tls"
	"crypto/x509"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/minik8s/minik8s/internal/pki"
)

// BenchmarkX509Authenticate is one client certificate presented again and
// again, as hollow nodes do over their few shared connections.
func BenchmarkX509Authenticate(b *testing.B) {
	ca, err := pki.NewCA("kubernetes", 0)
	if err != nil {
		b.Fatal(err)
	}
	certPEM, _, err := ca.IssueClient("system:node:hollow-1", []string{"system:nodes"}, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	leaf, err := pki.ParseCertPEM(certPEM)
	if err != nil {
		b.Fatal(err)
	}
	a := NewX509(ca.Pool())
	r := httptest.NewRequest("GET", "https://x/api/v1/nodes", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{leaf}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, ok, err := a.AuthenticateRequest(r); !ok || err != nil {
			b.Fatalf("ok=%v err=%v", ok, err)
		}
	}
}
