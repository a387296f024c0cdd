package serviceaccount

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/authn"
	"github.com/minik8s/minik8s/apiserver/request"
)

// Groups and user extra keys of service-account users, as Kubernetes'.
const (
	AllServiceAccountsGroup = "system:serviceaccounts"
	PodNameKey              = "authentication.kubernetes.io/pod-name"
	PodUIDKey               = "authentication.kubernetes.io/pod-uid"
	NodeNameKey             = "authentication.kubernetes.io/node-name"
	NodeUIDKey              = "authentication.kubernetes.io/node-uid"
	CredentialIDKey         = "authentication.kubernetes.io/credential-id"
)

// Getter reads the objects a token names; a missing object is an error.
type Getter interface {
	GetServiceAccount(ctx context.Context, namespace, name string) (*api.ServiceAccount, error)
	GetPod(ctx context.Context, namespace, name string) (*api.Pod, error)
	GetSecret(ctx context.Context, namespace, name string) (*api.Secret, error)
	GetNode(ctx context.Context, name string) (*api.Node, error)
}

// Authenticator accepts bearer JWTs signed by one of its keys for one of
// its issuers and audiences, as kube-apiserver's service-account token
// authenticator: the service account must still exist with the token's
// UID, and so must the bound pod, secret or node.
type Authenticator struct {
	keys      *Keys
	issuers   []string
	audiences []string
	getter    Getter
	now       func() time.Time
}

var _ authn.Authenticator = (*Authenticator)(nil)

// NewAuthenticator returns an authenticator of tokens from issuers (the
// --service-account-issuer values) for audiences (--api-audiences).
func NewAuthenticator(keys *Keys, issuers, audiences []string, getter Getter) *Authenticator {
	return &Authenticator{keys: keys, issuers: slices.Clone(issuers), audiences: slices.Clone(audiences), getter: getter, now: time.Now}
}

type audiencesKey struct{}

// WithAudiences asks for tokens of other audiences than the API's (a
// TokenReview's spec.audiences).
func WithAudiences(ctx context.Context, auds []string) context.Context {
	return context.WithValue(ctx, audiencesKey{}, auds)
}

// AuthenticateRequest implements authn.Authenticator.
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	token, ok := authn.BearerToken(r)
	if !ok {
		return nil, false, nil
	}
	return a.AuthenticateToken(r.Context(), token)
}

// hasIssuer peeks at the unverified payload, so that tokens of other kinds
// (static, bootstrap, other issuers') are left to other authenticators.
func (a *Authenticator) hasIssuer(token string) bool {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var c struct {
		Issuer string `json:"iss"`
	}
	return json.Unmarshal(payload, &c) == nil && (slices.Contains(a.issuers, c.Issuer) || c.Issuer == LegacyIssuer)
}

// LegacyIssuer is the issuer of the tokens the controller-manager writes
// into Secrets of type kubernetes.io/service-account-token.
const LegacyIssuer = "kubernetes/serviceaccount"

// legacyClaims are the private claims of a Secret-based token.
type legacyClaims struct {
	ServiceAccountName string `json:"kubernetes.io/serviceaccount/service-account.name"`
	ServiceAccountUID  string `json:"kubernetes.io/serviceaccount/service-account.uid"`
	SecretName         string `json:"kubernetes.io/serviceaccount/secret.name"`
	Namespace          string `json:"kubernetes.io/serviceaccount/namespace"`
}

// validateLegacy is Kubernetes' legacy validator (with
// --service-account-lookup, its default): the claims must be complete and
// agree with the subject, the Secret must still hold exactly this token,
// and the account must exist with the claimed UID. Secrets labelled
// kubernetes.io/legacy-token-invalid-since are refused.
func (a *Authenticator) validateLegacy(ctx context.Context, token string, public *jwt.Claims, l *legacyClaims) (*request.User, bool, error) {
	switch {
	case public.Subject == "":
		return nil, false, errors.New("sub claim is missing")
	case l.Namespace == "":
		return nil, false, errors.New("namespace claim is missing")
	case l.SecretName == "":
		return nil, false, errors.New("secretName claim is missing")
	case l.ServiceAccountName == "":
		return nil, false, errors.New("serviceAccountName claim is missing")
	case l.ServiceAccountUID == "":
		return nil, false, errors.New("serviceAccountUID claim is missing")
	case public.Subject != Username(l.Namespace, l.ServiceAccountName):
		return nil, false, errors.New("sub claim is invalid")
	}
	secret, err := a.getter.GetSecret(ctx, l.Namespace, l.SecretName)
	if err != nil || secret.DeletionTimestamp != nil {
		return nil, false, errors.New("Token has been invalidated")
	}
	if subtle.ConstantTimeCompare(secret.Data["token"], []byte(token)) == 0 {
		return nil, false, errors.New("Token does not match server's copy")
	}
	sa, err := a.getter.GetServiceAccount(ctx, l.Namespace, l.ServiceAccountName)
	if err != nil {
		return nil, false, err
	}
	if sa.DeletionTimestamp != nil {
		return nil, false, fmt.Errorf("ServiceAccount %s/%s has been deleted", l.Namespace, l.ServiceAccountName)
	}
	if string(sa.UID) != l.ServiceAccountUID {
		return nil, false, fmt.Errorf("ServiceAccount UID (%s) does not match claim (%s)", sa.UID, l.ServiceAccountUID)
	}
	if since := secret.Labels[InvalidSinceLabelKey]; since != "" {
		return nil, false, fmt.Errorf("the token in secret %s/%s for service account %s/%s has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '%s' label from the secret to temporarily allow use of this token",
			l.Namespace, l.SecretName, l.Namespace, l.ServiceAccountName, InvalidSinceLabelKey)
	}
	return &request.User{Name: Username(l.Namespace, l.ServiceAccountName), UID: l.ServiceAccountUID,
		Groups: []string{AllServiceAccountsGroup, AllServiceAccountsGroup + ":" + l.Namespace, authn.AllAuthenticated}}, true, nil
}

// InvalidSinceLabelKey marks a legacy token Secret the controller-manager
// has invalidated.
const InvalidSinceLabelKey = "kubernetes.io/legacy-token-invalid-since"

// TokenAudiences reads the "aud" claim of a service-account token without
// verifying it: for a token an authenticator has already accepted, which
// audiences it carries (TokenReview reports them).
func TokenAudiences(token string) []string { return unverifiedClaims(token).Audience }

// TokenID reads the "jti" claim of a token without verifying it (for the
// audit annotation of the token just issued).
func TokenID(token string) string { return unverifiedClaims(token).ID }

func unverifiedClaims(token string) jwt.Claims {
	var c jwt.Claims
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return c
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c
	}
	_ = json.Unmarshal(payload, &c)
	return c
}

var signatureAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512}

// AuthenticateToken checks a token: (nil, false, nil) when it is not a
// service-account token of these issuers, an error when it is but is not
// valid.
func (a *Authenticator) AuthenticateToken(ctx context.Context, token string) (*request.User, bool, error) {
	if !a.hasIssuer(token) {
		return nil, false, nil
	}
	tok, err := jwt.ParseSigned(token, signatureAlgorithms)
	if err != nil {
		return nil, false, nil
	}
	var kid string
	for _, h := range tok.Headers {
		if h.KeyID != "" {
			kid = h.KeyID
			break
		}
	}
	var (
		public  jwt.Claims
		private privateClaims
		legacy  legacyClaims
		errs    []error
		found   bool
	)
	for _, k := range a.keys.public {
		if kid != "" && k.KeyID != kid {
			continue
		}
		if err := tok.Claims(k.Key, &public, &private, &legacy); err != nil {
			errs = append(errs, err)
			continue
		}
		found = true
		break
	}
	if !found {
		if len(errs) == 0 {
			return nil, false, errors.New("invalid signature, no keys found")
		}
		return nil, false, errors.Join(errs...)
	}
	if public.Issuer == LegacyIssuer {
		// Legacy tokens name no audience: they are for the API.
		return a.validateLegacy(ctx, token, &public, &legacy)
	}
	want := a.audiences
	if auds, ok := ctx.Value(audiencesKey{}).([]string); ok && len(auds) > 0 {
		want = auds
	}
	if !slices.ContainsFunc(public.Audience, func(s string) bool { return slices.Contains(want, s) }) {
		return nil, false, fmt.Errorf("token audiences %q is invalid for the target audiences %q", []string(public.Audience), want)
	}
	return a.validate(ctx, &public, &private.Kubernetes)
}

// validate is Kubernetes' validator: time claims (one minute of leeway),
// then the objects the token names.
func (a *Authenticator) validate(ctx context.Context, public *jwt.Claims, k *KubernetesClaim) (*request.User, bool, error) {
	now := a.now()
	switch err := public.ValidateWithLeeway(jwt.Expected{Time: now}, jwt.DefaultLeeway); {
	case err == nil:
	case errors.Is(err, jwt.ErrExpired):
		return nil, false, errors.New("service account token has expired")
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, false, errors.New("service account token is not valid yet")
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, false, errors.New("service account token is issued in the future")
	default:
		return nil, false, fmt.Errorf("service account token claims could not be validated: %w", err)
	}
	deletedBefore := now.Add(-jwt.DefaultLeeway)
	gone := func(m *api.ObjectMeta) bool {
		return m.DeletionTimestamp != nil && m.DeletionTimestamp.Time.Before(deletedBefore)
	}
	invalidated := errors.New("service account token has been invalidated")
	ns, sa := k.Namespace, k.ServiceAccount
	acct, err := a.getter.GetServiceAccount(ctx, ns, sa.Name)
	if err != nil {
		return nil, false, err
	}
	if string(acct.UID) != sa.UID {
		return nil, false, fmt.Errorf("service account UID (%s) does not match claim (%s)", acct.UID, sa.UID)
	}
	if gone(&acct.ObjectMeta) {
		return nil, false, fmt.Errorf("service account %s/%s has been deleted", ns, sa.Name)
	}
	if ref := k.Secret; ref != nil {
		s, err := a.getter.GetSecret(ctx, ns, ref.Name)
		if err != nil || gone(&s.ObjectMeta) {
			return nil, false, invalidated
		}
		if string(s.UID) != ref.UID {
			return nil, false, fmt.Errorf("secret UID (%s) does not match service account secret ref claim (%s)", s.UID, ref.UID)
		}
	}
	u := &request.User{Name: Username(ns, sa.Name), UID: sa.UID,
		Groups: []string{AllServiceAccountsGroup, AllServiceAccountsGroup + ":" + ns, authn.AllAuthenticated}}
	extra := map[string][]string{}
	if ref := k.Pod; ref != nil {
		p, err := a.getter.GetPod(ctx, ns, ref.Name)
		if err != nil || gone(&p.ObjectMeta) {
			return nil, false, invalidated
		}
		if string(p.UID) != ref.UID {
			return nil, false, fmt.Errorf("pod UID (%s) does not match service account pod ref claim (%s)", p.UID, ref.UID)
		}
		extra[PodNameKey], extra[PodUIDKey] = []string{ref.Name}, []string{ref.UID}
	}
	if ref := k.Node; ref != nil {
		if k.Pod == nil {
			n, err := a.getter.GetNode(ctx, ref.Name)
			if err != nil || gone(&n.ObjectMeta) {
				return nil, false, invalidated
			}
			if string(n.UID) != ref.UID {
				return nil, false, fmt.Errorf("node UID (%s) does not match service account node ref claim (%s)", n.UID, ref.UID)
			}
		}
		extra[NodeNameKey], extra[NodeUIDKey] = []string{ref.Name}, []string{ref.UID}
	}
	if public.ID != "" {
		extra[CredentialIDKey] = []string{"JTI=" + public.ID}
	}
	if len(extra) > 0 {
		u.Extra = extra
	}
	return u, true, nil
}
