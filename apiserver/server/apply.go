package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/apiserver/authz"
	"github.com/minik8s/minik8s/apiserver/fieldvalidation"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
)

// fieldManagerMaxLength is the longest manager name Kubernetes accepts.
const fieldManagerMaxLength = 128

// writeOptions are the query options of a create, update or patch whose
// field manager and force kube-apiserver checks (ValidateCreateOptions,
// ValidateUpdateOptions, ValidatePatchOptions): options is "CreateOptions",
// "UpdateOptions" or "PatchOptions", apply tells an apply patch.
type writeOptions struct {
	registry.WriteOptions
	force bool
}

func parseWriteOptions(r *http.Request, options string, apply bool) (writeOptions, error) {
	var o writeOptions
	dry, err := dryRun(r)
	if err != nil {
		return o, err
	}
	o.DryRun = dry
	q := r.URL.Query()
	manager := q.Get("fieldManager")
	var errs field.ErrorList
	forceSet := q.Has("force")
	if forceSet {
		if o.force, err = strconv.ParseBool(q.Get("force")); err != nil {
			return o, apierrors.NewBadRequest(fmt.Sprintf("force: %v", err))
		}
	}
	fp := field.NewPath("fieldManager")
	switch {
	case apply && manager == "":
		// kubectl defaults it to "kubectl"; controllers must set it.
		errs = append(errs, field.Required(fp, "is required for apply patch"))
	case !apply && forceSet && options == "PatchOptions":
		errs = append(errs, field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch"))
	}
	if v := q.Get("fieldValidation"); slices.Contains(fieldvalidation.Supported, v) {
		o.FieldValidation = v
	} else {
		errs = append(errs, field.NotSupported(field.NewPath("fieldValidation"), v, fieldvalidation.Supported))
	}
	if len(manager) > fieldManagerMaxLength {
		errs = append(errs, field.TooLong(fp, "", fieldManagerMaxLength))
	}
	for i, c := range manager {
		if !unicode.IsPrint(c) {
			errs = append(errs, field.Invalid(fp, manager, fmt.Sprintf("invalid character %#U (at position %d)", c, i)))
		}
	}
	if len(errs) > 0 {
		return o, apierrors.NewInvalid(apierrors.GroupKind{Group: "meta.k8s.io", Kind: options}, "", errs)
	}
	o.FieldManager = managerOrUserAgent(manager, r.UserAgent())
	return o, nil
}

// managerOrUserAgent is the manager a write is recorded under: the
// fieldManager asked for, or else what precedes the first "/" of the
// User-Agent ("kubectl", "kube-controller-manager"), printable characters
// only, cut at the length limit — kube-apiserver's rule.
func managerOrUserAgent(manager, userAgent string) string {
	if manager != "" {
		return manager
	}
	prefix, _, _ := strings.Cut(userAgent, "/")
	var b strings.Builder
	for _, c := range prefix {
		if !unicode.IsPrint(c) {
			continue
		}
		if b.Len()+utf8.RuneLen(c) > fieldManagerMaxLength {
			break
		}
		b.WriteRune(c)
	}
	return b.String()
}

// applyCreateCheck is the check of an apply that creates its object: the
// user must be allowed to create it too, and is refused as kube-apiserver
// refuses (403 with the authorizer's reason).
func (s *Server) applyCreateCheck(info *request.Info) func(context.Context) error {
	return func(ctx context.Context) error {
		user, ok := request.UserFrom(ctx)
		if !ok {
			return apierrors.NewInternalError(errors.New("no User found in the context"))
		}
		attrs := authz.AttributesFrom(info, user)
		attrs.Verb = "create"
		decision, reason, err := s.cfg.Authorizer.Authorize(ctx, attrs)
		if decision == authz.Allow {
			return nil
		}
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		return apierrors.NewForbidden(apierrors.GroupResource{Group: attrs.APIGroup, Resource: attrs.Resource}, attrs.Name, errors.New(reason))
	}
}
