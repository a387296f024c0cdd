package integration

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
	"github.com/minik8s/minik8s/apiserver/app"
)

// TestAuditLogTracesADenial checks a 403 can be traced in the audit log:
// user, verb, resource, namespace, name and code.
func TestAuditLogTracesADenial(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "audit.log")
	s := apiservertest.Start(t, apiservertest.WithTLS, func(o *app.Options) { o.AuditLogPath = logPath })
	mallory := userClient(t, s, "mallory")
	if got := send(t, mallory, "DELETE", s.SecureURL()+"/api/v1/namespaces/default/configmaps/x", "", ""); got != 403 {
		t.Fatalf("mallory delete = %d", got)
	}
	type event struct {
		Verb string `json:"verb"`
		User struct {
			Username string `json:"username"`
		} `json:"user"`
		ObjectRef struct {
			Resource, Namespace, Name string
		} `json:"objectRef"`
		ResponseStatus struct {
			Code int `json:"code"`
		} `json:"responseStatus"`
	}
	waitFor(t, 5*time.Second, func() bool {
		f, err := os.Open(logPath)
		if err != nil {
			return false
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var ev event
			if json.Unmarshal(sc.Bytes(), &ev) != nil {
				t.Fatalf("audit line is not JSON: %q", sc.Bytes())
			}
			if ev.User.Username == "mallory" && ev.Verb == "delete" && ev.ObjectRef.Resource == "configmaps" &&
				ev.ObjectRef.Namespace == "default" && ev.ObjectRef.Name == "x" && ev.ResponseStatus.Code == 403 {
				return true
			}
		}
		return false
	})
}
