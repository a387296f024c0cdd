package fieldmanager_test

import (
	"errors"
	"testing"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// FuzzApplyPatch: no apply body makes the apply path (YAML decoding, the
// schema's typing, the merge into a live object with another manager's
// fields) panic; every failure is a Status with one of the codes
// kube-apiserver answers apply with, and every success is an object of the
// kind with the applier's entry.
func FuzzApplyPatch(f *testing.F) {
	for _, seed := range []string{
		deployYAML,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"a":"b"}},"spec":{"replicas":1}}`,
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - {name: a, image: x}\n      - {name: a, image: y}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - {image: x, ports: [{protocol: UDP}]}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, managedFields: []}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1.5, paused: yes, minReadySeconds: \"3\"}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, resourceVersion: \"7\", uid: u}\nstatus: {replicas: 2}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"1\"}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {bogus: 1}\n",
		"- a\n- b\n",
		"null",
		"",
		"kind: [",
		"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\"},\"spec\":{\"replicas\":1e400}}",
		"&a [*a]",
	} {
		f.Add([]byte(seed))
	}
	k := kind(f, "Deployment")
	live, err := k.Apply(nil, []byte(deployYAML), "owner", "", false)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cur := range []api.Object{nil, api.DeepCopyObject(live)} {
			out, err := k.Apply(cur, data, "fuzzer", "", false)
			if err != nil {
				var se *apierrors.StatusError
				if !errors.As(err, &se) {
					t.Fatalf("%q: not a Status: %v", data, err)
				}
				switch se.ErrStatus.Code {
				case 400, 409, 500:
				default:
					t.Fatalf("%q: unexpected code %d: %v", data, se.ErrStatus.Code, err)
				}
				continue
			}
			d, ok := out.(*api.Deployment)
			if !ok {
				t.Fatalf("%q: applied a %T", data, out)
			}
			if len(d.ManagedFields) > 0 && d.ManagedFields[0].Manager == "" {
				t.Fatalf("%q: entry without a manager: %+v", data, d.ManagedFields)
			}
		}
	})
}
