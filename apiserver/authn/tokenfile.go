package authn

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/minik8s/minik8s/apiserver/request"
)

// TokenFile authenticates static bearer tokens read once from a
// kube-apiserver --token-auth-file: CSV lines "token,user,uid" with an
// optional fourth column of comma-separated groups (quote it:
// `t0k3n,alice,1001,"dev,ops"`). Further columns are ignored, as in
// Kubernetes.
type TokenFile struct {
	tokens map[string]*request.User
}

var (
	_ Authenticator      = (*TokenFile)(nil)
	_ TokenAuthenticator = (*TokenFile)(nil)
)

// NewTokenFile reads path. It is stricter than kube-apiserver, which only
// warns: an empty token, an empty user name or a token listed twice is an
// error naming the line, since each is a misconfiguration that would
// otherwise let the wrong user in or silently lock one out.
func NewTokenFile(path string) (*TokenFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	tf, err := parseTokenFile(f)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return tf, nil
}

func parseTokenFile(rd io.Reader) (*TokenFile, error) {
	r := csv.NewReader(rd)
	r.FieldsPerRecord = -1
	tokens := map[string]*request.User{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := r.FieldPos(0)
		if len(rec) < 3 {
			return nil, fmt.Errorf("line %d: must have at least 3 columns (token, user name, user uid), found %d", line, len(rec))
		}
		token, name, uid := rec[0], rec[1], rec[2]
		if token == "" {
			return nil, fmt.Errorf("line %d: empty token", line)
		}
		if name == "" {
			return nil, fmt.Errorf("line %d: empty user name", line)
		}
		if _, dup := tokens[token]; dup {
			return nil, fmt.Errorf("line %d: duplicate token", line)
		}
		u := &request.User{Name: name, UID: uid}
		if len(rec) >= 4 {
			for g := range strings.SplitSeq(rec[3], ",") {
				if g != "" && !slices.Contains(u.Groups, g) {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		tokens[token] = withAuthenticated(u)
	}
	return &TokenFile{tokens: tokens}, nil
}

// Len is the number of tokens loaded.
func (a *TokenFile) Len() int { return len(a.tokens) }

// AuthenticateToken implements TokenAuthenticator.
func (a *TokenFile) AuthenticateToken(_ context.Context, token string) (*request.User, bool, error) {
	u, ok := a.tokens[token]
	if !ok {
		return nil, false, nil
	}
	return cloneUser(u), true, nil
}

// AuthenticateRequest implements Authenticator for bearer tokens.
func (a *TokenFile) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	return authenticateBearer(r, a)
}

// cloneUser keeps callers from changing the authenticator's copy.
func cloneUser(u *request.User) *request.User {
	out := *u
	out.Groups = slices.Clone(u.Groups)
	if u.Extra != nil {
		out.Extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			out.Extra[k] = slices.Clone(v)
		}
	}
	return &out
}
