package openapi

import (
	"slices"
	"strings"
	"unicode"

	"github.com/minik8s/minik8s/api"
)

// Media types the apiserver reads and writes.
var (
	mediaJSON      = "application/json"
	mediaYAML      = "application/yaml"
	mediaWatchJSON = "application/json;stream=watch"
	anyMedia       = []string{"*/*"}
	objectMedia    = []string{mediaJSON, mediaYAML}
	listMedia      = []string{mediaJSON, mediaYAML, mediaWatchJSON}
	// patchMedia are the four patch types Kubernetes accepts.
	patchMedia = []string{
		"application/json-patch+json", "application/merge-patch+json",
		"application/strategic-merge-patch+json", "application/apply-patch+yaml",
	}
)

// param is a path or query parameter of an operation.
type param struct {
	name, in, typ, description string
	required                   bool
}

// Kubernetes' common parameters, by name.
var params = map[string]param{
	"allowWatchBookmarks":  {typ: "boolean", description: `allowWatchBookmarks requests watch events with type "BOOKMARK". Servers may send bookmarks at their discretion; clients must not assume any interval. Ignored if this is not a watch.`},
	"continue":             {typ: "string", description: "The continue option should be set when retrieving more results from the server: its value is the continue token of the previous page of a list with the same query."},
	"dryRun":               {typ: "string", description: "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive results in an error response and no further processing. Valid values are: All (all dry run stages are processed)."},
	"fieldManager":         {typ: "string", description: "fieldManager is a name associated with the actor or entity that is making these changes."},
	"fieldSelector":        {typ: "string", description: "A selector to restrict the list of returned objects by their fields. Defaults to everything."},
	"fieldValidation":      {typ: "string", description: "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields: Ignore, Warn or Strict."},
	"force":                {typ: "boolean", description: "Force is going to \"force\" Apply requests. It must be unset for non-apply patch requests."},
	"gracePeriodSeconds":   {typ: "integer", description: "The duration in seconds before the object should be deleted. Value must be a non-negative integer; zero means delete immediately. If unset, the default grace period for the type is used."},
	"labelSelector":        {typ: "string", description: "A selector to restrict the list of returned objects by their labels. Defaults to everything."},
	"limit":                {typ: "integer", description: "limit is a maximum number of responses to return for a list call. If more items exist, the server sets the continue field on the list metadata to a value that can be used with the same query to retrieve the next set of results."},
	"orphanDependents":     {typ: "boolean", description: "Deprecated: please use the PropagationPolicy. Should the dependent objects be orphaned."},
	"pretty":               {typ: "string", description: "If 'true', then the output is pretty printed."},
	"propagationPolicy":    {typ: "string", description: "Whether and how garbage collection will be performed: 'Orphan' orphans the dependents, 'Background' deletes them in the background, 'Foreground' deletes them before the owner."},
	"resourceVersion":      {typ: "string", description: "resourceVersion sets a constraint on what resource versions a request may be served from. Defaults to unset."},
	"resourceVersionMatch": {typ: "string", description: "resourceVersionMatch determines how resourceVersion is applied to list calls: NotOlderThan or Exact."},
	"sendInitialEvents":    {typ: "boolean", description: "sendInitialEvents=true may be set together with watch=true: the stream then begins with synthetic events for the current state of the objects, ended by a BOOKMARK annotated \"k8s.io/initial-events-end\"."},
	"timeoutSeconds":       {typ: "integer", description: "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity."},
	"watch":                {typ: "boolean", description: "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion."},
	// pods/log
	"container":    {typ: "string", description: "The container for which to stream logs. Defaults to the only container if there is one container in the pod."},
	"follow":       {typ: "boolean", description: "Follow the log stream of the pod. Defaults to false."},
	"limitBytes":   {typ: "integer", description: "If set, the number of bytes to read from the server before terminating the log output."},
	"previous":     {typ: "boolean", description: "Return previous terminated container logs. Defaults to false."},
	"sinceSeconds": {typ: "integer", description: "A relative time in seconds before the current time from which to show logs."},
	"tailLines":    {typ: "integer", description: "If set, the number of lines from the end of the logs to show."},
	"timestamps":   {typ: "boolean", description: "If true, add an RFC3339 or RFC3339Nano timestamp at the beginning of every line of log output. Defaults to false."},
	// pods/exec, pods/attach, pods/portforward
	"command": {typ: "string", description: "Command is the remote command to execute. argv array. Not executed within a shell."},
	"stdin":   {typ: "boolean", description: "Redirect the standard input stream of the pod for this call. Defaults to false."},
	"stdout":  {typ: "boolean", description: "Redirect the standard output stream of the pod for this call."},
	"stderr":  {typ: "boolean", description: "Redirect the standard error stream of the pod for this call."},
	"tty":     {typ: "boolean", description: "TTY if true indicates that a tty will be allocated for the exec call. Defaults to false."},
	"ports":   {typ: "integer", description: "List of ports to forward."},
}

// Parameter sets of the operations, as kube-apiserver declares them.
var (
	listParams = []string{"allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit",
		"resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"}
	writeParams            = []string{"dryRun", "fieldManager", "fieldValidation"}
	patchParams            = []string{"dryRun", "fieldManager", "fieldValidation", "force"}
	deleteParams           = []string{"dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy"}
	deleteCollectionParams = []string{"continue", "dryRun", "fieldSelector", "gracePeriodSeconds", "labelSelector", "limit",
		"orphanDependents", "propagationPolicy", "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds"}
	logParams    = []string{"container", "follow", "limitBytes", "previous", "sinceSeconds", "tailLines", "timestamps"}
	execParams   = []string{"command", "container", "stderr", "stdin", "stdout", "tty"}
	attachParams = []string{"container", "stderr", "stdin", "stdout", "tty"}
)

func query(names ...string) []param {
	out := make([]param, 0, len(names))
	for _, n := range names {
		p := params[n]
		p.name, p.in = n, "query"
		out = append(out, p)
	}
	return out
}

// response is one response of an operation: a definition, a plain schema
// (pods/log answers text) or nothing.
type response struct {
	code, description string
	def               string
	plain             *schema
}

// operation is one HTTP method on a path, independent of the dialect.
type operation struct {
	method      string // get, put, post, delete, patch
	id          string
	description string
	action      string
	gvk         gvk
	tag         string
	params      []param
	bodyDef     string // definition of the request body, "" for none
	bodyNeeded  bool
	consumes    []string
	produces    []string
	responses   []response
}

// pathItem is the operations on one path and the parameters they share.
type pathItem struct {
	path   string
	params []param
	ops    []operation
}

// kindRef says which definition an operation's object is and its GVK.
type kindRef struct {
	def string
	gvk gvk
}

// resourcePaths are the REST paths of one resource: the collection, the
// object, the collection across namespaces, and the subresources; kind and
// list are its definitions, subs those of subresources with kinds of their
// own.
func resourcePaths(ri api.ResourceInfo, kind, list kindRef, subs map[string]subresourceKind) []pathItem {
	g := ri.Group
	gv := gvk{Group: g, Version: ri.Version, Kind: ri.Kind}
	opGV := camelGroup(g) + camel(ri.Version)
	tag := groupTag(g) + "_" + ri.Version
	prefix := "/api/" + ri.Version
	if g != "" {
		prefix = "/apis/" + g + "/" + ri.Version
	}
	scope, collection := "", prefix+"/"+ri.Resource
	nsParam := []param{}
	if ri.Namespaced {
		scope = "Namespaced"
		collection = prefix + "/namespaces/{namespace}/" + ri.Resource
		nsParam = []param{{name: "namespace", in: "path", typ: "string", required: true,
			description: "object name and auth scope, such as for teams and projects"}}
	}
	pretty := query("pretty")
	nameParam := func(kind string) param {
		return param{name: "name", in: "path", typ: "string", required: true, description: "name of the " + kind}
	}
	objResp := func(codes ...string) []response {
		out := make([]response, 0, len(codes)+1)
		for _, c := range codes {
			out = append(out, response{code: c, description: statusText[c], def: kind.def})
		}
		return append(out, unauthorized)
	}
	deleted := statusName
	if returnsDeletedObject[ri.Group+"/"+ri.Resource] {
		deleted = kind.def
	}

	var items []pathItem
	if isReview(ri) {
		// A review is only ever created: POST to its collection.
		items = append(items, pathItem{path: collection, params: append(slices.Clone(nsParam), pretty...), ops: []operation{
			{method: "post", id: "create" + opGV + scope + ri.Kind, description: "create " + article(ri.Kind),
				action: "post", params: query(writeParams...), bodyDef: kind.def, bodyNeeded: true,
				consumes: anyMedia, produces: objectMedia, responses: objResp("200", "201", "202")},
		}})
		return finishPaths(items, tag, gv)
	}
	items = append(items, pathItem{path: collection, params: append(slices.Clone(nsParam), pretty...), ops: []operation{
		{method: "get", id: "list" + opGV + scope + ri.Kind, description: "list or watch objects of kind " + ri.Kind,
			action: "list", params: query(listParams...), consumes: anyMedia, produces: listMedia,
			responses: []response{{code: "200", description: "OK", def: list.def}, unauthorized}},
		{method: "post", id: "create" + opGV + scope + ri.Kind, description: "create " + article(ri.Kind),
			action: "post", params: query(writeParams...), bodyDef: kind.def, bodyNeeded: true,
			consumes: anyMedia, produces: objectMedia, responses: objResp("200", "201", "202")},
		{method: "delete", id: "delete" + opGV + "Collection" + scope + ri.Kind, description: "delete collection of " + ri.Kind,
			action: "deletecollection", params: query(deleteCollectionParams...), bodyDef: deleteOptsName,
			consumes: anyMedia, produces: objectMedia,
			responses: []response{{code: "200", description: "OK", def: statusName}, unauthorized}},
	}})
	items = append(items, pathItem{path: collection + "/{name}", params: append(append([]param{nameParam(ri.Kind)}, nsParam...), pretty...), ops: []operation{
		{method: "get", id: "read" + opGV + scope + ri.Kind, description: "read the specified " + ri.Kind,
			action: "get", consumes: anyMedia, produces: objectMedia, responses: objResp("200")},
		{method: "put", id: "replace" + opGV + scope + ri.Kind, description: "replace the specified " + ri.Kind,
			action: "put", params: query(writeParams...), bodyDef: kind.def, bodyNeeded: true,
			consumes: anyMedia, produces: objectMedia, responses: objResp("200", "201")},
		{method: "patch", id: "patch" + opGV + scope + ri.Kind, description: "partially update the specified " + ri.Kind,
			action: "patch", params: query(patchParams...), bodyDef: patchName, bodyNeeded: true,
			consumes: patchMedia, produces: objectMedia, responses: objResp("200", "201")},
		{method: "delete", id: "delete" + opGV + scope + ri.Kind, description: "delete " + article(ri.Kind),
			action: "delete", params: query(deleteParams...), bodyDef: deleteOptsName,
			consumes: anyMedia, produces: objectMedia,
			responses: []response{{code: "200", description: "OK", def: deleted}, {code: "202", description: "Accepted", def: deleted}, unauthorized}},
	}})
	if ri.Namespaced {
		items = append(items, pathItem{path: prefix + "/" + ri.Resource, params: pretty, ops: []operation{
			{method: "get", id: "list" + opGV + ri.Kind + "ForAllNamespaces", description: "list or watch objects of kind " + ri.Kind,
				action: "list", params: query(listParams...), consumes: anyMedia, produces: listMedia,
				responses: []response{{code: "200", description: "OK", def: list.def}, unauthorized}},
		}})
	}
	for _, sub := range ri.Subresources {
		items = append(items, subresourcePath(ri, sub, collection+"/{name}/"+sub, opGV, scope,
			append(slices.Clone(nsParam), pretty...), kind, subs))
	}
	return finishPaths(items, tag, gv)
}

// finishPaths tags a resource's operations with its group-version and
// sorts their parameters.
func finishPaths(items []pathItem, tag string, gv gvk) []pathItem {
	for i := range items {
		for j := range items[i].ops {
			op := &items[i].ops[j]
			op.tag = tag
			if op.gvk == (gvk{}) {
				op.gvk = gv
			}
		}
		slices.SortFunc(items[i].params, func(a, b param) int { return strings.Compare(a.name, b.name) })
	}
	return items
}

// isReview tells the create-only review kinds (api.ReviewResources), which
// have no list kind and no object paths.
func isReview(ri api.ResourceInfo) bool {
	return slices.ContainsFunc(api.ReviewResources, func(r api.ResourceInfo) bool {
		return r.Group == ri.Group && r.Version == ri.Version && r.Resource == ri.Resource
	})
}

// subresourceKind is the object a subresource reads and writes when it is
// not the resource's own kind (deployments/scale is an autoscaling/v1 Scale).
type subresourceKind struct {
	ref kindRef
}

// subresourcePath describes one subresource, the way kube-apiserver does for
// the ones it knows (status, scale, approval, binding, eviction, log, finalize, exec,
// attach, portforward, proxy); any other one is described as a read of the
// resource's kind.
func subresourcePath(ri api.ResourceInfo, sub, path, opGV, scope string, shared []param, kind kindRef, subs map[string]subresourceKind) pathItem {
	idSuffix := opGV + scope + ri.Kind + camel(sub)
	resp := func(ref kindRef, codes ...string) []response {
		out := make([]response, 0, len(codes)+1)
		for _, c := range codes {
			out = append(out, response{code: c, description: statusText[c], def: ref.def})
		}
		return append(out, unauthorized)
	}
	ref := kind
	if sk, ok := subs[sub]; ok {
		ref = sk.ref
	}
	item := pathItem{path: path, params: append([]param{{name: "name", in: "path", typ: "string", required: true, description: "name of the " + ref.gvk.Kind}}, shared...)}
	switch sub {
	case "status", "scale", "approval":
		item.ops = []operation{
			{method: "get", id: "read" + idSuffix, description: "read " + sub + " of the specified " + ri.Kind, action: "get",
				consumes: anyMedia, produces: objectMedia, responses: resp(ref, "200")},
			{method: "put", id: "replace" + idSuffix, description: "replace " + sub + " of the specified " + ri.Kind, action: "put",
				params: query(writeParams...), bodyDef: ref.def, bodyNeeded: true, consumes: anyMedia, produces: objectMedia,
				responses: resp(ref, "200", "201")},
			{method: "patch", id: "patch" + idSuffix, description: "partially update " + sub + " of the specified " + ri.Kind, action: "patch",
				params: query(patchParams...), bodyDef: patchName, bodyNeeded: true, consumes: patchMedia, produces: objectMedia,
				responses: resp(ref, "200", "201")},
		}
	case "binding", "eviction":
		item.ops = []operation{
			{method: "post", id: "create" + idSuffix, description: "create " + sub + " of " + article(ri.Kind), action: "post",
				params: query(writeParams...), bodyDef: ref.def, bodyNeeded: true, consumes: anyMedia, produces: objectMedia,
				responses: resp(ref, "200", "201", "202")},
		}
	case "finalize":
		item.ops = []operation{
			{method: "put", id: "replace" + idSuffix, description: "replace finalize of the specified " + ri.Kind, action: "put",
				params: query(writeParams...), bodyDef: ref.def, bodyNeeded: true, consumes: anyMedia, produces: objectMedia,
				responses: resp(ref, "200", "201")},
		}
	case "log":
		item.ops = []operation{
			{method: "get", id: "read" + idSuffix, description: "read log of the specified " + ri.Kind, action: "get",
				params: query(logParams...), consumes: anyMedia, produces: []string{"text/plain", mediaJSON, mediaYAML},
				responses: []response{{code: "200", description: "OK", plain: &schema{Type: "string"}}, unauthorized}},
		}
	case "exec", "attach", "portforward", "proxy":
		var qp []string
		switch sub {
		case "exec":
			qp = execParams
		case "attach":
			qp = attachParams
		case "portforward":
			qp = []string{"ports"}
		}
		opts := gvk{Version: ri.Version, Group: ri.Group, Kind: ri.Kind + camel(sub) + "Options"}
		item.params[0].description = "name of the " + opts.Kind
		for _, m := range []string{"get", "post"} {
			item.ops = append(item.ops, operation{method: m, id: "connect" + opGV + camel(m) + scope + ri.Kind + camel(sub),
				description: "connect " + strings.ToUpper(m) + " requests to " + sub + " of " + ri.Kind, action: "connect", gvk: opts,
				params: query(qp...), consumes: anyMedia, produces: anyMedia,
				responses: []response{{code: "200", description: "OK", plain: &schema{Type: "string"}}, unauthorized}})
		}
	default:
		item.ops = []operation{
			{method: "get", id: "read" + idSuffix, description: "read " + sub + " of the specified " + ri.Kind, action: "get",
				consumes: anyMedia, produces: objectMedia, responses: resp(ref, "200")},
		}
	}
	for i := range item.ops {
		if item.ops[i].gvk == (gvk{}) {
			item.ops[i].gvk = ref.gvk
		}
	}
	return item
}

var unauthorized = response{code: "401", description: "Unauthorized"}

var statusText = map[string]string{"200": "OK", "201": "Created", "202": "Accepted"}

// returnsDeletedObject lists the resources ("group/resource") whose DELETE
// answers with the deleted object rather than a Status, as the apiserver's
// registry does (pods, for graceful deletion).
var returnsDeletedObject = map[string]bool{"/pods": true}

// camelGroup is the group as operation ids spell it: "Core" for the core
// group, "Coordination" for coordination.k8s.io, "RbacAuthorization" for
// rbac.authorization.k8s.io.
func camelGroup(g string) string {
	if g == "" {
		return "Core"
	}
	var b strings.Builder
	for _, part := range strings.FieldsFunc(strings.TrimSuffix(g, ".k8s.io"), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		b.WriteString(camel(part))
	}
	return b.String()
}

// groupTag is the group as operation tags spell it: "core", "coordination",
// "rbac_authorization".
func groupTag(g string) string {
	if g == "" {
		return "core"
	}
	return strings.NewReplacer(".", "_", "-", "_").Replace(strings.TrimSuffix(g, ".k8s.io"))
}

// camel upper-cases the first letter.
func camel(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// article prefixes a kind with "a" or "an", as operation descriptions do.
func article(kind string) string {
	if kind != "" && strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
