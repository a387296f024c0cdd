package integration

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// TestServiceAccountTokensOutliveWhatTheyNamed completes
// TestServiceAccountTokens (which covers a deleted pod, another audience,
// an expired token and another key): a token stops working when anything
// it names is gone or replaced — its pod recreated under the same name,
// its Secret or Node deleted, its ServiceAccount deleted or recreated —
// each over HTTPS through the real authenticator, as a 401 Status.
func TestServiceAccountTokensOutliveWhatTheyNamed(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin := userClientset(t, s, rest.ImpersonationConfig{}, "admin", "system:masters")
	const ns = "default"
	for _, name := range []string{"robot", "gone"} {
		if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	node, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	podSpec := corev1.PodSpec{ServiceAccountName: "robot", NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}
	pod, err := admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: podSpec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := admin.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	issue := func(sa string, ref *authenticationv1.BoundObjectReference) string {
		t.Helper()
		tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("token for %s bound to %+v: %v", sa, ref, err)
		}
		return tr.Status.Token
	}
	podToken := issue("robot", &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "p", UID: pod.UID})
	secretToken := issue("robot", &authenticationv1.BoundObjectReference{Kind: "Secret", APIVersion: "v1", Name: "s", UID: secret.UID})
	nodeToken := issue("robot", &authenticationv1.BoundObjectReference{Kind: "Node", APIVersion: "v1", Name: "n1", UID: node.UID})
	goneToken := issue("gone", nil)
	recreatedToken := issue("robot", nil)

	works := func(what, tok string) {
		t.Helper()
		if _, err := whoami(ctx, tokenClientset(t, s, tok)); err != nil {
			t.Fatalf("%s before anything is deleted: %v", what, err)
		}
	}
	// refused waits (the authenticator may read through a cache) for a
	// 401 Status, the one kube-apiserver sends for any bad bearer token.
	refused := func(what, tok string) {
		t.Helper()
		eventually(t, what, func() error {
			_, err := whoami(ctx, tokenClientset(t, s, tok))
			var se *apierrors.StatusError
			if !errors.As(err, &se) || se.ErrStatus.Code != 401 || se.ErrStatus.Reason != metav1.StatusReasonUnauthorized {
				return errors.New("not a 401 Status: " + errString(err))
			}
			return nil
		})
	}
	for what, tok := range map[string]string{"pod-bound": podToken, "secret-bound": secretToken, "node-bound": nodeToken, "of gone": goneToken, "of robot": recreatedToken} {
		works(what, tok)
	}

	// The pod is deleted and another made under its name: a new UID.
	if err := admin.CoreV1().Pods(ns).Delete(ctx, "p", *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pod p deleted", func() error {
		if _, err := admin.CoreV1().Pods(ns).Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return errors.New("still there: " + errString(err))
		}
		return nil
	})
	if _, err := admin.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: podSpec}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refused("token bound to a pod recreated under its name", podToken)

	if err := admin.CoreV1().Secrets(ns).Delete(ctx, "s", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	refused("token bound to a deleted secret", secretToken)

	if err := admin.CoreV1().Nodes().Delete(ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	refused("token bound to a deleted node", nodeToken)

	if err := admin.CoreV1().ServiceAccounts(ns).Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	refused("token of a deleted service account", goneToken)

	if err := admin.CoreV1().ServiceAccounts(ns).Delete(ctx, "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	refused("token of a service account recreated under its name", recreatedToken)

	// On the wire: the Status kube-apiserver sends, with no detail of why.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.SecureURL()+"/api/v1/namespaces/default/pods", nil)
	req.Header.Set("Authorization", "Bearer "+recreatedToken)
	resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfigFor(t, s)}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var st metav1.Status
	if resp.StatusCode != 401 || json.Unmarshal(body, &st) != nil || st.Kind != "Status" || st.Status != "Failure" ||
		st.Reason != metav1.StatusReasonUnauthorized || st.Code != 401 || st.Message != "Unauthorized" {
		t.Errorf("raw answer to a revoked token: %d %s", resp.StatusCode, body)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
