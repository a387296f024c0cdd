package serviceaccount

import (
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/minik8s/minik8s/api"
)

// Kubernetes' constants of projected tokens.
const (
	// WarnOnlyBoundTokenExpirationSeconds is the lifetime ServiceAccount
	// admission asks for (3607 s): a request for exactly it is extended,
	// with a "warnafter" claim at the requested expiry.
	WarnOnlyBoundTokenExpirationSeconds = 60*60 + 7
	// ExpirationExtensionSeconds is how long such a token is extended to
	// (one year), so old clients that never re-read the token file keep
	// working while the apiserver can report them.
	ExpirationExtensionSeconds = 24 * 365 * 60 * 60
)

// Ref names a bound object in the private claim.
type Ref struct {
	Name string `json:"name,omitempty"`
	UID  string `json:"uid,omitempty"`
}

// KubernetesClaim is the private "kubernetes.io" claim.
type KubernetesClaim struct {
	Namespace      string           `json:"namespace,omitempty"`
	ServiceAccount Ref              `json:"serviceaccount,omitempty"`
	Pod            *Ref             `json:"pod,omitempty"`
	Secret         *Ref             `json:"secret,omitempty"`
	Node           *Ref             `json:"node,omitempty"`
	WarnAfter      *jwt.NumericDate `json:"warnafter,omitempty"`
}

type privateClaims struct {
	Kubernetes KubernetesClaim `json:"kubernetes.io,omitempty"`
}

// publicClaims are jwt.Claims but for "aud", always an array in
// Kubernetes' tokens (go-jose writes a lone audience as a string).
type publicClaims struct {
	Issuer    string           `json:"iss,omitempty"`
	Subject   string           `json:"sub,omitempty"`
	Audience  []string         `json:"aud,omitempty"`
	Expiry    *jwt.NumericDate `json:"exp,omitempty"`
	NotBefore *jwt.NumericDate `json:"nbf,omitempty"`
	IssuedAt  *jwt.NumericDate `json:"iat,omitempty"`
	ID        string           `json:"jti,omitempty"`
}

// Binding is what a token is bound to: at most one of Pod (with its Node,
// when scheduled), Secret and Node alone.
type Binding struct {
	Pod    *api.Pod
	Secret *api.Secret
	Node   *api.Node
}

// TokenSpec is what is signed.
type TokenSpec struct {
	ServiceAccount    *api.ServiceAccount
	Audiences         []string
	ExpirationSeconds int64
	// WarnAfterSeconds, when set, adds the warnafter claim (extended
	// tokens).
	WarnAfterSeconds int64
	Binding          Binding
}

// Issuer signs tokens with the signing key for an issuer URL.
type Issuer struct {
	URL string
	// signer is made once and shared (as kube-apiserver's token
	// generator does); signerErr is why there is none.
	signer    jose.Signer
	signerErr error
	now       func() time.Time
}

// NewIssuer returns an issuer signing as url.
func NewIssuer(url string, keys *Keys) *Issuer {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: keys.alg,
		Key: jose.JSONWebKey{Key: keys.signer, KeyID: keys.signKID}}, nil)
	if err != nil {
		err = fmt.Errorf("service account token signer: %w", err)
	}
	return &Issuer{URL: url, signer: signer, signerErr: err, now: time.Now}
}

// Username is a service account's user name.
func Username(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// Sign returns the token and its expiry.
func (i *Issuer) Sign(spec TokenSpec) (string, time.Time, error) {
	sa := spec.ServiceAccount
	now := i.now()
	exp := now.Add(time.Duration(spec.ExpirationSeconds) * time.Second)
	public := publicClaims{
		Issuer:    i.URL,
		Subject:   Username(sa.Namespace, sa.Name),
		Audience:  spec.Audiences,
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(exp),
		ID:        uuid.NewString(),
	}
	k := KubernetesClaim{Namespace: sa.Namespace, ServiceAccount: Ref{Name: sa.Name, UID: string(sa.UID)}}
	b := spec.Binding
	switch {
	case b.Pod != nil:
		k.Pod = &Ref{Name: b.Pod.Name, UID: string(b.Pod.UID)}
		if b.Node != nil {
			k.Node = &Ref{Name: b.Node.Name, UID: string(b.Node.UID)}
		}
	case b.Secret != nil:
		k.Secret = &Ref{Name: b.Secret.Name, UID: string(b.Secret.UID)}
	case b.Node != nil:
		k.Node = &Ref{Name: b.Node.Name, UID: string(b.Node.UID)}
	}
	if spec.WarnAfterSeconds != 0 {
		k.WarnAfter = jwt.NewNumericDate(now.Add(time.Duration(spec.WarnAfterSeconds) * time.Second))
	}
	if i.signerErr != nil {
		return "", time.Time{}, i.signerErr
	}
	tok, err := jwt.Signed(i.signer).Claims(public).Claims(privateClaims{Kubernetes: k}).Serialize()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign service account token: %w", err)
	}
	return tok, exp, nil
}
