package clienttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/fields"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/api/patch"
	"github.com/minik8s/minik8s/internal/client"
)

// Action is one request the server received.
type Action struct {
	// Verb is get, list, watch, create, update, patch, delete or
	// deletecollection, as in Kubernetes audit logs.
	Verb        string
	Group       string
	Resource    string // plural: "pods"
	Namespace   string
	Name        string
	Subresource string // "status", "binding", ...
	Query       url.Values
	// Body is the request body (the object sent, the patch, the options).
	Body []byte
	// PatchType is the Content-Type of a patch.
	PatchType string
}

// String renders "verb resource ns/name[/sub]", handy in test failures.
func (a Action) String() string {
	s := a.Verb + " " + a.Resource
	if a.Group != "" {
		s += "." + a.Group
	}
	if a.Namespace != "" || a.Name != "" {
		s += " " + strings.Trim(a.Namespace+"/"+a.Name, "/")
	}
	if a.Subresource != "" {
		s += "/" + a.Subresource
	}
	return s
}

// Reactor may answer an action instead of the server: handled true with
// either an error (a *apierrors.StatusError is sent as its Status, others as
// 500) or a value to encode as the answer.
type Reactor func(a Action) (handled bool, answer any, err error)

type stored struct {
	info api.ResourceInfo
	obj  map[string]any
}

type event struct {
	rv   int64
	typ  string
	info api.ResourceInfo
	ns   string
	obj  []byte
	prev map[string]any // state before a MODIFIED
}

// Server is the in-memory apiserver.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	objects  map[string]*stored // by group/resource/ns/name
	rv       int64
	events   []event
	changed  chan struct{} // closed and replaced on every event
	actions  []Action
	reactors []reactorEntry
}

type reactorEntry struct {
	verb, resource string
	fn             Reactor
}

// TB is the part of testing.TB the server needs; *testing.T and *testing.B
// satisfy it.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
}

var _ TB = (testing.TB)(nil)

// NewServer starts a server seeded with objs (whose kinds must be in
// api.Resources); it stops when the test ends.
func NewServer(t TB, objs ...api.Object) *Server {
	t.Helper()
	s := &Server{objects: map[string]*stored{}, changed: make(chan struct{})}
	for _, o := range objs {
		if err := s.Add(o); err != nil {
			t.Fatalf("clienttest: seed: %v", err)
		}
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// URL returns the server's address.
func (s *Server) URL() string { return s.srv.URL }

// Client returns a client of the server without rate limiting.
func (s *Server) Client() *client.Client {
	c, err := client.New(&client.Config{Host: s.srv.URL, QPS: -1, UserAgent: "clienttest"})
	if err != nil {
		panic(err) // a loopback http URL cannot be invalid
	}
	return c
}

// Actions returns the recorded actions, oldest first.
func (s *Server) Actions() []Action {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Action(nil), s.actions...)
}

// ClearActions forgets the recorded actions (after seeding through the API).
func (s *Server) ClearActions() {
	s.mu.Lock()
	s.actions = nil
	s.mu.Unlock()
}

// PrependReactor makes fn see matching actions before the server does; verb
// and resource may be "*".
func (s *Server) PrependReactor(verb, resource string, fn Reactor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reactors = append([]reactorEntry{{verb, resource, fn}}, s.reactors...)
}

// Add stores obj as if created, without recording an action.
func (s *Server) Add(obj api.Object) error {
	tm := obj.GetTypeMeta()
	info, ok := lookupObject(obj)
	if !ok {
		return fmt.Errorf("clienttest: %T (%s %s) is not a registered kind", obj, tm.APIVersion, tm.Kind)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	m, err := decodeMap(b)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ns := str(m, "metadata", "namespace")
	_, serr := s.create(info, ns, m)
	if serr != nil {
		return serr
	}
	return nil
}

// Object returns the stored object info/ns/name decoded into out (a pointer
// to the kind's struct); false when absent.
func (s *Server) Object(info api.ResourceInfo, namespace, name string, out any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.objects[key(info, namespace, name)]
	if !ok {
		return false
	}
	b, _ := json.Marshal(st.obj)
	return json.Unmarshal(b, out) == nil
}

func lookupObject(obj api.Object) (api.ResourceInfo, bool) {
	tm := obj.GetTypeMeta()
	if tm.Kind != "" && tm.APIVersion != "" {
		if info, ok := api.LookupKind(tm.APIVersion, tm.Kind); ok {
			return info, true
		}
	}
	want := fmt.Sprintf("%T", obj)
	for _, info := range api.Resources {
		if info.New != nil && fmt.Sprintf("%T", info.New()) == want {
			return info, true
		}
	}
	return api.ResourceInfo{}, false
}

func key(info api.ResourceInfo, ns, name string) string {
	if !info.Namespaced {
		ns = ""
	}
	return info.Group + "/" + info.Resource + "/" + ns + "/" + name
}

func decodeMap(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

func child(m map[string]any, k string) map[string]any {
	c, ok := m[k].(map[string]any)
	if !ok {
		c = map[string]any{}
		m[k] = c
	}
	return c
}

func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[p]
	}
	switch v := cur.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// route is a parsed request path.
type route struct {
	info          api.ResourceInfo
	ns, name, sub string
}

func parsePath(p string) (route, bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	var group, version string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, version, parts = parts[1], parts[2], parts[3:]
	default:
		return route{}, false
	}
	var r route
	if len(parts) >= 3 && parts[0] == "namespaces" {
		if _, ok := api.LookupResource(group, parts[2]); ok {
			r.ns, parts = parts[1], parts[2:]
		}
	}
	info, ok := api.LookupResource(group, parts[0])
	if !ok || info.Version != version || len(parts) > 3 {
		return route{}, false
	}
	r.info = info
	if len(parts) > 1 {
		r.name = parts[1]
	}
	if len(parts) > 2 {
		r.sub = parts[2]
	}
	return r, true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeErr answers with err's Status as the apiserver does; an error
// without one is an InternalError.
func writeErr(w http.ResponseWriter, err error) {
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		se = apierrors.NewInternalError(err)
	}
	apierrors.WriteStatus(w, se.ErrStatus)
}

func verbOf(r *http.Request, rt route) string {
	switch r.Method {
	case http.MethodGet:
		if r.URL.Query().Get("watch") == "true" {
			return "watch"
		}
		if rt.name == "" {
			return "list"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if rt.name == "" {
			return "deletecollection"
		}
		return "delete"
	}
	return strings.ToLower(r.Method)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rt, ok := parsePath(r.URL.Path)
	if !ok {
		writeErr(w, apierrors.NewGeneric(http.StatusNotFound, api.StatusReasonNotFound, "the server could not find the requested resource"))
		return
	}
	body, _ := io.ReadAll(r.Body)
	a := Action{Verb: verbOf(r, rt), Group: rt.info.Group, Resource: rt.info.Resource, Namespace: rt.ns,
		Name: rt.name, Subresource: rt.sub, Query: r.URL.Query(), Body: body}
	if a.Verb == "patch" {
		a.PatchType = r.Header.Get("Content-Type")
	}
	s.mu.Lock()
	s.actions = append(s.actions, a)
	reactors := append([]reactorEntry(nil), s.reactors...)
	s.mu.Unlock()
	for _, re := range reactors {
		if (re.verb == "*" || re.verb == a.Verb) && (re.resource == "*" || re.resource == a.Resource) {
			if handled, answer, err := re.fn(a); handled {
				if err != nil {
					writeErr(w, err)
				} else {
					writeJSON(w, http.StatusOK, answer)
				}
				return
			}
		}
	}
	if a.Verb == "watch" {
		s.watch(w, r, rt)
		return
	}
	s.mu.Lock()
	code, answer, err := s.handle(a, rt, r.Header.Get("Content-Type"))
	s.mu.Unlock()
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, code, answer)
}

func (rt route) gr() apierrors.GroupResource {
	return apierrors.GroupResource{Group: rt.info.Group, Resource: rt.info.Resource}
}

// handle serves every verb but watch. Callers hold mu.
func (s *Server) handle(a Action, rt route, contentType string) (int, any, error) {
	if rt.info.Namespaced && rt.ns == "" && (rt.name != "" || a.Verb == "create") {
		return 0, nil, apierrors.NewBadRequest("the server could not find the requested resource: namespace is required")
	}
	switch a.Verb {
	case "get":
		st, ok := s.objects[key(rt.info, rt.ns, rt.name)]
		if !ok {
			return 0, nil, apierrors.NewNotFound(rt.gr(), rt.name)
		}
		return http.StatusOK, st.obj, nil
	case "list":
		items, err := s.matching(rt, a.Query)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]any{
			"kind": rt.info.ListKind(), "apiVersion": rt.info.GroupVersion(),
			"metadata": map[string]any{"resourceVersion": strconv.FormatInt(s.rv, 10)},
			"items":    items,
		}, nil
	case "create":
		if rt.sub != "" {
			return s.createSubresource(rt, a.Body)
		}
		m, err := decodeMap(a.Body)
		if err != nil {
			return 0, nil, apierrors.NewBadRequest(err.Error())
		}
		if ns := str(m, "metadata", "namespace"); rt.info.Namespaced && ns != "" && ns != rt.ns {
			return 0, nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		out, err := s.create(rt.info, rt.ns, m)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusCreated, out, nil
	case "update":
		m, err := decodeMap(a.Body)
		if err != nil {
			return 0, nil, apierrors.NewBadRequest(err.Error())
		}
		out, err := s.update(rt, m)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, out, nil
	case "patch":
		st, ok := s.objects[key(rt.info, rt.ns, rt.name)]
		if !ok {
			return 0, nil, apierrors.NewNotFound(rt.gr(), rt.name)
		}
		orig, _ := json.Marshal(st.obj)
		var patched []byte
		var err error
		switch client.PatchType(contentType) {
		case client.MergePatchType:
			patched, err = patch.MergePatch(orig, a.Body)
		case client.StrategicMergePatchType:
			patched, err = patch.StrategicMergePatch(orig, a.Body, patch.KubernetesSchema(rt.info.Kind))
		case client.JSONPatchType:
			patched, err = patch.JSONPatch(orig, a.Body)
		default:
			return 0, nil, apierrors.NewUnsupportedMediaType([]string{string(client.JSONPatchType), string(client.MergePatchType), string(client.StrategicMergePatchType)})
		}
		if err != nil {
			return 0, nil, apierrors.NewBadRequest(err.Error())
		}
		m, err := decodeMap(patched)
		if err != nil {
			return 0, nil, apierrors.NewBadRequest(err.Error())
		}
		// A patch carries a resourceVersion precondition only if it sets one.
		if str(m, "metadata", "resourceVersion") == str(st.obj, "metadata", "resourceVersion") {
			delete(child(m, "metadata"), "resourceVersion")
		}
		out, err := s.update(rt, m)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, out, nil
	case "delete":
		var opts api.DeleteOptions
		if len(a.Body) > 0 {
			if err := json.Unmarshal(a.Body, &opts); err != nil {
				return 0, nil, apierrors.NewBadRequest(err.Error())
			}
		}
		out, err := s.delete(rt.info, rt.ns, rt.name, &opts)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, out, nil
	case "deletecollection":
		items, err := s.matching(rt, a.Query)
		if err != nil {
			return 0, nil, err
		}
		for _, it := range items {
			if _, err := s.delete(rt.info, str(it, "metadata", "namespace"), str(it, "metadata", "name"), &api.DeleteOptions{}); err != nil {
				return 0, nil, err
			}
		}
		return http.StatusOK, map[string]any{"kind": "Status", "apiVersion": "v1", "status": api.StatusSuccess}, nil
	}
	return 0, nil, apierrors.NewMethodNotSupported(rt.gr(), a.Verb)
}

// objFields exposes an object's dotted paths to field selectors.
type objFields map[string]any

func (o objFields) Has(f string) bool { return o.Get(f) != "" }
func (o objFields) Get(f string) string {
	return str(o, strings.Split(f, ".")...)
}

// matching returns the stored objects of rt's resource (and namespace)
// matching the query's selectors, sorted by namespace and name. Callers
// hold mu.
func (s *Server) matching(rt route, q url.Values) ([]map[string]any, error) {
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	fs, err := fields.Parse(q.Get("fieldSelector"))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	var keys []string
	prefix := rt.info.Group + "/" + rt.info.Resource + "/"
	if rt.info.Namespaced && rt.ns != "" {
		prefix += rt.ns + "/"
	}
	for k := range s.objects {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	items := []map[string]any{}
	for _, k := range keys {
		m := s.objects[k].obj
		if matches(m, ls, fs) {
			items = append(items, m)
		}
	}
	return items, nil
}

func matches(m map[string]any, ls labels.Selector, fs fields.Selector) bool {
	lbl := labels.Set{}
	l, _ := copyMeta(m)["labels"].(map[string]any)
	for k, v := range l {
		if sv, ok := v.(string); ok {
			lbl[k] = sv
		}
	}
	return ls.Matches(lbl) && fs.Matches(objFields(m))
}

// copyMeta returns m's metadata (not a copy) without creating it in m.
func copyMeta(m map[string]any) map[string]any {
	if md, ok := m["metadata"].(map[string]any); ok {
		return md
	}
	return map[string]any{}
}

func (s *Server) nextRV() string {
	s.rv++
	return strconv.FormatInt(s.rv, 10)
}

func (s *Server) emit(typ string, info api.ResourceInfo, m map[string]any, prev map[string]any) {
	b, _ := json.Marshal(m)
	s.events = append(s.events, event{rv: s.rv, typ: typ, info: info, ns: str(m, "metadata", "namespace"), obj: b, prev: prev})
	close(s.changed)
	s.changed = make(chan struct{})
}

const nameChars = "bcdfghjklmnpqrstvwxz2456789"

// create stores m. Callers hold mu.
func (s *Server) create(info api.ResourceInfo, ns string, m map[string]any) (map[string]any, error) {
	md := child(m, "metadata")
	name := str(m, "metadata", "name")
	if name == "" {
		if gen := str(m, "metadata", "generateName"); gen != "" {
			b := make([]byte, 5)
			for i := range b {
				b[i] = nameChars[rand.IntN(len(nameChars))]
			}
			name = gen + string(b)
			md["name"] = name
		} else {
			return nil, apierrors.NewInvalid(apierrors.GroupKind{Group: info.Group, Kind: info.Kind}, "",
				field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
		}
	}
	if info.Namespaced {
		md["namespace"] = ns
	} else {
		delete(md, "namespace")
	}
	k := key(info, ns, name)
	if _, ok := s.objects[k]; ok {
		return nil, apierrors.NewAlreadyExists(apierrors.GroupResource{Group: info.Group, Resource: info.Resource}, name)
	}
	m["kind"], m["apiVersion"] = info.Kind, info.GroupVersion()
	md["uid"] = uuid.NewString()
	md["creationTimestamp"] = time.Now().UTC().Format(time.RFC3339)
	md["generation"] = json.Number("1")
	md["resourceVersion"] = s.nextRV()
	s.objects[k] = &stored{info: info, obj: m}
	s.emit(api.Added, info, m, nil)
	return m, nil
}

// update replaces the object at rt with m: the main resource keeps the old
// status and the status subresource changes only the status, as for kinds
// with a status subresource. An empty resourceVersion is an unconditional
// update, a set one a precondition. Callers hold mu.
func (s *Server) update(rt route, m map[string]any) (map[string]any, error) {
	k := key(rt.info, rt.ns, rt.name)
	st, ok := s.objects[k]
	if !ok {
		return nil, apierrors.NewNotFound(rt.gr(), rt.name)
	}
	if n := str(m, "metadata", "name"); n != "" && n != rt.name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, rt.name))
	}
	if rv := str(m, "metadata", "resourceVersion"); rv != "" && rv != str(st.obj, "metadata", "resourceVersion") {
		return nil, apierrors.NewConflict(rt.gr(), rt.name, errors.New(apierrors.OptimisticLockErrorMsg))
	}
	old := st.obj
	var next map[string]any
	switch {
	case rt.sub == "status":
		next = cloneMap(old)
		if v, ok := m["status"]; ok {
			next["status"] = v
		} else {
			delete(next, "status")
		}
	case rt.sub != "":
		return nil, apierrors.NewMethodNotSupported(rt.gr(), "update "+rt.sub)
	default:
		next = m
		if rt.info.HasSubresource("status") {
			if v, ok := old["status"]; ok {
				next["status"] = v
			} else {
				delete(next, "status")
			}
		}
		md, omd := child(next, "metadata"), child(old, "metadata")
		for _, f := range []string{"uid", "creationTimestamp", "namespace", "name", "deletionTimestamp", "generation"} {
			if v, ok := omd[f]; ok {
				md[f] = v
			} else {
				delete(md, f)
			}
		}
		if !jsonEqual(old["spec"], next["spec"]) {
			g, _ := strconv.ParseInt(str(old, "metadata", "generation"), 10, 64)
			md["generation"] = json.Number(strconv.FormatInt(g+1, 10))
		}
	}
	next["kind"], next["apiVersion"] = rt.info.Kind, rt.info.GroupVersion()
	child(next, "metadata")["resourceVersion"] = s.nextRV()
	st.obj = next
	// An object being deleted goes once its last finalizer is removed.
	if str(next, "metadata", "deletionTimestamp") != "" && len(finalizers(next)) == 0 {
		delete(s.objects, k)
		s.emit(api.Deleted, rt.info, next, nil)
		return next, nil
	}
	s.emit(api.Modified, rt.info, next, old)
	return next, nil
}

func finalizers(m map[string]any) []any {
	f, _ := copyMeta(m)["finalizers"].([]any)
	return f
}

func cloneMap(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	out, _ := decodeMap(b)
	return out
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// delete removes an object, or marks it deleted while finalizers remain.
// Callers hold mu.
func (s *Server) delete(info api.ResourceInfo, ns, name string, opts *api.DeleteOptions) (map[string]any, error) {
	gr := apierrors.GroupResource{Group: info.Group, Resource: info.Resource}
	k := key(info, ns, name)
	st, ok := s.objects[k]
	if !ok {
		return nil, apierrors.NewNotFound(gr, name)
	}
	if p := opts.Preconditions; p != nil {
		if p.ResourceVersion != nil && *p.ResourceVersion != str(st.obj, "metadata", "resourceVersion") {
			return nil, apierrors.NewConflict(gr, name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
				*p.ResourceVersion, str(st.obj, "metadata", "resourceVersion")))
		}
		if p.UID != nil && string(*p.UID) != str(st.obj, "metadata", "uid") {
			return nil, apierrors.NewConflict(gr, name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
				*p.UID, str(st.obj, "metadata", "uid")))
		}
	}
	if len(finalizers(st.obj)) > 0 {
		if str(st.obj, "metadata", "deletionTimestamp") == "" {
			next := cloneMap(st.obj)
			md := child(next, "metadata")
			md["deletionTimestamp"] = time.Now().UTC().Format(time.RFC3339)
			grace := int64(0)
			if opts.GracePeriodSeconds != nil {
				grace = *opts.GracePeriodSeconds
			}
			md["deletionGracePeriodSeconds"] = json.Number(strconv.FormatInt(grace, 10))
			md["resourceVersion"] = s.nextRV()
			prev := st.obj
			st.obj = next
			s.emit(api.Modified, info, next, prev)
		}
		return st.obj, nil
	}
	delete(s.objects, k)
	final := cloneMap(st.obj)
	child(final, "metadata")["resourceVersion"] = s.nextRV()
	s.emit(api.Deleted, info, final, nil)
	return final, nil
}

// createSubresource serves POST on a subresource: pods/binding sets
// spec.nodeName; others are not served. Callers hold mu.
func (s *Server) createSubresource(rt route, body []byte) (int, any, error) {
	if rt.info.Resource != "pods" || rt.sub != "binding" {
		return 0, nil, apierrors.NewMethodNotSupported(rt.gr(), "create "+rt.sub)
	}
	var b struct {
		Target struct {
			Name string `json:"name"`
		} `json:"target"`
	}
	if err := json.Unmarshal(body, &b); err != nil || b.Target.Name == "" {
		return 0, nil, apierrors.NewBadRequest("binding must name a target node")
	}
	k := key(rt.info, rt.ns, rt.name)
	st, ok := s.objects[k]
	if !ok {
		return 0, nil, apierrors.NewNotFound(rt.gr(), rt.name)
	}
	if n := str(st.obj, "spec", "nodeName"); n != "" {
		return 0, nil, apierrors.NewConflict(rt.gr(), rt.name, fmt.Errorf("pod %s is already assigned to node %q", rt.name, n))
	}
	next := cloneMap(st.obj)
	child(next, "spec")["nodeName"] = b.Target.Name
	child(next, "metadata")["resourceVersion"] = s.nextRV()
	prev := st.obj
	st.obj = next
	s.emit(api.Modified, rt.info, next, prev)
	return http.StatusCreated, map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": api.StatusSuccess, "code": http.StatusCreated}, nil
}

// watch streams events after the requested resourceVersion; without one (or
// "0") it starts with ADDED events for the current objects.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, rt route) {
	q := r.URL.Query()
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		writeErr(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	fs, err := fields.Parse(q.Get("fieldSelector"))
	if err != nil {
		writeErr(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	s.mu.Lock()
	var initial []map[string]any
	from := int64(0)
	switch rv := q.Get("resourceVersion"); rv {
	case "", "0":
		initial, _ = s.matching(rt, url.Values{})
		from = s.rv
	default:
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil {
			s.mu.Unlock()
			writeErr(w, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q", rv)))
			return
		}
		from = n
	}
	s.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush() // the client waits for the headers
	}
	enc := json.NewEncoder(w)
	send := func(typ string, obj []byte) bool {
		if err := enc.Encode(api.WatchEvent{Type: typ, Object: obj}); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	for _, m := range initial {
		if matches(m, ls, fs) {
			b, _ := json.Marshal(m)
			if !send(api.Added, b) {
				return
			}
		}
	}
	var timeout <-chan time.Time
	if ts, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && ts > 0 {
		timeout = time.After(time.Duration(ts) * time.Second)
	}
	next := 0
	for {
		s.mu.Lock()
		// Events are in rv order; skip those at or before from.
		for next < len(s.events) && s.events[next].rv <= from {
			next++
		}
		pending := append([]event(nil), s.events[next:]...)
		next = len(s.events)
		changed := s.changed
		s.mu.Unlock()
		for _, ev := range pending {
			if ev.info.Group != rt.info.Group || ev.info.Resource != rt.info.Resource {
				continue
			}
			if rt.info.Namespaced && rt.ns != "" && ev.ns != rt.ns {
				continue
			}
			m, _ := decodeMap(ev.obj)
			typ, now := ev.typ, matches(m, ls, fs)
			// As the real watch cache: an object moving into the selection is
			// ADDED, one moving out of it is DELETED.
			if typ == api.Modified {
				was := matches(ev.prev, ls, fs)
				switch {
				case was && !now:
					typ, now = api.Deleted, true
				case !was && now:
					typ = api.Added
				}
			}
			if !now {
				continue
			}
			if !send(typ, ev.obj) {
				return
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-timeout:
			return
		case <-changed:
		}
	}
}
