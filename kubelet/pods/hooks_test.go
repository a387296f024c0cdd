package pods

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/minik8s/minik8s/api"
)

// TestHTTPHook: a hook's GET goes to the pod's IP with kube's User-Agent;
// any answer succeeds (kube ignores the status); an HTTPS hook answered in
// plain HTTP is retried in HTTP; a refused connection fails.
func TestHTTPHook(t *testing.T) {
	var got []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.RequestURI()+" "+r.UserAgent())
		w.WriteHeader(http.StatusInternalServerError)
	})
	plain, tlsSrv := httptest.NewServer(h), httptest.NewTLSServer(h)
	defer plain.Close()
	defer tlsSrv.Close()
	port := func(s *httptest.Server) api.IntOrString {
		_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
		n, _ := strconv.Atoi(p)
		return api.IntOrString{Type: api.Int, IntVal: int32(n)}
	}
	closed := httptest.NewServer(h)
	closedPort := port(closed)
	closed.Close()
	path := "/dial?host=10.0.0.1&port=8080&request=echo%3Fmsg%3Dpoststart"
	for _, tc := range []struct {
		name    string
		g       api.HTTPGetAction
		wantErr bool
		want    string
	}{
		{"http", api.HTTPGetAction{Path: path, Port: port(plain)}, false, path + " kube-lifecycle/1.37"},
		{"https", api.HTTPGetAction{Path: "echo?msg=x", Port: port(tlsSrv), Scheme: "HTTPS"}, false, "/echo?msg=x kube-lifecycle/1.37"},
		{"https answered in http", api.HTTPGetAction{Path: "/y", Port: port(plain), Scheme: "HTTPS"}, false, "/y kube-lifecycle/1.37"},
		{"refused", api.HTTPGetAction{Path: "/z", Port: closedPort}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = nil
			err := httpHook(context.Background(), &tc.g, &api.Container{Name: "c"}, "127.0.0.1")
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if tc.want != "" && (len(got) != 1 || got[0] != tc.want) {
				t.Errorf("requests %q, want [%q]", got, tc.want)
			}
		})
	}
}
