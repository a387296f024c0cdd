package csr

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/validation"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
	"github.com/minik8s/minik8s/internal/pki"
)

// Signer names Kubernetes defines.
const (
	KubeletClientSigner = "kubernetes.io/kube-apiserver-client-kubelet"
	APIClientSigner     = "kubernetes.io/kube-apiserver-client"
)

// DefaultValidity is the lifetime of issued certificates when a request does
// not ask for less (kube-controller-manager's --cluster-signing-duration).
const DefaultValidity = 365 * 24 * time.Hour

// Controller approves and signs CSRs.
type Controller struct {
	Store      *registry.Store
	CA         *pki.CA
	Authorizer authz.Authorizer
	// ApproveServing turns on the kubelet serving approver
	// (--approve-kubelet-serving-certificates, see servingVerdictFor);
	// Nodes reads a Node for it.
	ApproveServing bool
	Nodes          func(ctx context.Context, name string) (*api.Node, error)
	// OtherNodes lists every Node, and Reserved names what no node may
	// claim; the approver denies a request for another node's address or
	// a reserved name (ReservedNames.reservedSANs).
	OtherNodes func(ctx context.Context) ([]*api.Node, error)
	Reserved   ReservedNames
	Log        *slog.Logger
}

// Run watches CSRs until ctx ends, re-watching when a watch ends.
func (c *Controller) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := c.watch(ctx); err != nil && ctx.Err() == nil {
			c.Log.Warn("csr watch ended", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (c *Controller) watch(ctx context.Context) error {
	w, err := c.Store.Watch(ctx, "", registry.ListOptions{})
	if err != nil {
		return err
	}
	defer w.Stop()
	for line := range w.Events() {
		var ev struct {
			Type   string                        `json:"type"`
			Object api.CertificateSigningRequest `json:"object"`
		}
		if err := json.Unmarshal(line, &ev); err != nil || (ev.Type != api.Added && ev.Type != api.Modified) {
			continue
		}
		if err := c.sync(ctx, &ev.Object); err != nil {
			c.Log.Warn("csr sync failed", "csr", ev.Object.Name, "err", err)
		}
	}
	return nil
}

func condition(csr *api.CertificateSigningRequest, t api.RequestConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && c.Status == api.ConditionTrue {
			return true
		}
	}
	return false
}

// signers are the signers this apiserver runs, each with the check kube's
// csrsigning controller applies to its requests (signer.go:
// isKubeletClient, isKubeletServing, isKubeAPIServerClient).
// kubernetes.io/legacy-unknown is not run here: its requests stay
// unsigned.
var signers = map[string]func(*x509.CertificateRequest, []api.KeyUsage) error{
	KubeletClientSigner:  validation.ValidateKubeletClientCSR,
	KubeletServingSigner: validation.ValidateKubeletServingCSR,
	APIClientSigner:      validation.ValidateKubeAPIServerClientCSR,
}

// sync approves a qualifying kubelet request, then signs an approved one.
func (c *Controller) sync(ctx context.Context, csr *api.CertificateSigningRequest) error {
	if condition(csr, api.CertificateDenied) || condition(csr, api.CertificateFailed) || len(csr.Status.Certificate) > 0 {
		return nil
	}
	if !condition(csr, api.CertificateApproved) && csr.Spec.SignerName == KubeletServingSigner {
		if !c.ApproveServing {
			return nil
		}
		return c.decideServing(ctx, csr)
	}
	if !condition(csr, api.CertificateApproved) {
		message, why := c.approvable(ctx, csr)
		if message == "" {
			c.Log.Debug("csr not auto-approved", "csr", csr.Name, "why", why)
			return nil
		}
		_, err := c.Store.Mutate(ctx, "", csr.Name, "", registry.WriteOptions{Subresource: "approval"}, func(cur api.Object) (api.Object, error) {
			o := cur.(*api.CertificateSigningRequest)
			now := api.Now()
			o.Status.Conditions = append(o.Status.Conditions, api.CertificateSigningRequestCondition{
				Type: api.CertificateApproved, Status: api.ConditionTrue, Reason: "AutoApproved",
				Message: message, LastUpdateTime: now, LastTransitionTime: now,
			})
			return o, nil
		})
		if err != nil {
			return fmt.Errorf("approve: %w", err)
		}
		c.Log.Info("approved kubelet client certificate request", "csr", csr.Name, "requester", csr.Spec.Username)
		return nil // the MODIFIED event brings it back for signing
	}
	check, ok := signers[csr.Spec.SignerName]
	if !ok {
		return nil
	}
	x, err := validation.ParseCSR(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %w", csr.Name, err)
	}
	// As kube's signer: an approved request of a shape its signer does
	// not issue is never signed, and says so with a Failed condition.
	if err := check(x, csr.Spec.Usages); err != nil {
		return c.fail(ctx, csr.Name, err)
	}
	validity := DefaultValidity
	if s := csr.Spec.ExpirationSeconds; s != nil && time.Duration(*s)*time.Second < validity {
		validity = time.Duration(*s) * time.Second
	}
	usages := make([]string, len(csr.Spec.Usages))
	for i, u := range csr.Spec.Usages {
		usages[i] = string(u)
	}
	cert, err := c.CA.SignCSR(csr.Spec.Request, usages, validity)
	if err != nil {
		if ferr := c.fail(ctx, csr.Name, err); ferr != nil {
			return ferr
		}
		return fmt.Errorf("sign: %w", err)
	}
	_, err = c.Store.Mutate(ctx, "", csr.Name, "", registry.WriteOptions{Subresource: "status"}, func(cur api.Object) (api.Object, error) {
		o := cur.(*api.CertificateSigningRequest)
		o.Status.Certificate = append(cert, c.CA.CertPEM()...)
		return o, nil
	})
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	c.Log.Info("signed certificate", "csr", csr.Name, "signer", csr.Spec.SignerName)
	return nil
}

// decideServing approves or denies a kubelet serving request as
// servingVerdictFor says, through the approval subresource.
func (c *Controller) decideServing(ctx context.Context, csr *api.CertificateSigningRequest) error {
	v := c.servingVerdictFor(ctx, csr)
	if !v.approve && !v.deny {
		c.Log.Debug("kubelet serving csr not auto-approved", "csr", csr.Name, "requester", csr.Spec.Username, "why", v.message)
		return nil
	}
	cond := api.CertificateSigningRequestCondition{Type: api.CertificateApproved, Status: api.ConditionTrue,
		Reason: ReasonServingApproved, Message: v.message}
	if v.deny {
		cond.Type, cond.Reason = api.CertificateDenied, ReasonServingDenied
	}
	_, err := c.Store.Mutate(ctx, "", csr.Name, "", registry.WriteOptions{Subresource: "approval"}, func(cur api.Object) (api.Object, error) {
		o := cur.(*api.CertificateSigningRequest)
		now := api.Now()
		cond.LastUpdateTime, cond.LastTransitionTime = now, now
		o.Status.Conditions = append(o.Status.Conditions, cond)
		return o, nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", strings.ToLower(string(cond.Type)), err)
	}
	c.Log.Info("kubelet serving certificate request "+strings.ToLower(string(cond.Type)), "csr", csr.Name, "requester", csr.Spec.Username, "message", v.message)
	return nil // an approved request comes back MODIFIED for signing
}

// fail adds the Failed condition kube's signer adds to a request it will
// not sign (reason SignerValidationFailure, the refusal as message).
func (c *Controller) fail(ctx context.Context, name string, why error) error {
	_, err := c.Store.Mutate(ctx, "", name, "", registry.WriteOptions{Subresource: "status"}, func(cur api.Object) (api.Object, error) {
		o := cur.(*api.CertificateSigningRequest)
		now := api.Now()
		o.Status.Conditions = append(o.Status.Conditions, api.CertificateSigningRequestCondition{
			Type: api.CertificateFailed, Status: api.ConditionTrue, Reason: "SignerValidationFailure",
			Message: why.Error(), LastUpdateTime: now, LastTransitionTime: now,
		})
		return o, nil
	})
	if err != nil {
		return fmt.Errorf("error adding failure condition for csr: %w", err)
	}
	c.Log.Info("csr failed signer validation", "csr", name, "err", why)
	return nil
}

// approvable is kube's csrapproving controller (sarapprove.go): a request
// of a kubelet client's exact shape (validation.ValidateKubeletClientCSR:
// CN=system:node:NAME, O=system:nodes, client usages, no subject
// alternative name) is approved when the requester may create
// certificatesigningrequests/selfnodeclient (a request for its own name)
// or else /nodeclient. It returns the approval's message, or "" and why
// not.
func (c *Controller) approvable(ctx context.Context, csr *api.CertificateSigningRequest) (message, why string) {
	if csr.Spec.SignerName != KubeletClientSigner {
		return "", "signer is not " + KubeletClientSigner
	}
	x, err := validation.ParseCSR(csr.Spec.Request)
	if err != nil {
		return "", err.Error()
	}
	if err := validation.ValidateKubeletClientCSR(x, csr.Spec.Usages); err != nil {
		return "", "not a kubelet client certificate request: " + err.Error()
	}
	user := &request.User{Name: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups}
	for k, v := range csr.Spec.Extra {
		if user.Extra == nil {
			user.Extra = map[string][]string{}
		}
		user.Extra[k] = v
	}
	recognizers := []struct{ sub, message string }{
		{"selfnodeclient", "Auto approving self kubelet client certificate after SubjectAccessReview."},
		{"nodeclient", "Auto approving kubelet client certificate after SubjectAccessReview."},
	}
	var tried []string
	for _, r := range recognizers {
		if r.sub == "selfnodeclient" && csr.Spec.Username != x.Subject.CommonName {
			continue
		}
		tried = append(tried, r.sub)
		attrs := authz.AttributesFrom(&request.Info{IsResourceRequest: true, Verb: "create", APIGroup: api.CertificatesGroupName,
			APIVersion: "v1", Resource: "certificatesigningrequests", Subresource: r.sub}, user)
		if d, _, err := c.Authorizer.Authorize(ctx, attrs); err == nil && d == authz.Allow {
			return r.message, ""
		}
	}
	return "", fmt.Sprintf("recognized csr %q as %v but subject access review was not approved", csr.Name, tried)
}
