package protobuf

import (
	"encoding/json"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestSecurityContextSurvivesProtobuf: a pod sent as protobuf (client-go's
// default) keeps every securityContext field and the in-tree volume
// sources PodSecurity reads once decoded into api.Pod and encoded again.
func TestSecurityContextSurvivesProtobuf(t *testing.T) {
	t.Parallel()
	const in = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"default"},
"spec":{"hostUsers":false,
"securityContext":{"seLinuxOptions":{"user":"u","role":"r","type":"t","level":"s0"},
 "windowsOptions":{"gmsaCredentialSpecName":"g","gmsaCredentialSpec":"{}","runAsUserName":"a","hostProcess":false},
 "runAsNonRoot":true,"supplementalGroupsPolicy":"Strict","fsGroupChangePolicy":"OnRootMismatch",
 "seccompProfile":{"type":"RuntimeDefault"},"appArmorProfile":{"type":"Localhost","localhostProfile":"p"},"seLinuxChangePolicy":"MountOption"},
"volumes":[{"name":"d","gcePersistentDisk":{"pdName":"x"}},{"name":"s","scaleIO":{"gateway":"g","system":"s","secretRef":{"name":"n"}}}],
"containers":[{"name":"c","image":"busybox","resources":{},
 "securityContext":{"seLinuxOptions":{"type":"spc_t"},"windowsOptions":{"hostProcess":true},"procMount":"Unmasked",
  "appArmorProfile":{"type":"Unconfined"},"allowPrivilegeEscalation":false}}]}
}`
	wire, err := Encode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	decoded, _, err := Decode(wire)
	if err != nil {
		t.Fatal(err)
	}
	var pod api.Pod
	if err := json.Unmarshal(decoded, &pod); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(&pod)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, []byte(in), out)
}
