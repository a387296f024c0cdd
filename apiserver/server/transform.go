package server

import (
	"net/http"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/apiserver/transform"
)

// transformTarget is the transformation target an Accept clause names
// (as=Kind;g=Group;v=Version).
func transformTarget(c *groupVersionKind) transform.Target {
	return transform.Target{Group: c.group, Version: c.version, Kind: c.kind}
}

// scaleInfo is the scale subresource's kind (autoscaling/v1 Scale), for
// its tables.
var scaleInfo = api.ResourceInfo{Group: "autoscaling", Version: "v1", Kind: "Scale", Resource: "scale",
	New: func() api.Object { return &api.Scale{} }}

// converter is what the request's Accept asks the answer be turned into
// (a Table, PartialObjectMetadata), nil for the resource itself. A bad
// table option (includeObject) is the error.
func converter(r *http.Request, info api.ResourceInfo) (*transform.Converter, error) {
	out, err := negotiateOutput(r)
	if err != nil || out.convert == nil {
		return nil, err
	}
	return transform.New(transformTarget(out.convert), info, r.URL.Query())
}

// writeObject writes obj with code, as itself or in the shape the request
// asked for (conv, from converter). data is obj's JSON when at hand.
func writeObject(w http.ResponseWriter, r *http.Request, code int, conv *transform.Converter, obj api.Object, data []byte) {
	if conv == nil {
		if data != nil {
			writeRaw(w, r, code, data)
		} else {
			writeJSON(w, r, code, obj)
		}
		return
	}
	out, err := conv.Object(obj, data)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeRaw(w, r, code, out)
}
