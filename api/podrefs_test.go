package api

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestVisitPodReferences(t *testing.T) {
	t.Parallel()
	var pod Pod
	if err := json.Unmarshal([]byte(`{
	  "metadata": {"name": "p", "namespace": "ns"},
	  "spec": {
	    "imagePullSecrets": [{"name": "pull"}],
	    "initContainers": [{"name": "init", "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "init-env", "key": "k"}}}]}],
	    "containers": [{
	      "name": "c",
	      "envFrom": [{"secretRef": {"name": "env-from"}}, {"configMapRef": {"name": "cm-env-from"}}],
	      "env": [{"name": "B", "valueFrom": {"configMapKeyRef": {"name": "cm-env", "key": "k"}}}, {"name": "C", "value": "plain"}]
	    }],
	    "ephemeralContainers": [{"name": "debug", "envFrom": [{"secretRef": {"name": "debug-env"}}, {"configMapRef": {"name": "cm-debug"}}]}],
	    "volumes": [
	      {"name": "s", "secret": {"secretName": "vol"}},
	      {"name": "m", "configMap": {"name": "cm-vol"}},
	      {"name": "p", "projected": {"sources": [{"secret": {"name": "proj"}}, {"configMap": {"name": "cm-proj"}}, {"serviceAccountToken": {"path": "t"}}]}},
	      {"name": "csi", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "csi"}}},
	      {"name": "rbd", "rbd": {"monitors": ["m"], "image": "i", "secretRef": {"name": "rbd"}}},
	      {"name": "e", "emptyDir": {}}
	    ]
	  }
	}`), &pod); err != nil {
		t.Fatal(err)
	}
	var secrets, configMaps []string
	VisitPodSecretNames(&pod, func(n string) bool { secrets = append(secrets, n); return true })
	VisitPodConfigMapNames(&pod, func(n string) bool { configMaps = append(configMaps, n); return true })
	slices.Sort(secrets)
	slices.Sort(configMaps)
	if want := []string{"csi", "debug-env", "env-from", "init-env", "proj", "pull", "rbd", "vol"}; !slices.Equal(secrets, want) {
		t.Errorf("secrets = %q, want %q", secrets, want)
	}
	if want := []string{"cm-debug", "cm-env", "cm-env-from", "cm-proj", "cm-vol"}; !slices.Equal(configMaps, want) {
		t.Errorf("config maps = %q, want %q", configMaps, want)
	}
	// Visiting stops when asked to.
	n := 0
	if VisitPodSecretNames(&pod, func(string) bool { n++; return n < 2 }) || n != 2 {
		t.Errorf("visit did not stop after the second name (%d)", n)
	}
}
