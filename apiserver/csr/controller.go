package csr

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
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

// sync approves a qualifying kubelet request, then signs an approved one.
func (c *Controller) sync(ctx context.Context, csr *api.CertificateSigningRequest) error {
	if condition(csr, api.CertificateDenied) || condition(csr, api.CertificateFailed) || len(csr.Status.Certificate) > 0 {
		return nil
	}
	if !condition(csr, api.CertificateApproved) {
		ok, why := c.approvable(ctx, csr)
		if !ok {
			c.Log.Debug("csr not auto-approved", "csr", csr.Name, "why", why)
			return nil
		}
		_, err := c.Store.Mutate(ctx, "", csr.Name, "", registry.WriteOptions{Subresource: "approval"}, func(cur api.Object) (api.Object, error) {
			o := cur.(*api.CertificateSigningRequest)
			now := api.Now()
			o.Status.Conditions = append(o.Status.Conditions, api.CertificateSigningRequestCondition{
				Type: api.CertificateApproved, Status: api.ConditionTrue, Reason: "AutoApproved",
				Message: "Auto approving kubelet client certificate after SubjectAccessReview.", LastUpdateTime: now, LastTransitionTime: now,
			})
			return o, nil
		})
		if err != nil {
			return fmt.Errorf("approve: %w", err)
		}
		c.Log.Info("approved kubelet client certificate request", "csr", csr.Name, "requester", csr.Spec.Username)
		return nil // the MODIFIED event brings it back for signing
	}
	if csr.Spec.SignerName != KubeletClientSigner && csr.Spec.SignerName != APIClientSigner {
		return nil
	}
	validity := DefaultValidity
	if s := csr.Spec.ExpirationSeconds; s != nil && time.Duration(*s)*time.Second < validity {
		validity = time.Duration(*s) * time.Second
	}
	usages := make([]string, len(csr.Spec.Usages))
	for i, u := range csr.Spec.Usages {
		usages[i] = string(u)
	}
	cert, signErr := c.CA.SignCSR(csr.Spec.Request, usages, validity)
	_, err := c.Store.Mutate(ctx, "", csr.Name, "", registry.WriteOptions{Subresource: "status"}, func(cur api.Object) (api.Object, error) {
		o := cur.(*api.CertificateSigningRequest)
		if signErr != nil {
			now := api.Now()
			o.Status.Conditions = append(o.Status.Conditions, api.CertificateSigningRequestCondition{
				Type: api.CertificateFailed, Status: api.ConditionTrue, Reason: "SignerValidationFailure",
				Message: signErr.Error(), LastUpdateTime: now, LastTransitionTime: now,
			})
			return o, nil
		}
		o.Status.Certificate = append(cert, c.CA.CertPEM()...)
		return o, nil
	})
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	if signErr != nil {
		return fmt.Errorf("sign: %w", signErr)
	}
	c.Log.Info("signed certificate", "csr", csr.Name, "signer", csr.Spec.SignerName)
	return nil
}

// approvable applies the kubelet client rules of Kubernetes' csrapproving
// controller and the SubjectAccessReview it asks for.
func (c *Controller) approvable(ctx context.Context, csr *api.CertificateSigningRequest) (bool, string) {
	if csr.Spec.SignerName != KubeletClientSigner {
		return false, "signer is not " + KubeletClientSigner
	}
	x, err := pki.ParseCSRPEM(csr.Spec.Request)
	if err != nil {
		return false, err.Error()
	}
	if !strings.HasPrefix(x.Subject.CommonName, pki.NodeUserPrefix) || !slices.Equal(x.Subject.Organization, []string{pki.NodesGroup}) {
		return false, "subject is not system:node:NAME in system:nodes"
	}
	allowed := map[api.KeyUsage]bool{"digital signature": true, "key encipherment": true, "client auth": true}
	for _, u := range csr.Spec.Usages {
		if !allowed[u] {
			return false, "usage " + string(u) + " is not for a kubelet client certificate"
		}
	}
	sub := "nodeclient"
	if csr.Spec.Username == x.Subject.CommonName {
		sub = "selfnodeclient"
	}
	user := &request.User{Name: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups}
	attrs := authz.AttributesFrom(&request.Info{IsResourceRequest: true, Verb: "create", APIGroup: api.CertificatesGroupName,
		APIVersion: "v1", Resource: "certificatesigningrequests", Subresource: sub}, user)
	d, reason, err := c.Authorizer.Authorize(ctx, attrs)
	if err != nil || d != authz.Allow {
		return false, fmt.Sprintf("requester may not create certificatesigningrequests/%s: %s", sub, reason)
	}
	return true, ""
}
