package review

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/request"
)

func info(resource string) api.ResourceInfo {
	for _, ri := range api.ReviewResources {
		if ri.Resource == resource {
			return ri
		}
	}
	panic(resource)
}

// onlyPods allows get on pods, denies delete, and fails on secrets.
var onlyPods = authz.AuthorizerFunc(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
	switch {
	case a.Resource == "secrets":
		return authz.NoOpinion, "", errors.New("secrets are unknowable")
	case a.Resource == "pods" && a.Verb == "get":
		return authz.Allow, "pods are fine for " + a.User.Name, nil
	case a.Verb == "delete":
		return authz.Deny, "never", nil
	}
	return authz.NoOpinion, "", nil
})

type tokens map[string]*request.User

func (t tokens) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if u, ok := t[tok]; ok {
		return u, true, nil
	}
	return nil, false, errors.New("invalid bearer token")
}

// TestReview pins each review's status and kube's errors for bad ones.
func TestReview(t *testing.T) {
	t.Parallel()
	rv := &Reviewer{Authorizer: authz.Union(authz.PrivilegedGroups("system:masters"), onlyPods),
		Authenticator: tokens{"good": {Name: "tok-user", Groups: []string{"system:authenticated"}}}}
	alice := &request.User{Name: "alice", UID: "u1", Groups: []string{"dev"}, Extra: map[string][]string{"k": {"v"}}}
	tests := []struct {
		name, resource, namespace, body string
		user                            *request.User
		wantStatus                      string // the status, as JSON
		wantErr                         string // the error message
		wantCode                        int32
	}{
		{name: "SAR allowed, for the spec's user", resource: "subjectaccessreviews",
			body:       `{"spec":{"user":"bob","resourceAttributes":{"verb":"get","resource":"pods","namespace":"ns"}}}`,
			wantStatus: `{"allowed":true,"reason":"pods are fine for bob"}`},
		{name: "SAR denied", resource: "subjectaccessreviews",
			body:       `{"spec":{"groups":["g"],"resourceAttributes":{"verb":"delete","resource":"pods"}}}`,
			wantStatus: `{"allowed":false,"denied":true,"reason":"never"}`},
		{name: "SAR evaluation error", resource: "subjectaccessreviews",
			body:       `{"spec":{"user":"bob","resourceAttributes":{"verb":"get","resource":"secrets"}}}`,
			wantStatus: `{"allowed":false,"evaluationError":"secrets are unknowable"}`},
		{name: "SAR without a user", resource: "subjectaccessreviews",
			body:     `{"spec":{"nonResourceAttributes":{"verb":"get","path":"/x"}}}`,
			wantErr:  `SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`,
			wantCode: 422},
		{name: "SAR naming itself", resource: "subjectaccessreviews",
			body:    `{"metadata":{"name":"x"},"spec":{"user":"bob","resourceAttributes":{"verb":"get","resource":"pods"}}}`,
			wantErr: `: must be empty`, wantCode: 422},
		{name: "LSAR naming itself", resource: "localsubjectaccessreviews", namespace: "ns",
			body:    `{"metadata":{"name":"x","namespace":"ns"},"spec":{"user":"bob","resourceAttributes":{"verb":"get","resource":"pods","namespace":"ns"}}}`,
			wantErr: `: must be empty except for namespace`, wantCode: 422},
		{name: "LSAR with its namespace", resource: "localsubjectaccessreviews", namespace: "ns",
			body:       `{"metadata":{"namespace":"ns"},"spec":{"user":"bob","resourceAttributes":{"verb":"get","resource":"pods","namespace":"ns"}}}`,
			wantStatus: `{"allowed":true,"reason":"pods are fine for bob"}`},
		{name: "SSAR with both attributes", resource: "selfsubjectaccessreviews",
			body:     `{"spec":{"resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"verb":"get","path":"/x"}}}`,
			wantErr:  `SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value`,
			wantCode: 422},
		{name: "SSAR is the caller's", resource: "selfsubjectaccessreviews",
			body: `{"spec":{"resourceAttributes":{"verb":"get","resource":"pods"}}}`, wantStatus: `{"allowed":true,"reason":"pods are fine for alice"}`},
		{name: "LSAR in another namespace", resource: "localsubjectaccessreviews", namespace: "ns",
			body:    `{"spec":{"user":"bob","resourceAttributes":{"verb":"get","resource":"pods","namespace":"other"}}}`,
			wantErr: "spec.resourceAttributes.namespace must match namespace: ns", wantCode: 400},
		{name: "LSAR with non-resource attributes", resource: "localsubjectaccessreviews", namespace: "ns",
			body:    `{"spec":{"user":"bob","nonResourceAttributes":{"verb":"get","path":"/x"}}}`,
			wantErr: "spec.nonResourceAttributes: Invalid value", wantCode: 422},
		{name: "LSAR", resource: "localsubjectaccessreviews", namespace: "ns",
			body:       `{"spec":{"user":"bob","resourceAttributes":{"verb":"get","resource":"pods","namespace":"ns"}}}`,
			wantStatus: `{"allowed":true,"reason":"pods are fine for bob"}`},
		{name: "SSRR needs a namespace", resource: "selfsubjectrulesreviews", body: `{"spec":{}}`,
			wantErr: "no namespace on request", wantCode: 400},
		{name: "SSRR of an authorizer that cannot list is incomplete", resource: "selfsubjectrulesreviews", body: `{"spec":{"namespace":"ns"}}`,
			wantStatus: `{"resourceRules":[],"nonResourceRules":[],"incomplete":true,"evaluationError":"the authorizer does not support user rule resolution"}`},
		{name: "SSRR of a master", resource: "selfsubjectrulesreviews", body: `{"spec":{"namespace":"ns"}}`,
			user:       &request.User{Name: "root", Groups: []string{"system:masters"}},
			wantStatus: `{"resourceRules":[{"verbs":["*"],"apiGroups":["*"],"resources":["*"]}],"nonResourceRules":[{"verbs":["*"],"nonResourceURLs":["*"]}],"incomplete":true,"evaluationError":"the authorizer does not support user rule resolution"}`},
		{name: "TokenReview of a known token", resource: "tokenreviews", body: `{"spec":{"token":"good","audiences":["a"]}}`,
			wantStatus: `{"authenticated":true,"user":{"username":"tok-user","groups":["system:authenticated"]},"audiences":["a"]}`},
		{name: "TokenReview of an unknown token", resource: "tokenreviews", body: `{"spec":{"token":"bad"}}`,
			wantStatus: `{"error":"invalid bearer token"}`},
		{name: "TokenReview without a token", resource: "tokenreviews", body: `{"spec":{}}`,
			wantErr: "token is required for TokenReview in authentication.k8s.io", wantCode: 400},
		{name: "SelfSubjectReview", resource: "selfsubjectreviews", body: `{}`,
			wantStatus: `{"userInfo":{"username":"alice","uid":"u1","groups":["dev"],"extra":{"k":["v"]}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ri := info(tc.resource)
			obj := ri.New()
			if err := json.Unmarshal([]byte(tc.body), obj); err != nil {
				t.Fatal(err)
			}
			u := tc.user
			if u == nil {
				u = alice
			}
			out, err := rv.Review(request.WithUser(context.Background(), u), ri, tc.namespace, obj)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || apierrors.CodeForError(err) != tc.wantCode {
					t.Fatalf("error %v (code %d), want %q (%d)", err, apierrors.CodeForError(err), tc.wantErr, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tm := out.GetTypeMeta(); tm.Kind != ri.Kind || tm.APIVersion != ri.GroupVersion() {
				t.Errorf("type %+v", tm)
			}
			var got struct {
				Status json.RawMessage `json:"status"`
			}
			data, _ := json.Marshal(out)
			_ = json.Unmarshal(data, &got)
			if string(got.Status) != tc.wantStatus {
				t.Errorf("status %s, want %s", got.Status, tc.wantStatus)
			}
		})
	}
}
