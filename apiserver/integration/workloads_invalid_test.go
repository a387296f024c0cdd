package integration

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/minik8s/minik8s/apiserver/apiservertest"
)

// cause is one entry of a Status' details.causes.
type cause struct{ field, message string }

// wantInvalid checks that err is kube-apiserver's 422 for kind/name with
// exactly these causes, in order, and the aggregated message it builds
// from them.
func wantInvalid(t *testing.T, what string, err error, kind, name string, want ...cause) {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Errorf("%s: %v, want a 422 Status", what, err)
		return
	}
	st := se.ErrStatus
	if st.Code != 422 || st.Reason != metav1.StatusReasonInvalid || st.Details == nil || st.Details.Name != name || st.Details.Kind != strings.Split(kind, ".")[0] {
		t.Errorf("%s: status %d %s details %+v, want 422 Invalid for %s %q", what, st.Code, st.Reason, st.Details, kind, name)
		return
	}
	var got []cause
	var parts []string
	for _, c := range st.Details.Causes {
		got = append(got, cause{c.Field, c.Message})
		parts = append(parts, c.Field+": "+c.Message)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: causes\n got %q\nwant %q", what, got, want)
	}
	msg := strings.Join(parts, ", ")
	if len(parts) > 1 {
		msg = "[" + msg + "]"
	}
	if wantMsg := kind + ` "` + name + `" is invalid: ` + msg; st.Message != wantMsg {
		t.Errorf("%s: message %q, want %q", what, st.Message, wantMsg)
	}
}

// TestWorkloadBadInputIsInvalid sends what users get wrong most about
// CronJobs, StatefulSets and DaemonSets through client-go (protobuf, over
// HTTPS, as a certificate-authenticated administrator): each is a 422
// whose causes name the field in kube-apiserver's words (recorded from
// the real kube-apiserver v1.37.2 given the same objects; the
// StatefulSet updates are also sent to it side by side by
// internal/realcomponents' TestStatefulSetUpdatesAsKube), and nothing is
// stored or changed.
func TestWorkloadBadInputIsInvalid(t *testing.T) {
	t.Parallel()
	s := apiservertest.Start(t, apiservertest.WithTLS)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	certPEM, keyPEM, err := s.PKI().CA.IssueClient("admin", []string{"system:masters"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.SecureURL(),
		TLSClientConfig: rest.TLSClientConfig{CAData: s.PKI().CA.CertPEM(), CertData: certPEM, KeyData: keyPEM}})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "default"
	containers := []corev1.Container{{Name: "c", Image: "busybox"}}

	t.Run("CronJob", func(t *testing.T) {
		cronJobs := cs.BatchV1().CronJobs(ns)
		cronJob := func(name, schedule string, tz *string) *batchv1.CronJob {
			return &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: batchv1.CronJobSpec{Schedule: schedule, TimeZone: tz,
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
					Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: containers}}}}}}
		}
		invalid := func(schedule, detail string) cause {
			return cause{"spec.schedule", `Invalid value: "` + schedule + `": ` + detail}
		}
		badTZ := func(tz, detail string) cause {
			return cause{"spec.timeZone", `Invalid value: "` + tz + `": ` + detail}
		}
		const useTimeZone = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
		for i, tc := range []struct {
			schedule string
			tz       *string
			want     []cause
		}{
			{"61 * * * *", nil, []cause{invalid("61 * * * *", "end of range (61) above maximum (59): 61")}},
			{"0 25 * * *", nil, []cause{invalid("0 25 * * *", "end of range (25) above maximum (23): 25")}},
			{"1-70 * * * *", nil, []cause{invalid("1-70 * * * *", "end of range (70) above maximum (59): 1-70")}},
			{"*/0 * * * *", nil, []cause{invalid("*/0 * * * *", "step of range should be a positive number: */0")}},
			{"@every", nil, []cause{invalid("@every", "unrecognized descriptor: @every")}},
			{"* * *", nil, []cause{invalid("* * *", "expected exactly 5 fields, found 3: [* * *]")}},
			{"* * * * * *", nil, []cause{invalid("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]")}},
			{"a b c d e", nil, []cause{invalid("a b c d e", `failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax`)}},
			{"", nil, []cause{{"spec.schedule", "Required value"}}},
			{"TZ=UTC * * * *", nil, []cause{invalid("TZ=UTC * * * *", "expected exactly 5 fields, found 4: [* * * *]"), invalid("TZ=UTC * * * *", useTimeZone)}},
			{"CRON_TZ=Europe/Paris 0 * * *", nil, []cause{invalid("CRON_TZ=Europe/Paris 0 * * *", "expected exactly 5 fields, found 4: [0 * * *]"),
				invalid("CRON_TZ=Europe/Paris 0 * * *", useTimeZone)}},
			{"0 * * * *", new("Mars/Olympus"), []cause{badTZ("Mars/Olympus", "unknown time zone Mars/Olympus")}},
			{"0 * * * *", new("utc"), []cause{badTZ("utc", "unknown time zone utc")}},
			{"0 * * * *", new(""), []cause{badTZ("", "timeZone must be nil or non-empty string")}},
			{"0 * * * *", new("Local"), []cause{badTZ("Local", "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")}},
			{"0 * * * *", new("../etc"), []cause{badTZ("../etc", "unknown time zone ../etc")}},
			{"0 * * * *", new("-x/y"), []cause{badTZ("-x/y", "unknown time zone -x/y")}},
		} {
			name := "bad-" + string(rune('a'+i))
			_, err := cronJobs.Create(ctx, cronJob(name, tc.schedule, tc.tz), metav1.CreateOptions{})
			wantInvalid(t, "schedule "+tc.schedule, err, "CronJob.batch", name, tc.want...)
			if _, err := cronJobs.Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("invalid CronJob %s (%q) was stored: %v", name, tc.schedule, err)
			}
		}
		long := strings.Repeat("a", 53)
		_, err := cronJobs.Create(ctx, cronJob(long, "@hourly", nil), metav1.CreateOptions{})
		wantInvalid(t, "53-character name", err, "CronJob.batch", long, cause{"metadata.name", `Invalid value: "` + long + `": must be no more than 52 characters`})

		// What kube accepts: descriptors with arguments, dates that never
		// come, IANA zones.
		for i, tc := range []struct {
			schedule string
			tz       *string
		}{{"@every 5m", nil}, {"0 0 30 2 *", nil}, {"@yearly", nil}, {"0 9 * * 1-5", new("America/New_York")}, {"0 * * * *", new("UTC")}} {
			if _, err := cronJobs.Create(ctx, cronJob("good-"+string(rune('a'+i)), tc.schedule, tc.tz), metav1.CreateOptions{}); err != nil {
				t.Errorf("schedule %q in %v: %v", tc.schedule, tc.tz, err)
			}
		}

		// An update to a bad schedule or zone changes nothing.
		before, err := cronJobs.Get(ctx, "good-a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		upd := before.DeepCopy()
		upd.Spec.Schedule = "61 * * * *"
		_, err = cronJobs.Update(ctx, upd, metav1.UpdateOptions{})
		wantInvalid(t, "update to 61 * * * *", err, "CronJob.batch", "good-a", invalid("61 * * * *", "end of range (61) above maximum (59): 61"))
		upd = before.DeepCopy()
		upd.Spec.TimeZone = new("Nowhere/Land")
		_, err = cronJobs.Update(ctx, upd, metav1.UpdateOptions{})
		wantInvalid(t, "update to Nowhere/Land", err, "CronJob.batch", "good-a", badTZ("Nowhere/Land", "unknown time zone Nowhere/Land"))
		after, err := cronJobs.Get(ctx, "good-a", metav1.GetOptions{})
		if err != nil || after.ResourceVersion != before.ResourceVersion || after.Spec.Schedule != "@every 5m" || after.Spec.TimeZone != nil {
			t.Errorf("after refused updates: %v rv %s (was %s) schedule %q tz %v", err, after.ResourceVersion, before.ResourceVersion, after.Spec.Schedule, after.Spec.TimeZone)
		}
	})

	t.Run("StatefulSet", func(t *testing.T) {
		sets := cs.AppsV1().StatefulSets(ns)
		set := func(name string, sel *metav1.LabelSelector, labels map[string]string) *appsv1.StatefulSet {
			return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.StatefulSetSpec{ServiceName: "nginx", Selector: sel,
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: containers}}}}
		}
		const mismatch = "`selector` does not match template `labels`"
		for _, tc := range []struct {
			name   string
			sel    *metav1.LabelSelector
			labels map[string]string
			want   []cause
		}{
			{"other-labels", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, map[string]string{"app": "b"},
				[]cause{{"spec.template.metadata.labels", `Invalid value: {"app":"b"}: ` + mismatch}}},
			{"expression", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"x", "y"}}}},
				map[string]string{"app": "z"}, []cause{{"spec.template.metadata.labels", `Invalid value: {"app":"z"}: ` + mismatch}}},
			// No labels: nil (protobuf has no empty map), printed as JSON.
			{"no-labels", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, nil,
				[]cause{{"spec.template.metadata.labels", `Invalid value: null: ` + mismatch}}},
			{"empty-selector", &metav1.LabelSelector{}, map[string]string{"app": "z"},
				[]cause{{"spec.selector", `Invalid value: {}: empty selector is invalid for statefulset`}}},
			{"no-selector", nil, map[string]string{"app": "a"},
				[]cause{{"spec.selector", "Required value"}, {"spec.template.metadata.labels", `Invalid value: {"app":"a"}: ` + mismatch}}},
		} {
			_, err := sets.Create(ctx, set(tc.name, tc.sel, tc.labels), metav1.CreateOptions{})
			wantInvalid(t, tc.name, err, "StatefulSet.apps", tc.name, tc.want...)
			if _, err := sets.Get(ctx, tc.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("invalid StatefulSet %s was stored: %v", tc.name, err)
			}
		}

		before, err := sets.Create(ctx, set("web", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, map[string]string{"app": "a"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			what   string
			change func(*appsv1.StatefulSet)
			want   cause
		}{
			{"selector", func(s *appsv1.StatefulSet) {
				s.Spec.Selector.MatchLabels["app"] = "x"
				s.Spec.Template.Labels["app"] = "x"
			}, cause{"spec.selector", `Invalid value: {"matchLabels":{"app":"x"}}: field is immutable`}},
			{"template labels", func(s *appsv1.StatefulSet) { s.Spec.Template.Labels["app"] = "x" },
				cause{"spec.template.metadata.labels", `Invalid value: {"app":"x"}: ` + mismatch}},
			{"serviceName", func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "y" }, cause{"spec.serviceName", `Invalid value: "y": field is immutable`}},
			{"podManagementPolicy", func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement },
				cause{"spec.podManagementPolicy", `Invalid value: "Parallel": field is immutable`}},
			// kube prints the templates as its internal claims (JSON with
			// Go's field names), defaults applied.
			{"volumeClaimTemplates", func(s *appsv1.StatefulSet) {
				s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
					Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}
			}, cause{"spec.volumeClaimTemplates", `Invalid value: [{"name":"data","Spec":{"AccessModes":["ReadWriteOnce"],"Selector":null,` +
				`"Resources":{"Limits":null,"Requests":{"storage":"1Gi"}},"VolumeName":"","StorageClassName":null,"VolumeMode":"Filesystem",` +
				`"DataSource":null,"DataSourceRef":null,"VolumeAttributesClassName":null},"Status":{"Phase":"Pending","AccessModes":null,` +
				`"Capacity":null,"Conditions":null,"AllocatedResources":null,"AllocatedResourceStatuses":null,"CurrentVolumeAttributesClassName":null,` +
				`"ModifyVolumeStatus":null,"HealthStatus":null}}]: field is immutable`}},
		} {
			upd := before.DeepCopy()
			tc.change(upd)
			_, err := sets.Update(ctx, upd, metav1.UpdateOptions{})
			wantInvalid(t, "update of "+tc.what, err, "StatefulSet.apps", "web", tc.want)
		}
		if after, err := sets.Get(ctx, "web", metav1.GetOptions{}); err != nil || after.ResourceVersion != before.ResourceVersion {
			t.Errorf("after refused updates: %v, resourceVersion %s (was %s)", err, after.ResourceVersion, before.ResourceVersion)
		}
		// What kube lets change: replicas, the template, minReadySeconds,
		// the claims' retention policy.
		upd := before.DeepCopy()
		upd.Spec.Replicas = new(int32(4))
		upd.Spec.Template.Spec.Containers[0].Image = "busybox:2"
		upd.Spec.MinReadySeconds = 10
		upd.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType}
		got, err := sets.Update(ctx, upd, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("allowed update: %v", err)
		}
		if *got.Spec.Replicas != 4 || got.Spec.Template.Spec.Containers[0].Image != "busybox:2" || got.Spec.MinReadySeconds != 10 ||
			got.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted != appsv1.DeletePersistentVolumeClaimRetentionPolicyType || got.Generation != before.Generation+1 {
			t.Errorf("after the allowed update: %+v", got.Spec)
		}
	})

	t.Run("DaemonSet", func(t *testing.T) {
		daemons := cs.AppsV1().DaemonSets(ns)
		ds := func(name string, sel *metav1.LabelSelector, labels map[string]string) *appsv1.DaemonSet {
			return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DaemonSetSpec{Selector: sel,
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: containers}}}}
		}
		for _, tc := range []struct {
			name   string
			sel    *metav1.LabelSelector
			labels map[string]string
			want   cause
		}{
			{"other-labels", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, map[string]string{"app": "b"},
				cause{"spec.template.metadata.labels", "Invalid value: {\"app\":\"b\"}: `selector` does not match template `labels`"}},
			{"no-selector", nil, map[string]string{"app": "a"},
				cause{"spec.template.metadata.labels", "Invalid value: {\"app\":\"a\"}: `selector` does not match template `labels`"}},
			{"empty-selector", &metav1.LabelSelector{}, map[string]string{"app": "a"},
				cause{"spec.selector", "Invalid value: {}: empty selector is invalid for daemonset"}},
		} {
			_, err := daemons.Create(ctx, ds(tc.name, tc.sel, tc.labels), metav1.CreateOptions{})
			wantInvalid(t, tc.name, err, "DaemonSet.apps", tc.name, tc.want)
			if _, err := daemons.Get(ctx, tc.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("invalid DaemonSet %s was stored: %v", tc.name, err)
			}
		}

		before, err := daemons.Create(ctx, ds("agent", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, map[string]string{"app": "a"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// spec.selector is immutable: changed (with labels to match), or
		// narrowed by one more label.
		upd := before.DeepCopy()
		upd.Spec.Selector.MatchLabels["app"] = "x"
		upd.Spec.Template.Labels["app"] = "x"
		_, err = daemons.Update(ctx, upd, metav1.UpdateOptions{})
		wantInvalid(t, "selector changed", err, "DaemonSet.apps", "agent", cause{"spec.selector", `Invalid value: {"matchLabels":{"app":"x"}}: field is immutable`})
		upd = before.DeepCopy()
		upd.Spec.Selector.MatchLabels["tier"] = "x"
		upd.Spec.Template.Labels["tier"] = "x"
		_, err = daemons.Update(ctx, upd, metav1.UpdateOptions{})
		wantInvalid(t, "selector narrowed", err, "DaemonSet.apps", "agent", cause{"spec.selector", `Invalid value: {"matchLabels":{"app":"a","tier":"x"}}: field is immutable`})
		_, err = daemons.Patch(ctx, "agent", "application/merge-patch+json", []byte(`{"spec":{"selector":{"matchLabels":{"app":"y"}},"template":{"metadata":{"labels":{"app":"y"}}}}}`), metav1.PatchOptions{})
		wantInvalid(t, "selector patched", err, "DaemonSet.apps", "agent", cause{"spec.selector", `Invalid value: {"matchLabels":{"app":"y"}}: field is immutable`})
		after, err := daemons.Get(ctx, "agent", metav1.GetOptions{})
		if err != nil || after.ResourceVersion != before.ResourceVersion || !reflect.DeepEqual(after.Spec.Selector, before.Spec.Selector) || after.Generation != before.Generation {
			t.Errorf("after refused updates: %v, resourceVersion %s (was %s), selector %v", err, after.ResourceVersion, before.ResourceVersion, after.Spec.Selector)
		}
	})
}
