package apierrors

import (
	"errors"
	"fmt"
	"testing"

	"github.com/minik8s/minik8s/api/field"
)

func TestMessagesAndPredicates(t *testing.T) {
	t.Parallel()
	pods := GroupResource{Resource: "pods"}
	deploys := GroupResource{Group: "apps", Resource: "deployments"}
	cases := []struct {
		name string
		err  *StatusError
		code int32
		msg  string
		is   func(error) bool
	}{
		{"notfound", NewNotFound(pods, "x"), 404, `pods "x" not found`, IsNotFound},
		{"notfound-group", NewNotFound(deploys, "web"), 404, `deployments.apps "web" not found`, IsNotFound},
		{"exists", NewAlreadyExists(pods, "x"), 409, `pods "x" already exists`, IsAlreadyExists},
		{"conflict", NewConflict(pods, "x", errors.New(OptimisticLockErrorMsg)), 409,
			`Operation cannot be fulfilled on pods "x": ` + OptimisticLockErrorMsg, IsConflict},
		{"invalid", NewInvalid(GroupKind{Kind: "Pod"}, "x", field.ErrorList{field.Required(field.NewPath("spec", "containers"), "")}),
			422, `Pod "x" is invalid: spec.containers: Required value`, IsInvalid},
		{"expired", NewResourceExpired("too old resource version: 1 (5)"), 410, "too old resource version: 1 (5)", IsGone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err.ErrStatus.Code != c.code || c.err.Error() != c.msg {
				t.Fatalf("got %d %q, want %d %q", c.err.ErrStatus.Code, c.err.Error(), c.code, c.msg)
			}
			wrapped := fmt.Errorf("op: %w", c.err)
			if !c.is(wrapped) {
				t.Fatalf("predicate false for wrapped %v", wrapped)
			}
		})
	}
	if IsNotFound(NewAlreadyExists(pods, "x")) || IsConflict(NewAlreadyExists(pods, "x")) {
		t.Fatal("AlreadyExists must not read as NotFound or Conflict")
	}
	inv := NewInvalid(GroupKind{Kind: "Pod"}, "x", field.ErrorList{
		field.Required(field.NewPath("spec", "containers").Index(0).Child("image"), ""),
		field.Invalid(field.NewPath("metadata", "name"), "A", "bad"),
	})
	if len(inv.ErrStatus.Details.Causes) != 2 || inv.ErrStatus.Details.Causes[0].Field != "spec.containers[0].image" {
		t.Fatalf("causes = %+v", inv.ErrStatus.Details.Causes)
	}
}
