package defaults

import "github.com/minik8s/minik8s/api"

// CertificateSigningRequest defaults a CSR as certificates.k8s.io/v1 does:
// a condition without a status is True. (v1, unlike v1beta1, defaults
// neither usages nor signerName; validation requires both.)
func CertificateSigningRequest(c *api.CertificateSigningRequest) {
	for i := range c.Status.Conditions {
		if c.Status.Conditions[i].Status == "" {
			c.Status.Conditions[i].Status = api.ConditionTrue
		}
	}
}
