package crd

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kfield "k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/field"
)

// toV1 reads a CRD as the library's v1 type.
func toV1(crd *api.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := json.Marshal(crd)
	if err != nil {
		return nil, err
	}
	out := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("read CustomResourceDefinition: %w", err)
	}
	return out, nil
}

// fromV1 writes the library's v1 CRD back into crd.
func fromV1(in *apiextensionsv1.CustomResourceDefinition, crd *api.CustomResourceDefinition) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	*crd = api.CustomResourceDefinition{}
	return json.Unmarshal(data, crd)
}

// toInternal reads a CRD as the library's internal type, which its
// validation and schema packages work on.
func toInternal(crd *api.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	v1, err := toV1(crd)
	if err != nil {
		return nil, err
	}
	return v1ToInternal(v1)
}

func v1ToInternal(v1 *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	out := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(v1, out, nil); err != nil {
		return nil, fmt.Errorf("convert CustomResourceDefinition: %w", err)
	}
	return out, nil
}

// fieldErrors turns the library's field errors into ours, keeping each
// message exactly as Kubernetes writes it.
func fieldErrors(errs kfield.ErrorList) field.ErrorList {
	if len(errs) == 0 {
		return nil
	}
	out := make(field.ErrorList, 0, len(errs))
	for _, e := range errs {
		t := field.ErrorType(e.Type)
		body := e.ErrorBody()
		detail := strings.TrimPrefix(strings.TrimPrefix(body, e.Type.String()), ": ")
		out = append(out, &field.Error{Type: t, Field: e.Field, BadValue: field.OmitValue, Detail: detail})
	}
	return out
}
