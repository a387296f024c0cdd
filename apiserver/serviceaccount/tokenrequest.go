package serviceaccount

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
)

// MinTokenAgeSeconds is the shortest lifetime a token may be asked for.
const MinTokenAgeSeconds = 10 * 60

// TokenRequests answers POST serviceaccounts/NAME/token, as
// kube-apiserver's TokenREST: it fills in the defaults (the API audiences,
// one hour), checks the request and the bound object, and signs.
type TokenRequests struct {
	Issuer *Issuer
	Getter Getter
	// Audiences are the API audiences, the default of spec.audiences.
	Audiences []string
	// MaxExpirationSeconds shortens longer requests (0: no limit).
	MaxExpirationSeconds int64
	// ExtendExpiration turns admission's 3607-second pod-bound tokens for
	// the API audiences into tokens valid for a year (or
	// MaxExpirationSeconds) with a warnafter claim, as kube-apiserver's
	// --service-account-extend-token-expiration (default true).
	ExtendExpiration bool
}

var tokenRequestKind = apierrors.GroupKind{Group: api.AuthenticationGroupName, Kind: "TokenRequest"}

// Create issues a token for the service account namespace/name.
func (t *TokenRequests) Create(ctx context.Context, namespace, name string, req *api.TokenRequest) (*api.TokenRequest, error) {
	if req.Name != "" && req.Name != name {
		return nil, apierrors.NewInvalid(tokenRequestKind, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "name"), req.Name, "must match the service account name if specified")})
	}
	if req.Namespace != "" && req.Namespace != namespace {
		return nil, apierrors.NewInvalid(tokenRequestKind, name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "namespace"), req.Namespace, "must match the service account namespace if specified")})
	}
	sa, err := t.Getter.GetServiceAccount(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	if req.UID != "" && req.UID != sa.UID {
		return nil, apierrors.NewConflict(apierrors.GroupResource{Group: api.AuthenticationGroupName, Resource: "TokenRequest"}, name,
			fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
	}
	out := *req
	out.TypeMeta = api.TypeMeta{APIVersion: api.AuthenticationGroupName + "/v1", Kind: "TokenRequest"}
	if len(out.Spec.Audiences) == 0 {
		out.Spec.Audiences = slices.Clone(t.Audiences)
	}
	if out.Spec.ExpirationSeconds == nil {
		d := int64(3600)
		out.Spec.ExpirationSeconds = &d
	}
	out.Name, out.Namespace, out.UID = sa.Name, sa.Namespace, sa.UID
	now := time.Now()
	out.CreationTimestamp = api.NewTime(now)
	out.Status = api.TokenRequestStatus{}
	exp := *out.Spec.ExpirationSeconds
	switch {
	case exp < MinTokenAgeSeconds:
		return nil, apierrors.NewInvalid(tokenRequestKind, "", field.ErrorList{
			field.Invalid(field.NewPath("spec", "expirationSeconds"), exp, "may not specify a duration less than 10 minutes")})
	case exp > 1<<32:
		return nil, apierrors.NewInvalid(tokenRequestKind, "", field.ErrorList{
			field.Invalid(field.NewPath("spec", "expirationSeconds"), exp, "may not specify a duration larger than 2^32 seconds")})
	}
	var b Binding
	if ref := out.Spec.BoundObjectRef; ref != nil {
		var uid api.UID
		group, _ := splitAPIVersion(ref.APIVersion)
		switch {
		case group == "" && ref.Kind == "Pod":
			if b.Pod, err = t.Getter.GetPod(ctx, namespace, ref.Name); err != nil {
				return nil, err
			}
			if name != b.Pod.Spec.ServiceAccountName {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", name))
			}
			uid = b.Pod.UID
			if node := b.Pod.Spec.NodeName; node != "" {
				b.Node, err = t.Getter.GetNode(ctx, node)
				switch {
				case apierrors.IsNotFound(err):
					b.Node = &api.Node{ObjectMeta: api.ObjectMeta{Name: node}}
				case err != nil:
					return nil, apierrors.NewInternalError(err)
				}
			}
		case group == "" && ref.Kind == "Node":
			if b.Node, err = t.Getter.GetNode(ctx, ref.Name); err != nil {
				return nil, err
			}
			uid = b.Node.UID
		case group == "" && ref.Kind == "Secret":
			if b.Secret, err = t.Getter.GetSecret(ctx, namespace, ref.Name); err != nil {
				return nil, err
			}
			uid = b.Secret.UID
		default:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvkString(ref.APIVersion, ref.Kind)))
		}
		if ref.UID != "" && uid != ref.UID {
			return nil, apierrors.NewConflict(apierrors.GroupResource{Group: group, Resource: ref.Kind}, ref.Name,
				fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
		}
	}
	if t.MaxExpirationSeconds > 0 && exp > t.MaxExpirationSeconds {
		exp = t.MaxExpirationSeconds
		out.Spec.ExpirationSeconds = &exp
	}
	signed, warnAfter := exp, int64(0)
	if t.ExtendExpiration && b.Pod != nil && exp == WarnOnlyBoundTokenExpirationSeconds && t.apiAudiences(out.Spec.Audiences) {
		warnAfter = exp
		signed = ExpirationExtensionSeconds
		if t.MaxExpirationSeconds > 0 && t.MaxExpirationSeconds < signed {
			signed = max(t.MaxExpirationSeconds, exp)
		}
	}
	tok, _, err := t.Issuer.Sign(TokenSpec{ServiceAccount: sa, Audiences: out.Spec.Audiences, ExpirationSeconds: signed,
		WarnAfterSeconds: warnAfter, Binding: b})
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %w", err))
	}
	out.Status = api.TokenRequestStatus{Token: tok, ExpirationTimestamp: api.NewTime(now.Add(time.Duration(exp) * time.Second))}
	return &out, nil
}

// apiAudiences tells whether auds are exactly the API audiences.
func (t *TokenRequests) apiAudiences(auds []string) bool {
	if len(auds) != len(t.Audiences) {
		return false
	}
	for _, a := range auds {
		if !slices.Contains(t.Audiences, a) {
			return false
		}
	}
	return true
}

func splitAPIVersion(v string) (group, version string) {
	for i := 0; i < len(v); i++ {
		if v[i] == '/' {
			return v[:i], v[i+1:]
		}
	}
	return "", v
}

// gvkString is schema.GroupVersionKind's String: "group/version, Kind=kind".
func gvkString(apiVersion, kind string) string {
	g, v := splitAPIVersion(apiVersion)
	return g + "/" + v + ", Kind=" + kind
}
