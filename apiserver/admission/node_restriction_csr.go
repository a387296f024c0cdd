package admission

import (
	"fmt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/validation"
)

// admitCSR is NodeRestriction's rule for CertificateSigningRequests
// (kube's admitCSR): a node may create a request for the kubelet-serving
// or kube-apiserver-client-kubelet signer only with CN=system:node:<its
// own name>; the request's other attributes are the signer's business.
func admitCSR(node string, a *Attributes) error {
	if a.Operation != Create {
		return nil
	}
	csr, ok := a.Object.(*api.CertificateSigningRequest)
	if !ok {
		return NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	if csr.Spec.SignerName != api.KubeletServingSignerName && csr.Spec.SignerName != api.KubeAPIServerClientKubeletSignerName {
		return nil
	}
	x, err := validation.ParseCSR(csr.Spec.Request)
	if err != nil {
		return NewForbidden(a, fmt.Errorf("unable to parse csr: %w", err))
	}
	if want := "system:node:" + node; x.Subject.CommonName != want {
		return NewForbidden(a, fmt.Errorf("can only create a node CSR with CN=%s", want))
	}
	return nil
}
