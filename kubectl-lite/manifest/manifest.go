package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/kubectl-lite/resource"
)

// Object is one manifest object with the resource it is of.
type Object struct {
	Info   api.ResourceInfo
	Object map[string]any
	// Source is the file it came from, for messages.
	Source string
}

// Resolved says whether o's kind is known: built in, or found by Resolve.
func (o Object) Resolved() bool { return o.Info.Resource != "" }

// Resolve finds the resource of each object whose kind is not built in
// through find (a discovery-backed Mapper's FindKind), as kubectl's
// builder maps every object before it acts on any. The objects found are
// returned in order; each one not found gives kubectl's mapping error, so
// the caller can go on with the rest (a CRD applied with an object of it
// in the same run).
func Resolve(objs []Object, find func(apiVersion, kind string) (api.ResourceInfo, bool)) ([]Object, []error) {
	var out []Object
	var errs []error
	for _, o := range objs {
		if !o.Resolved() {
			apiVersion, _ := o.Object["apiVersion"].(string)
			kind, _ := o.Object["kind"].(string)
			info, ok := find(apiVersion, kind)
			if !ok {
				errs = append(errs, fmt.Errorf("resource mapping not found for name: %q namespace: %q from %q: no matches for kind %q in version %q\nensure CRDs are installed first",
					o.Name(), o.Namespace(), o.Source, kind, apiVersion))
				continue
			}
			o.Info = info
		}
		out = append(out, o)
	}
	return out, errs
}

// Name is metadata.name.
func (o Object) Name() string { return o.meta("name") }

// GenerateName is metadata.generateName.
func (o Object) GenerateName() string { return o.meta("generateName") }

// Namespace is metadata.namespace ("" when not set).
func (o Object) Namespace() string { return o.meta("namespace") }

// Ref names the object o is a manifest of.
func (o Object) Ref() resource.Ref {
	return resource.Ref{Info: o.Info, Namespace: o.Namespace(), Name: o.Name()}
}

func (o Object) meta(k string) string {
	md, _ := o.Object["metadata"].(map[string]any)
	s, _ := md[k].(string)
	return s
}

// SetName sets metadata.name.
func (o Object) SetName(name string) {
	md, _ := o.Object["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		o.Object["metadata"] = md
	}
	md["name"] = name
}

// SetNamespace sets metadata.namespace.
func (o Object) SetNamespace(ns string) {
	md, _ := o.Object["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		o.Object["metadata"] = md
	}
	md["namespace"] = ns
}

// Read returns the objects of every -f argument in order; "-" is in, and
// an http(s) URL is fetched.
// Nothing is returned on any error, so a bad manifest changes nothing.
func Read(filenames []string, recursive bool, in io.Reader) ([]Object, error) {
	if len(filenames) == 0 {
		return nil, errors.New("must specify one of -f and -k")
	}
	var out []Object
	for _, f := range filenames {
		if f == "-" {
			b, err := io.ReadAll(in)
			if err != nil {
				return nil, fmt.Errorf("read stdin: %w", err)
			}
			objs, err := Decode(b, "STDIN")
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
			continue
		}
		if strings.HasPrefix(f, "http://") || strings.HasPrefix(f, "https://") {
			b, err := fetch(f)
			if err != nil {
				return nil, err
			}
			objs, err := Decode(b, f)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
			continue
		}
		files, err := expand(f, recursive)
		if err != nil {
			return nil, err
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("the path %q does not exist", p)
			}
			objs, err := Decode(b, p)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

// fetch reads a manifest from a URL, as kubectl -f does, retrying a 5xx
// answer a few times.
func fetch(u string) ([]byte, error) {
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * time.Second)
		}
		resp, err := urlClient.Get(u)
		if err != nil {
			return nil, fmt.Errorf("unable to read URL %q, server reported %v", u, err)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		switch {
		case err != nil:
			return nil, fmt.Errorf("unable to read URL %q: %w", u, err)
		case resp.StatusCode == http.StatusOK:
			return b, nil
		case resp.StatusCode >= 500:
			last = fmt.Errorf("unable to read URL %q, server reported %s, status code=%d", u, resp.Status, resp.StatusCode)
			continue
		}
		return nil, fmt.Errorf("unable to read URL %q, server reported %s, status code=%d", u, resp.Status, resp.StatusCode)
	}
	return nil, last
}

var urlClient = &http.Client{Timeout: 30 * time.Second}

func expand(path string, recursive bool) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("the path %q does not exist", path)
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != path && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", path, err)
	}
	sort.Strings(files)
	return files, nil
}

// Decode splits b into documents and decodes each, expanding Lists. Like
// kubectl, input whose first non-blank byte is "{" is a stream of JSON
// objects (one or several, one after the other); anything else is YAML
// documents separated by "---" lines.
func Decode(b []byte, source string) ([]Object, error) {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return decodeJSONStream(t, source)
	}
	var out []Object
	for i, doc := range splitDocuments(b) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("error parsing %s: error converting YAML to JSON: %w", source, err)
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("error parsing %s (document %d): %w", source, i+1, err)
		}
		if m == nil {
			continue
		}
		objs, err := objects(m, source)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// decodeJSONStream decodes concatenated JSON objects.
func decodeJSONStream(b []byte, source string) ([]Object, error) {
	var out []Object
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	for i := 1; ; i++ {
		var m map[string]any
		err := dec.Decode(&m)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("error parsing %s (object %d): %w", source, i, err)
		}
		if m == nil {
			continue
		}
		objs, err := objects(m, source)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
}

func objects(m map[string]any, source string) ([]Object, error) {
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	if apiVersion == "" || kind == "" {
		return nil, fmt.Errorf("error validating %q: error validating data: [apiVersion not set, kind not set]", source)
	}
	if strings.HasSuffix(kind, "List") {
		items, _ := m["items"].([]any)
		var out []Object
		for _, it := range items {
			im, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("error parsing %s: a List item is not an object", source)
			}
			objs, err := objects(im, source)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	// A kind minik8s does not build in (a custom resource) is resolved
	// later, through discovery (Files.Objects, Resolve).
	info, _ := api.LookupKind(apiVersion, kind)
	o := Object{Info: info, Object: m, Source: source}
	if o.Name() == "" && o.GenerateName() == "" {
		return nil, fmt.Errorf("error when retrieving current configuration of %s from %q: resource name may not be empty", kind, source)
	}
	return []Object{o}, nil
}

// splitDocuments cuts YAML at "---" separator lines.
func splitDocuments(b []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimRight(line, " \t") == "---" || strings.HasPrefix(line, "--- ") {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	docs = append(docs, cur.Bytes())
	return docs
}
