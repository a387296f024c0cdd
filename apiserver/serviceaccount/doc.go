// Package serviceaccount is the apiserver's service-account identity, as
// kube-apiserver's pkg/serviceaccount: the signing and verification keys
// (--service-account-signing-key-file, --service-account-key-file, or sa.key
// and sa.pub made in the certificate directory on first start), the JWTs
// the TokenRequest API issues (Kubernetes' claims: iss, sub
// system:serviceaccount:NS:NAME, aud, exp, iat, nbf, jti and the
// "kubernetes.io" claim naming the namespace, service account and bound
// pod, secret or node), the bearer-token authenticator that accepts them
// back (and the legacy Secret-based tokens of issuer
// kubernetes/serviceaccount, while their Secret holds them), and the OIDC
// discovery documents (/.well-known/openid-configuration,
// /openid/v1/jwks) that let anyone else verify them.
//
// It is the one package that uses the JOSE library
// (github.com/go-jose/go-jose/v4, the one Kubernetes uses). Keys are RSA
// (RS256) or ECDSA (ES256/384/512); a key's "kid" is Kubernetes': the
// unpadded base64url SHA-256 of its DER (PKIX) public key, so tokens and
// JWKS are interchangeable with a kube-apiserver holding the same key.
package serviceaccount
