package write

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/minik8s/minik8s/internal/client"
	"github.com/minik8s/minik8s/kubectl-lite/cli"
	"github.com/minik8s/minik8s/kubectl-lite/manifest"
)

// Writer sends the writes of one verb under its --dry-run strategy. It
// keeps the server's answer to the last write (or what SetResult stored)
// for -o.
type Writer struct {
	c      *client.Client
	dry    cli.DryRun
	result []byte
	// fieldManager, if set, names the writes in managedFields.
	fieldManager string
}

// New returns a Writer sending through c.
func New(c *client.Client, dry cli.DryRun) *Writer {
	return &Writer{c: c, dry: dry}
}

// SetFieldManager names the writer's writes in managedFields (the
// fieldManager query); "" leaves it to the server (the User-Agent).
func (w *Writer) SetFieldManager(m string) { w.fieldManager = m }

// DryRun is the strategy the writer sends under.
func (w *Writer) DryRun() cli.DryRun { return w.dry }

// Result is the server's answer to the last write, or what SetResult
// stored; nil after a client dry run.
func (w *Writer) Result() []byte { return w.result }

// SetResult stores b as the result without a write: the live object of
// an unchanged apply, or nil to forget the previous object's.
func (w *Writer) SetResult(b []byte) { w.result = b }

func (w *Writer) send(ctx context.Context, method string, o manifest.Object, name, contentType string, body []byte, extra url.Values) ([]byte, error) {
	if w.dry == cli.DryRunClient {
		return nil, nil
	}
	q := w.dry.Query()
	if w.fieldManager != "" || len(extra) > 0 {
		if q == nil {
			q = url.Values{}
		}
		if w.fieldManager != "" {
			q.Set("fieldManager", w.fieldManager)
		}
		for k, v := range extra {
			q[k] = v
		}
	}
	resp, err := w.c.Do(ctx, client.Request{Method: method, Path: client.ResourcePath(o.Info, o.Namespace(), name),
		Query: q, Body: body, ContentType: contentType})
	if err == nil {
		w.result = resp
	}
	return resp, err
}

// Create POSTs body and returns the name the server gave the object (the
// manifest's, or one made from generateName).
func (w *Writer) Create(ctx context.Context, o manifest.Object, body []byte) (string, error) {
	resp, err := w.send(ctx, http.MethodPost, o, "", "", body, nil)
	if err != nil {
		return "", err
	}
	var created struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal(resp, &created) == nil && created.Metadata.Name != "" {
		return created.Metadata.Name, nil
	}
	return o.Name(), nil
}

// Patch sends body as a patch of type pt of the live object.
func (w *Writer) Patch(ctx context.Context, o manifest.Object, pt client.PatchType, body []byte) error {
	_, err := w.send(ctx, http.MethodPatch, o, o.Name(), string(pt), body, nil)
	return err
}

// Replace PUTs body over the live object.
func (w *Writer) Replace(ctx context.Context, o manifest.Object, body []byte) error {
	_, err := w.send(ctx, http.MethodPut, o, o.Name(), "", body, nil)
	return err
}

// ApplyPatchType is the Content-Type of a server-side apply.
const ApplyPatchType = "application/apply-patch+yaml"

// Apply sends body as a server-side apply of the object under the
// writer's field manager; force takes over fields other managers own
// (kubectl sends force=false otherwise).
func (w *Writer) Apply(ctx context.Context, o manifest.Object, body []byte, force bool) error {
	_, err := w.send(ctx, http.MethodPatch, o, o.Name(), ApplyPatchType, body,
		url.Values{"force": {strconv.FormatBool(force)}})
	return err
}
