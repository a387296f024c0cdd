package api

import "testing"

func TestEqualIgnoreHash(t *testing.T) {
	t.Parallel()
	tmpl := func(labels map[string]string, image string) *PodTemplateSpec {
		return &PodTemplateSpec{ObjectMeta: ObjectMeta{Labels: labels},
			Spec: PodSpec{Containers: []Container{{Name: "c", Image: image}}}}
	}
	cases := []struct {
		name string
		a, b *PodTemplateSpec
		want bool
	}{
		{"hash only", tmpl(map[string]string{"app": "web"}, "web:1"),
			tmpl(map[string]string{"app": "web", DefaultDeploymentUniqueLabelKey: "abc"}, "web:1"), true},
		{"hash the only label", tmpl(nil, "web:1"), tmpl(map[string]string{DefaultDeploymentUniqueLabelKey: "abc"}, "web:1"), true},
		{"empty and nil labels", tmpl(map[string]string{}, "web:1"), tmpl(nil, "web:1"), true},
		{"other label", tmpl(map[string]string{"app": "web"}, "web:1"), tmpl(map[string]string{"app": "api"}, "web:1"), false},
		{"image", tmpl(nil, "web:1"), tmpl(nil, "web:2"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := len(c.b.Labels)
			if got := EqualIgnoreHash(c.a, c.b); got != c.want {
				t.Fatalf("EqualIgnoreHash = %v, want %v", got, c.want)
			}
			if len(c.b.Labels) != before {
				t.Fatal("EqualIgnoreHash changed its argument")
			}
		})
	}
}

func TestSkipCopyAnnotation(t *testing.T) {
	t.Parallel()
	for _, k := range []string{LastAppliedConfigAnnotation, RevisionAnnotation, RevisionHistoryAnnotation,
		DesiredReplicasAnnotation, MaxReplicasAnnotation, DeprecatedRollbackToAnnotation} {
		if !SkipCopyAnnotation(k) {
			t.Errorf("%s is the Deployment's own", k)
		}
	}
	for _, k := range []string{ChangeCauseAnnotation, "team"} {
		if SkipCopyAnnotation(k) {
			t.Errorf("%s is copied to ReplicaSets", k)
		}
	}
}
