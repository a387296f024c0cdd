package registry

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/apiserver/fieldvalidation"
)

// fieldErrors returns the unknown and duplicate fields of obj, a JSON
// object of the store's kind, in kube-apiserver's order: a custom
// resource's duplicates, then the fields its schema does not know; a
// built-in kind's as Kubernetes' own type for it finds them.
func (s *Store) fieldErrors(obj []byte) []error {
	if f, ok := s.strategy.(UnknownFieldFinder); ok {
		m, errs, err := fieldvalidation.Object(obj)
		if err != nil {
			return nil // not an object: its decoding reports it
		}
		for _, p := range f.UnknownFields(m) {
			errs = append(errs, fmt.Errorf(`unknown field "%s"`, p))
		}
		return errs
	}
	errs, err := fieldvalidation.Typed(s.Info.Group, s.Info.Version, s.Info.Kind, obj)
	if err != nil {
		slog.Warn("fields not validated", "resource", s.GR, "err", err)
	}
	return errs
}

// CheckBody answers fieldValidation (directive) for the body of a create
// or update of the store's kind: body is its JSON, yamlBody the YAML it
// was sent as, if it was. Strict refuses unknown and duplicate fields with
// kube-apiserver's 400 ("Deployment in version "v1" cannot be handled as
// a Deployment: strict decoding error: unknown field "spec.foo""), Warn
// returns a Warning header for each.
func (s *Store) CheckBody(ctx context.Context, directive string, body, yamlBody []byte) error {
	if !fieldvalidation.Checks(directive) {
		return nil
	}
	var errs []error
	if yamlBody != nil {
		errs = fieldvalidation.YAML(yamlBody)
	}
	errs = append(errs, s.fieldErrors(body)...)
	return fieldvalidation.Answer(ctx, directive, errs, fieldvalidation.BodyRefusal(s.Info.Kind, s.Info.Version))
}

// patchFieldCheck prepares fieldValidation for a JSON, merge or
// strategic merge patch: the patch's own duplicate (and, for a JSON
// patch, unknown) members come first; the returned function adds the
// unknown fields of the patched object and answers as kube-apiserver
// does, refusing in Strict with a 422 whose value is the patched object
// (the patch, for a strategic merge patch). It returns nil with Ignore.
func (s *Store) patchFieldCheck(pt PatchType, patch []byte, directive string) (func(ctx context.Context, patched []byte) error, error) {
	if !fieldvalidation.Checks(directive) {
		return nil, nil
	}
	var pre []error
	var patchMap map[string]any
	var err error
	switch pt {
	case JSONPatch:
		if pre, err = fieldvalidation.JSONPatch(patch); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
	case MergePatch:
		if _, pre, err = fieldvalidation.Object(patch); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
	case StrategicPatch:
		if patchMap, pre, err = fieldvalidation.Object(patch); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	return func(ctx context.Context, patched []byte) error {
		errs := append([]error(nil), pre...)
		value := string(patched)
		switch f, custom := s.strategy.(UnknownFieldFinder); {
		case custom:
			if m, _, err := fieldvalidation.Object(patched); err == nil {
				for _, p := range f.UnknownFields(m) {
					errs = append(errs, fmt.Errorf(`unknown field "%s"`, p))
				}
			}
		case pt == StrategicPatch:
			value = fmt.Sprintf("%+v", patchMap)
			if m, _, err := fieldvalidation.Object(patched); err == nil {
				more, _ := fieldvalidation.TypedMap(s.Info.Group, s.Info.Version, s.Info.Kind, m)
				errs = append(errs, more...)
			}
		default:
			more, _ := fieldvalidation.TypedPatched(s.Info.Group, s.Info.Version, s.Info.Kind, patched)
			errs = append(errs, more...)
		}
		return fieldvalidation.Answer(ctx, directive, errs, func(msg string) error {
			return apierrors.NewInvalid(apierrors.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), value, msg)})
		})
	}, nil
}

// applyFieldCheck prepares fieldValidation for an apply: kube-apiserver
// checks the configuration for duplicate keys once the apply succeeded,
// refusing in Strict with a 400 "error strict decoding patch: ...". It
// returns nil when there is nothing to report.
func applyFieldCheck(patch []byte, directive string) func(ctx context.Context) error {
	if !fieldvalidation.Checks(directive) {
		return nil
	}
	strictErr := fieldvalidation.ApplyPatch(patch)
	if strictErr == nil {
		return nil
	}
	return func(ctx context.Context) error {
		return fieldvalidation.Answer(ctx, directive, []error{strictErr}, func(string) error {
			return apierrors.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", strictErr))
		})
	}
}
