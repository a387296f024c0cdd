package authn

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/apiserver/request"
)

// Well-known users and groups, as in k8s.io/apiserver/pkg/authentication/user.
const (
	// AllAuthenticated is added to every authenticated user's groups.
	AllAuthenticated = "system:authenticated"
	// AllUnauthenticated is the group of the anonymous user.
	AllUnauthenticated = "system:unauthenticated"
	// Anonymous is the user of a request without credentials on a path
	// that allows anonymous access.
	Anonymous = "system:anonymous"
)

// Authenticator finds the user behind a request. ok=false with a nil error
// means the request carries no credentials of this kind; an error means it
// does but they are invalid.
type Authenticator interface {
	AuthenticateRequest(r *http.Request) (*request.User, bool, error)
}

// TokenAuthenticator checks a bearer token. ok=false with a nil error means
// the token is not one this authenticator knows about.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (*request.User, bool, error)
}

// ErrInvalidBearerToken is the error of a bearer token no token
// authenticator accepts, kube-apiserver's "invalid bearer token".
var ErrInvalidBearerToken = errors.New("invalid bearer token")

// BearerToken returns the token of an "Authorization: Bearer TOKEN" header,
// with kube-apiserver's parsing: the scheme is case-insensitive, surrounding
// space is ignored and an empty token counts as none.
func BearerToken(r *http.Request) (string, bool) {
	auth := strings.TrimSpace(r.Header.Get("Authorization"))
	if auth == "" {
		return "", false
	}
	parts := strings.SplitN(auth, " ", 3)
	if len(parts) < 2 || !strings.EqualFold(parts[0], "bearer") || parts[1] == "" {
		return "", false
	}
	return parts[1], true
}

// authenticateBearer adapts a TokenAuthenticator to requests: no bearer
// token is "not this kind"; a token the authenticator does not know is
// ErrInvalidBearerToken.
func authenticateBearer(r *http.Request, a TokenAuthenticator) (*request.User, bool, error) {
	token, ok := BearerToken(r)
	if !ok {
		return nil, false, nil
	}
	u, ok, err := a.AuthenticateToken(r.Context(), token)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return nil, false, ErrInvalidBearerToken
	}
	return u, true, nil
}

// withAuthenticated returns u with AllAuthenticated among its groups, as
// kube-apiserver's group adder does for every authenticated user.
func withAuthenticated(u *request.User) *request.User {
	if slices.Contains(u.Groups, AllAuthenticated) {
		return u
	}
	out := *u
	out.Groups = append(slices.Clone(u.Groups), AllAuthenticated)
	return &out
}

type union []Authenticator

// Union tries each authenticator in order and returns the first user found.
// Errors are collected and returned only when none succeeds, so an invalid
// token that a later authenticator accepts is not an error.
func Union(as ...Authenticator) Authenticator { return union(slices.Clone(as)) }

func (u union) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	var errs []error
	for _, a := range u {
		user, ok, err := a.AuthenticateRequest(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			return user, true, nil
		}
	}
	return nil, false, errors.Join(errs...)
}
