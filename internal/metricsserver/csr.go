package metricsserver

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/internal/pki"
)

// KubeletClientUser is the identity the metrics server asks a kubelet
// client certificate for when none is given; RBAC grants it nodes/metrics
// (deploy/addons/metrics-server.yaml).
const KubeletClientUser = "system:metrics-server"

// requestKubeletClientCert obtains a client certificate for user from the
// cluster's kubernetes.io/kube-apiserver-client signer: a
// CertificateSigningRequest, approved by the metrics server itself (its
// ServiceAccount may approve for that signer), signed by the apiserver.
// The kubelets authenticate it and authorize it with a SubjectAccessReview.
func requestKubeletClientCert(ctx context.Context, c *client.Client, user string) (tls.Certificate, error) {
	csrPEM, keyPEM, err := pki.NewCSR(user, nil)
	if err != nil {
		return tls.Certificate{}, err
	}
	host, _ := os.Hostname()
	name := "metrics-server-" + strings.ToLower(host) + "-" + fmt.Sprint(time.Now().Unix())
	csrs := client.Resource[api.CertificateSigningRequest](c)
	created, err := csrs.Create(ctx, &api.CertificateSigningRequest{ObjectMeta: api.ObjectMeta{Name: name},
		Spec: api.CertificateSigningRequestSpec{Request: csrPEM, SignerName: api.KubeAPIServerClientSignerName,
			Usages: []api.KeyUsage{"digital signature", "key encipherment", "client auth"}}})
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("kubelet client certificate: create CSR: %w", err)
	}
	created.Status.Conditions = append(created.Status.Conditions, api.CertificateSigningRequestCondition{Type: api.CertificateApproved,
		Status: api.ConditionTrue, Reason: "MetricsServerApproved", Message: "the metrics server's kubelet client certificate"})
	body, _ := json.Marshal(created)
	if _, err := c.Do(ctx, client.Request{Method: "PUT", Path: "/apis/certificates.k8s.io/v1/certificatesigningrequests/" + name + "/approval", Body: body}); err != nil {
		return tls.Certificate{}, fmt.Errorf("kubelet client certificate: approve CSR %s: %w", name, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := csrs.Get(ctx, name)
		if err != nil && !apierrors.IsNotFound(err) {
			return tls.Certificate{}, err
		}
		if err == nil && len(got.Status.Certificate) > 0 {
			return tls.X509KeyPair(got.Status.Certificate, keyPEM)
		}
		if time.Now().After(deadline) {
			return tls.Certificate{}, fmt.Errorf("kubelet client certificate: CSR %s not signed within a minute", name)
		}
		select {
		case <-ctx.Done():
			return tls.Certificate{}, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
