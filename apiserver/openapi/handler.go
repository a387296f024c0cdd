package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	openapiv2 "github.com/google/gnostic-models/openapiv2"
	openapiv3 "github.com/google/gnostic-models/openapiv3"
	"google.golang.org/protobuf/proto"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/api/apierrors"
)

// The protobuf media types kube-apiserver serves besides JSON; client-go's
// discovery.OpenAPISchema asks for the v2 one with the older "@" spelling.
const (
	v2ProtoType           = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	v2ProtoTypeDeprecated = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	v3ProtoType           = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"
	v3ProtoTypeDeprecated = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
)

// representations are the encodings of one document: JSON, and protobuf
// made from it on first request (parsing the JSON back is the slow part of
// building otherwise). The ETag is the SHA-512 of the JSON, as
// kube-apiserver computes it.
type representations struct {
	etag      string
	json      encoded
	protoType string
	toProto   func([]byte) ([]byte, error)

	protoOnce sync.Once
	proto     encoded
	protoErr  error
}

// encoded is one encoding, kept gzipped alone: clients ask for gzip
// (client-go, kubectl) and the JSON is about fourteen times the size; the
// rare other client gets it uncompressed on the fly.
type encoded struct {
	gz []byte
}

func newEncoded(data []byte) encoded {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = zw.Write(data)
	_ = zw.Close()
	return encoded{gz: slices.Clip(buf.Bytes())}
}

// plain returns the encoding uncompressed.
func (e encoded) plain() ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(e.gz))
	if err != nil {
		return nil, fmt.Errorf("gunzip openapi document: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("gunzip openapi document: %w", err)
	}
	return data, nil
}

func newRepresentations(jsonData []byte, protoType string, toProto func([]byte) ([]byte, error)) *representations {
	return &representations{etag: fmt.Sprintf("%X", sha512.Sum512(jsonData)), json: newEncoded(jsonData),
		protoType: protoType, toProto: toProto}
}

func (r *representations) protobuf() (encoded, error) {
	r.protoOnce.Do(func() {
		doc, err := r.json.plain()
		if err != nil {
			r.protoErr = err
			return
		}
		data, err := r.toProto(doc)
		if err != nil {
			r.protoErr = err
			return
		}
		r.proto = newEncoded(data)
	})
	return r.proto, r.protoErr
}

func v2ToProto(data []byte) ([]byte, error) {
	doc, err := openapiv2.ParseDocument(data)
	if err != nil {
		return nil, fmt.Errorf("parse openapi v2 for protobuf: %w", err)
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(doc)
}

func v3ToProto(data []byte) ([]byte, error) {
	doc, err := openapiv3.ParseDocument(data)
	if err != nil {
		return nil, fmt.Errorf("parse openapi v3 for protobuf: %w", err)
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(doc)
}

// V2 serves /openapi/v2: JSON by default, protobuf when the Accept header
// prefers it.
func (d *Docs) V2() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readOnly(w, r) {
			return
		}
		v2, err := d.currentV2()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		d.serve(w, r, v2, false, v2ProtoTypeDeprecated)
	})
}

// V3 serves /openapi/v3 (the discovery document) and
// /openapi/v3/api/v1, /openapi/v3/apis/GROUP/VERSION. A request with
// ?hash= gets a response cacheable forever, or a redirect to the current
// hash if it names an old one.
func (d *Docs) V3() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !readOnly(w, r) {
			return
		}
		gv := strings.Trim(strings.TrimPrefix(r.URL.Path, "/openapi/v3"), "/")
		docs, index, err := d.currentV3()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		rep := docs[gv]
		if gv == "" {
			d.serve(w, r, index, false)
			return
		}
		if rep == nil {
			notFound(w)
			return
		}
		if h := r.URL.Query().Get("hash"); h != "" && h != rep.etag {
			http.Redirect(w, r, "/openapi/v3/"+gv+"?hash="+rep.etag, http.StatusMovedPermanently)
			return
		}
		d.serve(w, r, rep, r.URL.Query().Get("hash") != "", v3ProtoTypeDeprecated)
	})
}

// serve writes the representation the Accept header picks, honouring
// If-None-Match and gzip. immutable marks responses to hashed URLs.
func (d *Docs) serve(w http.ResponseWriter, r *http.Request, rep *representations, immutable bool, protoAliases ...string) {
	w.Header().Add("Vary", "Accept")
	w.Header().Add("Vary", "Accept-Encoding")
	offered := []string{"application/json"}
	if rep.protoType != "" {
		offered = append(offered, rep.protoType)
		offered = append(offered, protoAliases...)
	}
	choice, ok := negotiate(r.Header.Get("Accept"), offered)
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotAcceptable)
		_, _ = fmt.Fprintf(w, "only %s can be served\n", strings.Join(offered, ", "))
		return
	}
	body, contentType := rep.json, "application/json"
	if choice != "application/json" {
		var err error
		if body, err = rep.protobuf(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		contentType = rep.protoType
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Etag", strconv.Quote(rep.etag))
	if immutable {
		w.Header().Set("Cache-Control", "public, immutable")
		w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat))
	}
	data := body.gz
	if acceptsGzip(r) {
		w.Header().Set("Content-Encoding", "gzip")
	} else {
		var err error
		if data, err = body.plain(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	d.mu.RLock()
	modified := d.modified
	d.mu.RUnlock()
	http.ServeContent(w, r, "", modified, bytes.NewReader(data))
}

func readOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	apierrors.WriteStatus(w, apierrors.NewGeneric(http.StatusMethodNotAllowed, api.StatusReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource").Status())
	return false
}

func notFound(w http.ResponseWriter) {
	apierrors.WriteStatus(w, apierrors.NewGeneric(http.StatusNotFound, api.StatusReasonNotFound,
		"the server could not find the requested resource").Status())
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && qValue(params) > 0 {
			return true
		}
	}
	return false
}

// negotiate picks the offered media type the Accept header prefers: clauses
// by decreasing q, more specific first among equals, wildcards matching the
// first offer. An empty header accepts anything.
func negotiate(accept string, offered []string) (string, bool) {
	if strings.TrimSpace(accept) == "" {
		return offered[0], true
	}
	type clause struct {
		typ, sub string
		q        float64
		wild     int
	}
	var clauses []clause
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		typ, sub, _ := strings.Cut(strings.ToLower(strings.TrimSpace(mt)), "/")
		if typ == "" {
			continue
		}
		c := clause{typ: typ, sub: sub, q: qValue(params)}
		if typ == "*" {
			c.wild++
		}
		if sub == "*" {
			c.wild++
		}
		if c.q > 0 {
			clauses = append(clauses, c)
		}
	}
	slices.SortStableFunc(clauses, func(a, b clause) int {
		switch {
		case a.q > b.q:
			return -1
		case a.q < b.q:
			return 1
		}
		return a.wild - b.wild
	})
	for _, c := range clauses {
		for _, o := range offered {
			typ, sub, _ := strings.Cut(o, "/")
			if (c.typ == "*" || c.typ == typ) && (c.sub == "*" || c.sub == sub) {
				return o, true
			}
		}
	}
	return "", false
}

// qValue reads the q parameter of a header clause's parameters (1 if absent).
func qValue(params string) float64 {
	for _, p := range strings.Split(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0
			}
			return q
		}
	}
	return 1
}
