package root_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/minik8s/minik8s/api"
	"github.com/minik8s/minik8s/internal/kubeconfig"
)

// TestCopy drives cp both ways against a fake kubelet proxy that plays tar:
// "tar cf - /data/dir" answers a tar of that tree (and a hostile "../"
// entry), "tar -xmf - -C DIR" records the archive it is sent.
func TestCopy(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the built binary")
	}
	var (
		mu       sync.Mutex
		commands []string
		received = map[string]string{}
	)
	pod := api.Pod{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: api.ObjectMeta{Name: "p", Namespace: "team"},
		Spec:       api.PodSpec{NodeName: "n1", Containers: []api.Container{{Name: "app"}}},
		Status:     api.PodStatus{Phase: api.PodRunning}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/namespaces/team/pods/p", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(pod)
	})
	mux.HandleFunc("GET /api/v1/namespaces/team/pods/p/exec", func(w http.ResponseWriter, r *http.Request) {
		up := websocket.Upgrader{Subprotocols: []string{"v5.channel.k8s.io"}}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer conn.Close()
		command := r.URL.Query()["command"]
		mu.Lock()
		commands = append(commands, strings.Join(command, " "))
		mu.Unlock()
		send := func(ch byte, b []byte) { conn.WriteMessage(websocket.BinaryMessage, append([]byte{ch}, b...)) }
		switch {
		case len(command) == 4 && command[1] == "cf":
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, f := range []struct{ name, body string }{
				{"data/dir/", ""}, {"data/dir/a.txt", "alpha"}, {"data/dir/sub/", ""}, {"data/dir/sub/b.txt", "beta"}, {"data/dir/../../../escape.txt", "evil"},
			} {
				h := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}
				if strings.HasSuffix(f.name, "/") {
					h.Typeflag, h.Mode = tar.TypeDir, 0o755
				}
				tw.WriteHeader(h)
				io.WriteString(tw, f.body)
			}
			tw.Close()
			// In several frames, as a real stream would come.
			for b := buf.Bytes(); len(b) > 0; {
				n := min(len(b), 700)
				send(1, b[:n])
				b = b[n:]
			}
		case command[1] == "-xmf":
			var in bytes.Buffer
			for {
				_, msg, err := conn.ReadMessage()
				if err != nil || msg[0] == 255 {
					break
				}
				in.Write(msg[1:])
			}
			tr := tar.NewReader(&in)
			for {
				h, err := tr.Next()
				if err != nil {
					break
				}
				b, _ := io.ReadAll(tr)
				mu.Lock()
				received[h.Name] = string(b)
				mu.Unlock()
			}
		}
		send(3, []byte(`{"metadata":{},"status":"Success"}`))
		conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubeconfig.Write(path, kubeconfig.NewForCluster(s.URL, nil, "admin", kubeconfig.AuthInfo{}, "")); err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, kubeconfig: path}

	// From the pod: the remote directory becomes the local one.
	dst := filepath.Join(t.TempDir(), "out")
	_, errOut, code := c.run("", "cp", "team/p:/data/dir", dst)
	if errOut != "" {
		t.Errorf("cp from the pod: stderr %q", errOut)
	}
	if code != 0 {
		t.Fatalf("cp from the pod: exit %d stderr %q", code, errOut)
	}
	for name, want := range map[string]string{"a.txt": "alpha", "sub/b.txt": "beta"} {
		if b, err := os.ReadFile(filepath.Join(dst, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dst), "escape.txt")); err == nil {
		t.Error("a ../ entry was written outside the destination")
	}

	// To the pod: a local tree packed under the destination's name.
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "conf"), 0o755)
	os.WriteFile(filepath.Join(src, "top.txt"), []byte("top"), 0o644)
	os.WriteFile(filepath.Join(src, "conf", "x.yaml"), []byte("x: 1"), 0o644)
	if _, errOut, code := c.run("", "-n", "team", "cp", src, "p:/srv/site"); code != 0 {
		t.Fatalf("cp to the pod: exit %d stderr %q", code, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	var names []string
	for n := range received {
		names = append(names, n)
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "site/ site/conf/ site/conf/x.yaml site/top.txt" || received["site/conf/x.yaml"] != "x: 1" {
		t.Errorf("archive sent to the pod: %v %q", names, received)
	}
	if strings.Join(commands, "|") != "tar cf - /data/dir|tar -xmf - -C /srv/" {
		t.Errorf("commands run in the pod: %q", commands)
	}
	c.wantFail("error: one of src or dest must be a remote file specification", "cp", "/a", "/b")
}
