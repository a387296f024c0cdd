package root_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// fakeStreamingServer answers the three requests logs and exec make: the
// pod GET, pods/NAME/log and a WebSocket pods/NAME/exec speaking
// v5.channel.k8s.io. It stands in for the apiserver's kubelet proxy.
func fakeStreamingServer(t *testing.T, logQuery chan<- string) *httptest.Server {
	pod := api.Pod{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "default"},
		Spec:       api.PodSpec{NodeName: "n1", Containers: []api.Container{{Name: "app"}, {Name: "sidecar"}}},
		Status:     api.PodStatus{Phase: api.PodRunning}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/namespaces/default/pods/p", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(pod)
	})
	mux.HandleFunc("GET /api/v1/namespaces/default/pods/p/log", func(w http.ResponseWriter, r *http.Request) {
		logQuery <- r.URL.RawQuery
		w.Write([]byte("2026-12-02T17:00:00.1Z line one\n2026-12-02T17:00:01.2Z line two\n"))
	})
	mux.HandleFunc("GET /api/v1/namespaces/default/pods/p/exec", func(w http.ResponseWriter, r *http.Request) {
		up := websocket.Upgrader{Subprotocols: []string{"v5.channel.k8s.io"}}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer conn.Close()
		send := func(ch byte, s string) { conn.WriteMessage(websocket.BinaryMessage, append([]byte{ch}, s...)) }
		q := r.URL.Query()
		send(1, "container="+q.Get("container")+" command="+strings.Join(q["command"], " ")+"\n")
		if q.Get("stdin") == "true" {
			for {
				_, msg, err := conn.ReadMessage()
				if err != nil || msg[0] == 255 {
					break
				}
				send(1, strings.ToUpper(string(msg[1:])))
			}
		}
		status := `{"metadata":{},"status":"Success"}`
		if q["command"][len(q["command"])-1] == "exit 3" {
			send(2, "failing\n")
			status = `{"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: exit status 3","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}`
		}
		send(3, status)
		conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestLogsExecStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the built binary")
	}
	logQuery := make(chan string, 1)
	s := fakeStreamingServer(t, logQuery)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubeconfig.Write(path, kubeconfig.NewForCluster(s.URL, nil, "admin", kubeconfig.AuthInfo{}, "")); err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, kubeconfig: path}

	out, errOut, code := c.run("", "logs", "p", "-c", "sidecar", "--tail=2", "--timestamps", "-p")
	if code != 0 || out != "2026-12-02T17:00:00.1Z line one\n2026-12-02T17:00:01.2Z line two\n" || errOut != "" {
		t.Errorf("logs: exit %d stdout %q stderr %q", code, out, errOut)
	}
	if q := <-logQuery; q != "container=sidecar&previous=true&tailLines=2&timestamps=true" {
		t.Errorf("log query %q", q)
	}
	if _, errOut, _ := c.run("", "logs", "p"); errOut != "Defaulted container \"app\" out of: app, sidecar\n" {
		t.Errorf("logs without -c: stderr %q", errOut)
	}
	<-logQuery

	out, errOut, code = c.run("", "exec", "p", "-c", "sidecar", "--", "sh", "-c", "exit 3")
	if code != 3 || out != "container=sidecar command=sh -c exit 3\n" || errOut != "failing\ncommand terminated with exit code 3\n" {
		t.Errorf("exec exit 3: exit %d stdout %q stderr %q", code, out, errOut)
	}
	var stdin bytes.Buffer
	stdin.WriteString("hello\n")
	out, errOut, code = c.run(stdin.String(), "exec", "-i", "p", "--", "cat")
	if code != 0 || out != "container=app command=cat\nHELLO\n" || !strings.HasPrefix(errOut, "Defaulted container \"app\"") {
		t.Errorf("exec -i: exit %d stdout %q stderr %q", code, out, errOut)
	}
	// -t without a terminal falls back to plain streams, as kubectl does.
	if _, errOut, code := c.run("", "exec", "-it", "p", "-c", "app", "--", "cat"); code != 0 ||
		!strings.Contains(errOut, "Unable to use a TTY - input is not a terminal or the right kind of file") {
		t.Errorf("exec -it without a tty: exit %d stderr %q", code, errOut)
	}
}

// TestLogsSelectorAllContainers checks logs -l over several pods, with
// --all-containers and --prefix, and kubectl's default of 10 lines.
func TestLogsSelectorAllContainers(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the built binary")
	}
	mkPod := func(name string) api.Pod {
		return api.Pod{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": "web"}},
			Spec: api.PodSpec{InitContainers: []api.Container{{Name: "init"}},
				Containers: []api.Container{{Name: "app"}, {Name: "sidecar"}}}}
	}
	var mu sync.Mutex
	var queries []string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/namespaces/default/pods", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("labelSelector") != "app=web" {
			t.Errorf("pod list query %q", r.URL.RawQuery)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(api.PodList{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []api.Pod{mkPod("web-b"), mkPod("web-a")}})
	})
	mux.HandleFunc("GET /api/v1/namespaces/default/pods/{pod}/log", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.PathValue("pod")+"?"+r.URL.RawQuery)
		mu.Unlock()
		fmt.Fprintf(w, "one from %s\ntwo from %s\n", r.URL.Query().Get("container"), r.PathValue("pod"))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubeconfig.Write(path, kubeconfig.NewForCluster(s.URL, nil, "admin", kubeconfig.AuthInfo{}, "")); err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, kubeconfig: path}

	out, errOut, code := c.run("", "logs", "-l", "app=web", "--all-containers", "--prefix")
	want := ""
	for _, p := range []string{"web-a", "web-b"} {
		for _, ctr := range []string{"init", "app", "sidecar"} {
			want += "[pod/" + p + "/" + ctr + "] one from " + ctr + "\n[pod/" + p + "/" + ctr + "] two from " + p + "\n"
		}
	}
	if code != 0 || out != want || errOut != "" {
		t.Errorf("logs -l --all-containers --prefix: exit %d stderr %q stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
	mu.Lock()
	if len(queries) != 6 || queries[0] != "web-a?container=init&tailLines=10" {
		t.Errorf("log requests %q", queries)
	}
	queries = nil
	mu.Unlock()

	// Following more streams than --max-log-requests is refused up front.
	c.wantFail("error: you are attempting to follow 6 log streams, but maximum allowed concurrency is 5, use --max-log-requests to increase the limit",
		"logs", "-f", "-l", "app=web", "--all-containers")
	out, _, code = c.run("", "logs", "-l", "app=web", "-c", "app", "--tail=1", "--since-time=2026-12-02T17:00:00Z")
	if code != 0 || out != "one from app\ntwo from web-a\none from app\ntwo from web-b\n" {
		t.Errorf("logs -l -c app: exit %d stdout %q", code, out)
	}
	mu.Lock()
	if len(queries) != 2 || queries[1] != "web-b?container=app&sinceTime=2026-12-02T17%3A00%3A00Z&tailLines=1" {
		t.Errorf("log requests %q", queries)
	}
	mu.Unlock()
	c.wantFail("error: only a selector (-l) or a POD name is allowed", "logs", "web-a", "-l", "app=web")
}
