package server

import (
	"mime"
	"net/http"

	"github.com/munnerz/goautoneg"

	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/apiserver/transform"
)

// mediaType is one encoding of API objects the server reads and writes.
type mediaType struct {
	typ, sub string // "application", "json"
	// stream: the encoding has a watch stream form (YAML has none).
	stream bool
}

func (m mediaType) String() string { return m.typ + "/" + m.sub }

var (
	mediaJSON     = mediaType{"application", "json", true}
	mediaYAML     = mediaType{"application", "yaml", false}
	mediaProtobuf = mediaType{"application", "vnd.kubernetes.protobuf", true}
)

// mediaTypes are the encodings of API objects, in kube-apiserver's order:
// the first is the default of a request without Content-Type or Accept.
var mediaTypes = []mediaType{mediaJSON, mediaYAML, mediaProtobuf}

// mediaTypeNames lists the encodings as the 406 and 415 messages name
// them; stream the watch streams' ("application/json;stream=watch").
func mediaTypeNames(stream bool) []string {
	var names []string
	for _, m := range mediaTypes {
		switch {
		case !stream:
			names = append(names, m.String())
		case m.stream:
			names = append(names, m.String()+";stream=watch")
		}
	}
	return names
}

// groupVersionKind is a conversion an Accept clause asks for
// (application/json;as=Table;v=v1;g=meta.k8s.io).
type groupVersionKind struct{ group, version, kind string }

// output is what a response is to be written as.
type output struct {
	media mediaType
	// convert is the object the client asked for instead of the resource
	// (as=, g=, v=); nil when none.
	convert *groupVersionKind
}

// allowsTransform says whether a response may be written in m as target
// (nil: the resource itself), kube-apiserver's
// EndpointRestrictions.AllowsMediaTypeTransform: tables in JSON and YAML,
// metadata in every encoding (transform.Allows).
func allowsTransform(m mediaType, target *groupVersionKind) bool {
	return target == nil || transform.Allows(m.String(), transformTarget(target))
}

// negotiateOutput picks the response encoding from the Accept header as
// kube-apiserver does (negotiation.NegotiateOutputMediaType): no header
// means JSON; otherwise the header's clauses in goautoneg's order (by q,
// then exact types before wildcards), each matched against the encodings
// in order (type/subtype, type/*, */*), and the first whose parameters the
// endpoint allows wins. Nothing acceptable is 406 NotAcceptable.
func negotiateOutput(r *http.Request) (output, error) {
	header := r.Header.Get("Accept")
	if header == "" {
		return output{media: mediaTypes[0]}, nil
	}
	if out, ok := negotiate(header, allowsTransform); ok {
		return out, nil
	}
	return output{}, notAcceptable(false)
}

// transformAllowed says whether an endpoint writes its answer in m as
// target (nil: as itself), kube-apiserver's
// EndpointRestrictions.AllowsMediaTypeTransform.
type transformAllowed func(m mediaType, target *groupVersionKind) bool

// negotiate picks the first clause of a non-empty Accept header, in
// goautoneg's order, that names an encoding with parameters the endpoint
// allows (kube-apiserver's NegotiateMediaTypeOptions).
func negotiate(header string, allows transformAllowed) (output, bool) {
	for _, clause := range goautoneg.ParseAccept(header) {
		for _, m := range mediaTypes {
			switch {
			case clause.Type == m.typ && clause.SubType == m.sub,
				clause.Type == m.typ && clause.SubType == "*",
				clause.Type == "*" && clause.SubType == "*":
				if out, ok := acceptParams(clause.Params, m, allows); ok {
					return out, true
				}
			}
		}
	}
	return output{}, false
}

// acceptParams reads an Accept clause's parameters for m (kube-apiserver's
// acceptMediaTypeOptions); ok is false when the endpoint cannot honour
// them and the clause must be passed over.
func acceptParams(params map[string]string, m mediaType, allows transformAllowed) (output, bool) {
	out := output{media: m}
	for k, v := range params {
		switch k {
		case "as", "g", "v":
			if out.convert == nil {
				out.convert = &groupVersionKind{}
			}
			switch k {
			case "as":
				out.convert.kind = v
			case "g":
				out.convert.group = v
			case "v":
				out.convert.version = v
			}
		case "stream":
			if v != "" && (!m.stream || v != "watch") {
				return output{}, false
			}
		case "sv":
			// The server version of generic output: no endpoint serves one.
			if v != "" {
				return output{}, false
			}
		}
		// pretty, export, profile and unknown parameters change nothing.
	}
	if !allows(m, out.convert) {
		return output{}, false
	}
	return out, true
}

// negotiateStream picks a watch's encoding
// (negotiation.NegotiateOutputMediaTypeStream): as negotiateOutput, and
// the encoding chosen must have a stream form.
func negotiateStream(r *http.Request) (output, error) {
	out, err := negotiateOutput(r)
	if err != nil || !out.media.stream {
		return output{}, notAcceptable(true)
	}
	return out, nil
}

func notAcceptable(stream bool) error {
	return apierrors.NewNotAcceptable(mediaTypeNames(stream))
}

// readContentType is the encoding of a request body by its Content-Type
// (negotiation.NegotiateInputSerializer): none means JSON; parameters are
// ignored; anything else is 415 UnsupportedMediaType.
func readContentType(r *http.Request) (mediaType, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return mediaTypes[0], nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		for _, m := range mediaTypes {
			if m.String() == mt {
				return m, nil
			}
		}
	}
	return mediaType{}, apierrors.NewUnsupportedMediaType(mediaTypeNames(false))
}
