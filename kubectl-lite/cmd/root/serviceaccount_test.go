package root_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// TestIntegrationCreateServiceAccountAndToken covers "create serviceaccount"
// and "create token": the printed token works as a bearer token, and
// kubectl's flag checks and error words.
func TestIntegrationCreateServiceAccountAndToken(t *testing.T) {
	c := startTLSCluster(t)
	if out := c.mustRun("", "create", "serviceaccount", "robot"); out != "serviceaccount/robot created\n" {
		t.Errorf("create serviceaccount = %q", out)
	}
	if out := c.mustRun("", "create", "sa", "other", "--dry-run=client", "-o", "name"); out != "serviceaccount/other\n" {
		t.Errorf("create sa --dry-run=client -o name = %q", out)
	}

	tok := c.mustRun("", "create", "token", "robot", "--duration=2h", "--audience=https://kubernetes.default.svc.cluster.local", "--audience=vault")
	if strings.ContainsAny(tok, "\n ") {
		t.Errorf("token printed with whitespace (not a terminal): %q", tok)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Sub string   `json:"sub"`
		Aud []string `json:"aud"`
		Exp int64    `json:"exp"`
		Iat int64    `json:"iat"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	if claims.Sub != "system:serviceaccount:default:robot" || claims.Exp-claims.Iat != 7200 ||
		strings.Join(claims.Aud, ",") != "https://kubernetes.default.svc.cluster.local,vault" {
		t.Errorf("claims = %+v", claims)
	}
	if out := c.mustRun("", "--token", tok, "auth", "whoami", "-o", "json"); !strings.Contains(out, `"username": "system:serviceaccount:default:robot"`) {
		t.Errorf("whoami with the token = %q", out)
	}
	var tr struct {
		Kind string `json:"kind"`
		Spec struct {
			Audiences         []string `json:"audiences"`
			ExpirationSeconds int64    `json:"expirationSeconds"`
		} `json:"spec"`
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(c.mustRun("", "create", "token", "robot", "-o", "json")), &tr); err != nil {
		t.Fatal(err)
	}
	if tr.Kind != "TokenRequest" || tr.Spec.ExpirationSeconds != 3600 || strings.Join(tr.Spec.Audiences, ",") != "https://kubernetes.default.svc.cluster.local" || tr.Status.Token == "" {
		t.Errorf("create token -o json = %+v", tr)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nobody"}, `error: failed to create token: serviceaccounts "nobody" not found`},
		{[]string{"robot", "--duration=-1s"}, "error: --duration must be greater than or equal to 0"},
		{[]string{"robot", "--duration=1500ms"}, "error: --duration cannot be expressed in units less than seconds"},
		{[]string{"robot", "--duration=1m"}, `error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`},
		{[]string{"robot", "--audience="}, "error: --audience must not be an empty string"},
		{[]string{"robot", "--bound-object-name=x"}, "error: --bound-object-name can only be set if --bound-object-kind is provided"},
		{[]string{"robot", "--bound-object-uid=x"}, "error: --bound-object-uid can only be set if --bound-object-kind is provided"},
		{[]string{"robot", "--bound-object-kind=ConfigMap", "--bound-object-name=x"}, "error: supported --bound-object-kind values are Node, Pod, Secret"},
		{[]string{"robot", "--bound-object-kind=Pod"}, "error: --bound-object-name is required if --bound-object-kind is provided"},
		{[]string{"robot", "--bound-object-kind=Secret", "--bound-object-name=missing"}, `error: failed to create token: secrets "missing" not found`},
	} {
		c.wantFail(tc.want, append([]string{"create", "token"}, tc.args...)...)
	}
}
