package admission

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/defaults"
)

// fixtureDir is the Pod Security Standards' test pods that
// k8s.io/pod-security-admission ships (test/testdata/LEVEL/vVERSION/{pass,fail}).
func fixtureDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/pod-security-admission").Output()
	if err != nil {
		t.Fatalf("find k8s.io/pod-security-admission: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "test", "testdata")
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPodSecurityFixturesSurviveOurTypes passes every v1.37 test pod of the
// baseline and restricted standards through minik8s' api.Pod (the JSON
// the apiserver stores and hands to PodSecurity) and back: the pod must
// come back whole, so the checks see every field they read, and its
// verdict must be the fixture's (pass or fail).
func TestPodSecurityFixturesSurviveOurTypes(t *testing.T) {
	t.Parallel()
	dir := fixtureDir(t)
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, level := range []psapi.Level{psapi.LevelBaseline, psapi.LevelRestricted} {
		lv := psapi.LevelVersion{Level: level, Version: psapi.MajorMinorVersion(1, 37)}
		for _, verdict := range []string{"pass", "fail"} {
			files, err := filepath.Glob(filepath.Join(dir, string(level), "v1.37", verdict, "*.yaml"))
			if err != nil || len(files) == 0 {
				t.Fatalf("no fixtures for %s %s: %v", level, verdict, err)
			}
			for _, f := range files {
				name := string(level) + "/" + verdict + "/" + filepath.Base(f)
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				var want corev1.Pod
				if err := yaml.UnmarshalStrict(data, &want); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var ours api.Pod
				if err := yaml.Unmarshal(data, &ours); err != nil {
					t.Fatalf("%s: decode as api.Pod: %v", name, err)
				}
				// The apiserver defaults a volume without a source to an
				// emptyDir before admission, as kube's v1 defaulting does
				// (restrictedvolumes0 has one).
				for i := range want.Spec.Volumes {
					if reflect.DeepEqual(want.Spec.Volumes[i].VolumeSource, corev1.VolumeSource{}) {
						want.Spec.Volumes[i].EmptyDir = &corev1.EmptyDirVolumeSource{}
					}
				}
				for i := range ours.Spec.Volumes {
					if v := &ours.Spec.Volumes[i].VolumeSource; len(defaults.VolumeSources(v)) == 0 {
						v.EmptyDir = &api.EmptyDirVolumeSource{}
					}
				}
				var got corev1.Pod
				if err := convertJSON(&ours, &got); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !reflect.DeepEqual(got, want) {
					wj, _ := json.Marshal(want)
					gj, _ := json.Marshal(got)
					t.Errorf("%s: api.Pod loses fields:\nkube:    %s\nminik8s: %s", name, wj, gj)
				}
				res := policy.AggregateCheckResults(evaluator.EvaluatePod(lv, &got.ObjectMeta, &got.Spec))
				if res.Allowed != (verdict == "pass") {
					t.Errorf("%s: allowed %v through api.Pod: %s", name, res.Allowed, res.ForbiddenDetail())
				}
				n++
			}
		}
	}
	t.Logf("%d fixtures", n)
}
