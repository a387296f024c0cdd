package field

import "testing"

func TestPathAndMessages(t *testing.T) {
	t.Parallel()
	p := NewPath("spec").Child("containers").Index(0).Child("image")
	if got := p.String(); got != "spec.containers[0].image" {
		t.Fatalf("path = %q", got)
	}
	if got := NewPath("metadata", "labels").Key("a/b").String(); got != "metadata.labels[a/b]" {
		t.Fatalf("key path = %q", got)
	}
	cases := []struct {
		err  *Error
		want string
	}{
		{Required(p, ""), "spec.containers[0].image: Required value"},
		{Invalid(NewPath("metadata", "name"), "Bad_Name", "a lowercase RFC 1123 subdomain"),
			`metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain`},
		{NotSupported(NewPath("spec", "restartPolicy"), "Sometimes", []string{"Always", "Never"}),
			`spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "Never"`},
		{Forbidden(NewPath("spec"), "pod updates may not change fields other than `spec.containers[*].image`"),
			"spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q\nwant %q", got, c.want)
		}
	}
	l := ErrorList{cases[0].err, cases[1].err}
	if got := l.ToAggregate(); got[0] != '[' {
		t.Errorf("aggregate = %q", got)
	}
}
