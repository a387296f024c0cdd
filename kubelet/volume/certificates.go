package volume

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/labels"
)

// TrustBundles is what clusterTrustBundle projections read: the
// kubelet's cache of ClusterTrustBundles.
type TrustBundles interface {
	// ClusterTrustBundle returns the named bundle (a NotFound error when
	// there is none).
	ClusterTrustBundle(ctx context.Context, name string) (*api.ClusterTrustBundle, error)
	// ClusterTrustBundles returns every bundle.
	ClusterTrustBundles(ctx context.Context) ([]*api.ClusterTrustBundle, error)
}

// PodCertificates is what podCertificate projections read: the kubelet's
// pod certificate manager.
type PodCertificates interface {
	// PodCertificate returns the PEM private key and certificate chain
	// issued for source index of the pod's projected volume, or an error
	// while none is issued yet.
	PodCertificate(ctx context.Context, pod *api.Pod, volume string, index int, src *api.PodCertificateProjection) (key, chain []byte, err error)
}

// TrustAnchors is the file of a clusterTrustBundle projection, as kube's
// ClusterTrustBundle manager makes it: the certificates of the named
// bundle, or of every bundle of the signer whose labels match the selector
// (a nil selector matches none, an empty one all), each once, in a stable
// order. An optional projection that finds nothing is an empty file; a
// required one is an error.
func TrustAnchors(ctx context.Context, g TrustBundles, src *api.ClusterTrustBundleProjection) ([]byte, error) {
	optional := src.Optional != nil && *src.Optional
	switch {
	case src.Name != nil:
		b, err := g.ClusterTrustBundle(ctx, *src.Name)
		if apierrors.IsNotFound(err) && optional {
			return []byte{}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("while getting ClusterTrustBundle: %w", err)
		}
		return normalizeTrustAnchors([]*api.ClusterTrustBundle{b}), nil
	case src.SignerName != nil:
		sel, err := labels.SelectorFromLabelSelector(src.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("while parsing label selector: %w", err)
		}
		all, err := g.ClusterTrustBundles(ctx)
		if err != nil {
			return nil, fmt.Errorf("while listing ClusterTrustBundles matching label selector %v: %w", src.LabelSelector, err)
		}
		var matched []*api.ClusterTrustBundle
		for _, b := range all {
			if b.Spec.SignerName == *src.SignerName && sel.Matches(labels.Set(b.Labels)) {
				matched = append(matched, b)
			}
		}
		if len(matched) == 0 {
			if optional {
				return []byte{}, nil
			}
			return nil, errors.New("combination of signerName and labelSelector matched zero ClusterTrustBundles")
		}
		return normalizeTrustAnchors(matched), nil
	}
	return nil, errors.New("ClusterTrustBundle projection requires either name or signerName to be set")
}

// normalizeTrustAnchors re-encodes the certificates of the bundles as
// plain CERTIFICATE blocks, each once. kube's kubelet sorts them and then
// shuffles them once per call; minik8s keeps them sorted, so an unchanged
// set of bundles rewrites nothing at the next volume resync.
func normalizeTrustAnchors(bundles []*api.ClusterTrustBundle) []byte {
	seen := map[string]bool{}
	var ders []string
	for _, b := range bundles {
		rest := []byte(b.Spec.TrustBundle)
		for {
			var blk *pem.Block
			if blk, rest = pem.Decode(rest); blk == nil {
				break
			}
			if !seen[string(blk.Bytes)] {
				seen[string(blk.Bytes)] = true
				ders = append(ders, string(blk.Bytes))
			}
		}
	}
	slices.Sort(ders)
	out := []byte{}
	for _, d := range ders {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte(d)})...)
	}
	return out
}

// podCertificatePayload is the files of a podCertificate projection: the
// credential bundle (key, then chain), the key and the chain, at the paths
// the projection names.
func podCertificatePayload(key, chain []byte, src *api.PodCertificateProjection, mode int32, user *int64) map[string]FileProjection {
	out := map[string]FileProjection{}
	if src.CredentialBundlePath != "" {
		out[src.CredentialBundlePath] = FileProjection{Data: append(append([]byte{}, key...), chain...), Mode: mode, FsUser: user}
	}
	if src.KeyPath != "" {
		out[src.KeyPath] = FileProjection{Data: key, Mode: mode, FsUser: user}
	}
	if src.CertificateChainPath != "" {
		out[src.CertificateChainPath] = FileProjection{Data: chain, Mode: mode, FsUser: user}
	}
	return out
}
