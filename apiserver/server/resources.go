package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
	"github.com/minik8s/minik8s/api/field"
	"github.com/minik8s/minik8s/api/fields"
	"github.com/minik8s/minik8s/api/labels"
	"github.com/minik8s/minik8s/apiserver/fieldvalidation"
	"github.com/minik8s/minik8s/apiserver/protobuf"
	"github.com/minik8s/minik8s/apiserver/registry"
	"github.com/minik8s/minik8s/apiserver/request"
)

// serveAPI handles everything under /api and /apis: discovery documents and
// resource requests.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	info, _ := request.InfoFrom(r.Context())
	if h := s.aggregated(info); h != nil {
		h.ServeHTTP(w, r)
		return
	}
	if !info.IsResourceRequest {
		s.serveDiscovery(w, r, info)
		return
	}
	st := s.store(info)
	if st == nil {
		if ri, ok := s.reviewResource(info); ok {
			s.serveReview(w, r, info, ri)
			return
		}
		if ri, ok := s.computedResource(info); ok {
			s.serveComputed(w, r, info, ri)
			return
		}
		notFound(w, r)
		return
	}
	// A namespaced resource may be addressed in a namespace or across all;
	// a cluster-scoped one never in a namespace.
	if !st.Info.Namespaced && info.Namespace != "" && info.Resource != "namespaces" {
		notFound(w, r)
		return
	}
	if cr, ok := s.lookupCustom(st); ok {
		if !customMedia(w, r) {
			return
		}
		if cr.Terminating.Load() && info.Verb == "create" && info.Subresource == "" {
			err := apierrors.NewMethodNotSupported(st.GR, "create")
			err.ErrStatus.Message = "create not allowed while custom resource definition is terminating"
			writeError(w, r, err)
			return
		}
	}
	if isProxySubresource(st, info) {
		s.serveProxySubresource(w, r, info, st)
		return
	}
	if info.Subresource != "" && len(info.Parts) == 3 && isKubeletSubresource(st, info.Subresource) {
		s.servePodProxy(w, r, info, st)
		return
	}
	// The answer's encoding is settled before anything is done, so a
	// request whose Accept nothing satisfies changes nothing (406).
	if _, err := negotiateOutput(r); err != nil {
		writeError(w, r, err)
		return
	}
	if info.Subresource != "" {
		if len(info.Parts) > 3 || !st.Info.HasSubresource(info.Subresource) {
			notFound(w, r)
			return
		}
		s.serveSubresource(w, r, info, st)
		return
	}
	if len(info.Parts) > 3 {
		notFound(w, r)
		return
	}
	// A resource that serves some verbs only (namespaces: no
	// deletecollection) refuses the others, as Kubernetes does.
	if st.Info.Verbs != nil && !slices.Contains(st.Info.Verbs, info.Verb) {
		methodNotAllowed(w, r)
		return
	}
	switch info.Verb {
	case "get":
		s.get(w, r, info, st)
	case "list":
		s.list(w, r, info, st)
	case "watch":
		s.watch(w, r, info, st)
	case "create":
		if info.Name != "" {
			methodNotAllowed(w, r)
			return
		}
		s.create(w, r, info, st)
	case "update":
		if info.Name == "" {
			methodNotAllowed(w, r)
			return
		}
		s.update(w, r, info, st)
	case "patch":
		if info.Name == "" {
			methodNotAllowed(w, r)
			return
		}
		s.patch(w, r, info, st, "")
	case "delete":
		s.delete(w, r, info, st)
	case "deletecollection":
		s.deleteCollection(w, r, info, st)
	default:
		methodNotAllowed(w, r)
	}
}

func dryRun(r *http.Request) (bool, error) {
	vals := r.URL.Query()["dryRun"]
	for _, v := range vals {
		if v != "All" {
			return false, apierrors.NewBadRequest(fmt.Sprintf("Invalid dryRun value %q: supported values: \"All\"", v))
		}
	}
	return len(vals) > 0, nil
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store) {
	conv, err := s.converterFor(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, err := st.Get(r.Context(), info.Namespace, info.Name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, r, http.StatusOK, conv, obj, nil)
}

// listOptions parses the query of a list or watch.
func (s *Server) listOptions(r *http.Request, st *registry.Store) (registry.ListOptions, error) {
	q := r.URL.Query()
	var opts registry.ListOptions
	var err error
	opts.Labels, err = labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return opts, apierrors.NewBadRequest(err.Error())
	}
	opts.Fields, err = fields.Parse(q.Get("fieldSelector"))
	if err != nil {
		return opts, apierrors.NewBadRequest(err.Error())
	}
	known := st.FieldLabels()
	for _, req := range opts.Fields.Requirements() {
		if !known[req.Field] {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	opts.ResourceVersion = q.Get("resourceVersion")
	if rv := opts.ResourceVersion; rv != "" {
		if n, err := strconv.ParseInt(rv, 10, 64); err != nil || n < 0 {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q: must be a non-negative integer", rv))
		}
	}
	opts.ResourceVersionMatch = q.Get("resourceVersionMatch")
	switch opts.ResourceVersionMatch {
	case "", "NotOlderThan", "Exact":
	default:
		return opts, apierrors.NewBadRequest(fmt.Sprintf("resourceVersionMatch: Unsupported value: %q: supported values: \"Exact\", \"NotOlderThan\"", opts.ResourceVersionMatch))
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			return opts, apierrors.NewBadRequest(fmt.Sprintf("invalid limit %q", l))
		}
		if n > 0 {
			opts.Limit = n
		}
	}
	opts.Continue = q.Get("continue")
	opts.AllowBookmarks = parseBool(q.Get("allowWatchBookmarks"))
	if v := q.Get("sendInitialEvents"); v != "" {
		b := parseBool(v)
		opts.SendInitialEvents = &b
	}
	if opts.ResourceVersionMatch != "" && opts.ResourceVersion == "" && opts.SendInitialEvents == nil {
		return opts, apierrors.NewBadRequest("resourceVersionMatch is forbidden unless resourceVersion is provided")
	}
	if opts.SendInitialEvents != nil && opts.ResourceVersionMatch != "NotOlderThan" {
		return opts, apierrors.NewBadRequest("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
	}
	return opts, nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store) {
	opts, err := s.listOptions(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	conv, err := s.converterFor(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	// Encoded items are all a list in JSON, YAML or protobuf needs.
	opts.EncodedOnly = conv == nil
	res, err := st.List(r.Context(), info.Namespace, opts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if conv != nil {
		data, err := conv.List(res)
		if err != nil {
			writeError(w, r, err)
			return
		}
		writeRaw(w, r, http.StatusOK, data)
		return
	}
	writeList(w, r, st.Info, res)
}

// writeList writes a list page in the negotiated encoding, made from the
// items' cached encodings (writeJSONList; protobuf.WriteList) and streamed:
// a list of thousands of objects is neither re-encoded nor copied into one
// buffer first.
func writeList(w http.ResponseWriter, r *http.Request, ri api.ResourceInfo, res *registry.ListResult) {
	out, err := negotiateOutput(r)
	media := mediaJSON
	if err == nil {
		media = out.media
	}
	switch media {
	case mediaProtobuf:
		items := make([][]byte, len(res.Items))
		for i, it := range res.Items {
			items[i] = it.JSON
		}
		meta := api.ListMeta{ResourceVersion: res.ResourceVersion, Continue: res.Continue, RemainingItemCount: res.RemainingItemCount}
		// WriteList converts every item before it writes a byte.
		bw := &lazyHeaderWriter{w: w, contentType: protobuf.ContentType}
		if err := protobuf.WriteList(bw, ri.GroupVersion(), ri.ListKind(), meta, items); err != nil && !bw.started {
			writeError(w, r, apierrors.NewInternalError(err))
			return
		}
		bw.flush()
		return
	case mediaJSON:
		w.Header().Set("Content-Type", mediaJSON.String())
		w.WriteHeader(http.StatusOK)
		bw := bufio.NewWriterSize(w, 64<<10)
		writeJSONList(bw, ri, res)
		_ = bw.WriteByte('\n')
		_ = bw.Flush()
		return
	}
	writeRaw(w, r, http.StatusOK, encodeList(ri, res))
}

// lazyHeaderWriter buffers a streamed answer and sends the 200 header
// with its first bytes, so a failure before any byte is written can still
// be answered with an error status.
type lazyHeaderWriter struct {
	w           http.ResponseWriter
	contentType string
	bw          *bufio.Writer
	started     bool
}

func (l *lazyHeaderWriter) Write(p []byte) (int, error) {
	if !l.started {
		l.started = true
		l.w.Header().Set("Content-Type", l.contentType)
		l.w.WriteHeader(http.StatusOK)
		l.bw = bufio.NewWriterSize(l.w, 64<<10)
	}
	return l.bw.Write(p)
}

func (l *lazyHeaderWriter) flush() {
	if l.bw != nil {
		_ = l.bw.Flush()
	}
}

// encodeList is the list envelope around the cached item encodings, in
// one buffer (for the encodings made from JSON, such as YAML).
func encodeList(ri api.ResourceInfo, res *registry.ListResult) []byte {
	size := 256
	for _, it := range res.Items {
		size += len(it.JSON) + 1
	}
	var b bytes.Buffer
	b.Grow(size)
	bw := bufio.NewWriterSize(&b, 64<<10)
	writeJSONList(bw, ri, res)
	_ = bw.Flush()
	return b.Bytes()
}

// writeJSONList writes the list envelope around the cached item
// encodings, so a list of thousands of objects is not re-encoded.
func writeJSONList(b *bufio.Writer, ri api.ResourceInfo, res *registry.ListResult) {
	meta, _ := json.Marshal(api.ListMeta{ResourceVersion: res.ResourceVersion, Continue: res.Continue,
		RemainingItemCount: res.RemainingItemCount})
	b.WriteString(`{"kind":"`)
	b.WriteString(ri.ListKind())
	b.WriteString(`","apiVersion":"`)
	b.WriteString(ri.GroupVersion())
	b.WriteString(`","metadata":`)
	b.Write(meta)
	b.WriteString(`,"items":[`)
	for i, it := range res.Items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it.JSON)
	}
	b.WriteString("]}")
}

func (s *Server) watch(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store) {
	opts, err := s.listOptions(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if info.Name != "" {
		// GET .../pods/NAME?watch=true watches one object.
		sel, _ := fields.Parse("metadata.name=" + info.Name)
		opts.Fields = fields.AndSelectors(opts.Fields, sel)
	}
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents && !opts.AllowBookmarks {
		writeError(w, r, apierrors.NewInvalid(apierrors.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "",
			field.ErrorList{field.Forbidden(field.NewPath("allowWatchBookmarks"), "sendInitialEvents requires setting allowWatchBookmarks to true")}))
		return
	}
	timeout := s.cfg.MinRequestTimeout + time.Duration(rand.Int64N(int64(s.cfg.MinRequestTimeout)))
	if ts := r.URL.Query().Get("timeoutSeconds"); ts != "" {
		n, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || n < 0 {
			writeError(w, r, apierrors.NewBadRequest(fmt.Sprintf("invalid timeoutSeconds %q", ts)))
			return
		}
		if n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	out, err := negotiateStream(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	conv, err := s.converterFor(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	watcher, err := st.Watch(r.Context(), info.Namespace, opts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer watcher.Stop()
	s.metrics.watchers.WithLabelValues(st.Info.Group, st.Info.Resource).Inc()
	defer s.metrics.watchers.WithLabelValues(st.Info.Group, st.Info.Resource).Dec()

	// The watch cache hands out JSON lines; a protobuf watch turns each
	// into a frame.
	encode, contentType := func(line []byte) ([]byte, error) { return line, nil }, mediaJSON.String()
	if out.media == mediaProtobuf {
		encode, contentType = protobuf.WatchEventLine, protobuf.WatchContentType
	}
	if conv != nil {
		// A watch of tables or metadata turns each line into that first.
		encodeLine := encode
		encode = func(line []byte) ([]byte, error) {
			l, err := conv.WatchLine(line)
			if err != nil {
				return nil, err
			}
			return encodeLine(l)
		}
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	events := watcher.Events()
	for {
		select {
		case line, ok := <-events:
			if !ok {
				return
			}
			data, err := encode(line)
			if err != nil {
				s.log.Error("cannot encode a watch event; ending the watch", "resource", st.Info.Resource, "err", err)
				return
			}
			if _, err := w.Write(data); err != nil {
				return
			}
			// Batch writes while events are queued; flush when caught up.
			if len(events) == 0 && flusher != nil {
				flusher.Flush()
			}
		case <-timer.C:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// writeInput reads the options (dryRun, fieldManager, fieldValidation)
// and the object of a create or update, and answers fieldValidation for
// the body (a protobuf body cannot carry unknown or duplicate fields); ok
// is false when an error was written.
func writeInput(w http.ResponseWriter, r *http.Request, st *registry.Store, options string) (obj api.Object, opts registry.WriteOptions, ok bool) {
	o, err := parseWriteOptions(r, options, false)
	if err == nil {
		var b body
		if b, err = readBodyAs(r, st.Info.Kind); err == nil {
			obj = st.Info.New()
			err = decodeInto(b.json, obj, st.Info.GroupVersion(), st.Info.Kind)
		}
		if err == nil && b.media != mediaProtobuf {
			err = st.CheckBody(r.Context(), o.FieldValidation, b.json, b.yamlOriginal())
		}
	}
	if err != nil {
		writeError(w, r, err)
		return nil, o.WriteOptions, false
	}
	return obj, o.WriteOptions, true
}

func (s *Server) create(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store) {
	conv, err := s.converterFor(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, opts, ok := writeInput(w, r, st, "CreateOptions")
	if !ok {
		return
	}
	out, data, err := st.CreateEncoded(r.Context(), info.Namespace, obj, opts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, r, http.StatusCreated, conv, out, data)
}

func (s *Server) update(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store) {
	conv, err := s.converterFor(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, opts, ok := writeInput(w, r, st, "UpdateOptions")
	if !ok {
		return
	}
	opts.Subresource = info.Subresource
	out, created, err := st.Update(r.Context(), info.Namespace, info.Name, obj, opts)
	if err != nil {
		writeError(w, r, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	writeObject(w, r, code, conv, out, nil)
}

func (s *Server) patch(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store, sub string) {
	conv, err := s.converterFor(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ct := r.Header.Get("Content-Type")
	pt := registry.PatchType(strings.TrimSpace(strings.Split(ct, ";")[0]))
	switch pt {
	case registry.JSONPatch, registry.MergePatch, registry.StrategicPatch, registry.ApplyPatch:
	default:
		writeError(w, r, apierrors.NewUnsupportedMediaType(registry.PatchTypes))
		return
	}
	data, err := readAll(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	o, err := parseWriteOptions(r, "PatchOptions", pt == registry.ApplyPatch)
	if err != nil {
		writeError(w, r, err)
		return
	}
	o.Subresource = sub
	var out api.Object
	code := http.StatusOK
	if pt == registry.ApplyPatch {
		o.AuthorizeCreate = s.applyCreateCheck(info)
		var created bool
		out, created, err = st.Apply(r.Context(), info.Namespace, info.Name, data, o.force, o.WriteOptions)
		if created {
			code = http.StatusCreated
		}
	} else {
		out, err = st.Patch(r.Context(), info.Namespace, info.Name, pt, data, o.WriteOptions)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeObject(w, r, code, conv, out, nil)
}

// deleteOptions reads DeleteOptions from the body and the query, as
// Kubernetes accepts both.
func deleteOptions(r *http.Request) (*api.DeleteOptions, bool, error) {
	opts := &api.DeleteOptions{}
	dry, err := dryRun(r)
	if err != nil {
		return nil, false, err
	}
	body, err := readBody(r, "DeleteOptions")
	if err != nil {
		return nil, false, err
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := fieldvalidation.Decode(body, opts); err != nil {
			return nil, false, apierrors.NewBadRequest(fmt.Sprintf("DeleteOptions cannot be decoded: %v", err))
		}
	}
	q := r.URL.Query()
	if g := q.Get("gracePeriodSeconds"); g != "" {
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil {
			return nil, false, apierrors.NewBadRequest(fmt.Sprintf("invalid gracePeriodSeconds %q", g))
		}
		opts.GracePeriodSeconds = &n
	}
	if p := q.Get("propagationPolicy"); p != "" {
		pp := api.DeletionPropagation(p)
		opts.PropagationPolicy = &pp
	}
	if o := q.Get("orphanDependents"); o != "" {
		b := parseBool(o)
		opts.OrphanDependents = &b
	}
	if pp := opts.PropagationPolicy; pp != nil {
		switch *pp {
		case api.DeletePropagationBackground, api.DeletePropagationForeground, api.DeletePropagationOrphan:
		default:
			return nil, false, apierrors.NewInvalid(apierrors.GroupKind{Group: "meta.k8s.io", Kind: "DeleteOptions"}, "",
				field.ErrorList{field.NotSupported(field.NewPath("propagationPolicy"), string(*pp), []string{"Foreground", "Background", "Orphan"})})
		}
		if opts.OrphanDependents != nil {
			return nil, false, apierrors.NewBadRequest("orphanDependents and propagationPolicy may not both be set")
		}
	}
	return opts, dry || len(opts.DryRun) > 0, nil
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store) {
	conv, err := s.converterFor(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	opts, dry, err := deleteOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	obj, deleted, err := st.Delete(r.Context(), info.Namespace, info.Name, opts, dry)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !deleted || st.ReturnsDeletedObject() {
		code := http.StatusOK
		if !deleted && opts.OrphanDependents != nil && !*opts.OrphanDependents {
			code = http.StatusAccepted
		}
		writeObject(w, r, code, conv, obj, nil)
		return
	}
	meta := obj.GetObjectMeta()
	writeJSON(w, r, http.StatusOK, api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   api.StatusSuccess,
		Details:  &api.StatusDetails{Name: meta.Name, Group: st.Info.Group, Kind: st.Info.Resource, UID: meta.UID},
	})
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, info *request.Info, st *registry.Store) {
	opts, dry, err := deleteOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	lo, err := s.listOptions(r, st)
	if err != nil {
		writeError(w, r, err)
		return
	}
	objs, err := st.DeleteCollection(r.Context(), info.Namespace, lo, opts, dry)
	if err != nil {
		writeError(w, r, err)
		return
	}
	res := &registry.ListResult{}
	for _, o := range objs {
		data, err := json.Marshal(o)
		if err != nil {
			writeError(w, r, err)
			return
		}
		res.Items = append(res.Items, registry.Item{JSON: data, Object: o})
	}
	writeList(w, r, st.Info, res)
}
