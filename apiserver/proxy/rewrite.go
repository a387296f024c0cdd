package proxy

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/minik8s/minik8s/api/apierrors"
)

// urlAttrs are the attributes holding URLs, by tag, that an HTML answer
// has rewritten (apimachinery's atomsToAttrs).
var urlAttrs = map[atom.Atom][]string{
	atom.A:          {"href"},
	atom.Applet:     {"codebase"},
	atom.Area:       {"href"},
	atom.Audio:      {"src"},
	atom.Base:       {"href"},
	atom.Blockquote: {"cite"},
	atom.Body:       {"background"},
	atom.Button:     {"formaction"},
	atom.Command:    {"icon"},
	atom.Del:        {"cite"},
	atom.Embed:      {"src"},
	atom.Form:       {"action"},
	atom.Frame:      {"longdesc", "src"},
	atom.Head:       {"profile"},
	atom.Html:       {"manifest"},
	atom.Iframe:     {"longdesc", "src"},
	atom.Img:        {"longdesc", "src", "usemap"},
	atom.Input:      {"src", "usemap", "formaction"},
	atom.Ins:        {"cite"},
	atom.Link:       {"href"},
	atom.Object:     {"classid", "codebase", "data", "usemap"},
	atom.Q:          {"cite"},
	atom.Script:     {"src"},
	atom.Source:     {"src"},
	atom.Video:      {"poster", "src"},
}

// rewritingTransport is the transport of a proxied (not upgraded)
// request: it sets the X-Forwarded headers, turns a failure to reach the
// backend into 503 "error trying to reach service", drops the backend's
// CORS headers, and rewrites the answer's Location and the same-host
// absolute links of an HTML answer to go through the apiserver again
// (under pathPrepend, the request's path up to the proxied part), as
// kube's proxy Transport does. Any other answer passes through as is.
type rewritingTransport struct {
	scheme, host, pathPrepend string
	rt                        http.RoundTripper
	log                       *slog.Logger
}

func (t *rewritingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	forwardedURI := path.Join(t.pathPrepend, req.URL.EscapedPath())
	if strings.HasSuffix(req.URL.Path, "/") {
		forwardedURI += "/"
	}
	req.Header.Set("X-Forwarded-Uri", forwardedURI)
	if t.host != "" {
		req.Header.Set("X-Forwarded-Host", t.host)
	}
	if t.scheme != "" {
		req.Header.Set("X-Forwarded-Proto", t.scheme)
	}
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err))
	}
	for _, h := range []string{"Access-Control-Allow-Credentials", "Access-Control-Allow-Headers", "Access-Control-Allow-Methods", "Access-Control-Allow-Origin"} {
		resp.Header.Del(h)
	}
	if redirect := resp.Header.Get("Location"); redirect != "" {
		target, err := url.Parse(redirect)
		if err != nil {
			resp.Body.Close()
			return nil, apierrors.NewInternalError(fmt.Errorf("error trying to parse Location header: %v", err))
		}
		resp.Header.Set("Location", t.rewriteURL(target, req.URL, req.Host))
		return resp, nil
	}
	ctype, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	if strings.TrimSpace(ctype) != "text/html" {
		return resp, nil
	}
	return t.rewriteHTMLResponse(req, resp)
}

// rewriteURL makes u, found on the page at source (requested with Host
// header requestHost), go through the proxy: a relative URL or one to
// another host stays as it is; an absolute path gets the proxy's prefix.
func (t *rewritingTransport) rewriteURL(u, source *url.URL, requestHost string) string {
	differentHost := u.Host != "" && u.Host != source.Host && u.Host != requestHost
	if differentHost || !strings.HasPrefix(u.Path, "/") {
		return u.String()
	}
	if !(u.Host == requestHost && t.scheme == "" && t.host == "") {
		u.Scheme, u.Host = t.scheme, t.host
	}
	orig := u.Path
	if strings.HasPrefix(u.Path, t.pathPrepend) {
		return u.String()
	}
	u.Path = path.Join(t.pathPrepend, u.Path)
	if strings.HasSuffix(orig, "/") {
		u.Path += "/"
	}
	return u.String()
}

// rewriteHTMLResponse rewrites the links of an HTML answer, through its
// gzip or deflate encoding; an encoding it does not know passes as is.
func (t *rewritingTransport) rewriteHTMLResponse(req *http.Request, resp *http.Response) (*http.Response, error) {
	body := resp.Body
	defer body.Close()
	var out bytes.Buffer
	var r io.Reader = body
	var w io.Writer = &out
	var closeWriter func() error
	switch enc := resp.Header.Get("Content-Encoding"); enc {
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, fmt.Errorf("errorf making gzip reader: %v", err)
		}
		zw := gzip.NewWriter(&out)
		r, w, closeWriter = zr, zw, zw.Close
	case "deflate":
		fw, err := flate.NewWriter(&out, flate.BestCompression)
		if err != nil {
			return nil, fmt.Errorf("errorf making flate writer: %v", err)
		}
		r, w, closeWriter = flate.NewReader(body), fw, fw.Close
	case "":
	default:
		t.log.Warn("proxy cannot rewrite the links of an HTML answer in this encoding", "encoding", enc)
		return resp, nil
	}
	err := rewriteHTML(r, w, func(u *url.URL) string { return t.rewriteURL(u, req.URL, req.Host) })
	if closeWriter != nil {
		if cerr := closeWriter(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("rewrite the links of the HTML answer: %w", err)
	}
	resp.Body = io.NopCloser(&out)
	resp.Header.Del("Content-Length")
	resp.ContentLength = int64(out.Len())
	return resp, nil
}

// rewriteHTML copies an HTML document from r to w with each URL-valued
// attribute passed through rewrite (a value that is no URL stays).
func rewriteHTML(r io.Reader, w io.Writer, rewrite func(*url.URL) string) error {
	z := html.NewTokenizer(r)
	for {
		var err error
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() == io.EOF {
				return nil
			}
			return z.Err()
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if attrs, ok := urlAttrs[tok.DataAtom]; ok {
				for i, a := range tok.Attr {
					if !contains(attrs, a.Key) {
						continue
					}
					if u, perr := url.Parse(a.Val); perr == nil {
						tok.Attr[i].Val = rewrite(u)
					}
				}
			}
			_, err = io.WriteString(w, tok.String())
		default:
			_, err = w.Write(z.Raw())
		}
		if err != nil {
			return err
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
