package metricsserver

import (
	"context"
	"crypto/x509"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestKubeletClientCert: without a given certificate, the metrics server
// gets one for its user signed by the cluster CA, for client auth.
func TestKubeletClientCert(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	cert, err := requestKubeletClientCert(ctx, s.AdminClient(t), KubeletClientUser)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if leaf.Subject.CommonName != KubeletClientUser || len(leaf.Subject.Organization) != 0 {
		t.Errorf("subject %v", leaf.Subject)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: s.PKI().CA.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("not a client certificate of the cluster CA: %v", err)
	}
}
