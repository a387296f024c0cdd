package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minik8s/minik8s/api"
)

// staticNode is the compose node the static pod scenario writes to; its
// kubelet runs --pod-manifest-path=/etc/kubernetes/manifests
// (deploy/node/entrypoint.sh).
const (
	staticNode   = "node-1"
	manifestDir  = "/etc/kubernetes/manifests"
	staticMirror = "static-web-" + staticNode
)

func staticManifest(version string) string {
	return `apiVersion: v1
kind: Pod
metadata:
  name: static-web
  labels: {app: static-web}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: web
    image: minik8s/busybox:latest
    imagePullPolicy: IfNotPresent
    env: [{name: VERSION, value: "` + version + `"}]
    command: ["sh", "-c", "echo version $VERSION; exec sleep 3600"]
`
}

// staticScenario is the state one static pod step hands the next.
type staticScenario struct {
	*scenario
	// hash is the mirror's config.mirror, mirrorUID its UID, containerID
	// its container's, as last seen.
	hash, mirrorUID, containerID string
}

// TestStaticPods: a manifest dropped into a node's manifest directory runs
// there and shows as a mirror pod; edited, the pod is replaced; its mirror
// deleted through the API comes back without touching the pod; a bad
// manifest is reported and changes nothing; removed, the pod stops and its
// mirror goes; with the apiserver stopped, a new manifest still runs, and
// its mirror pod comes once the apiserver is back.
func TestStaticPods(t *testing.T) {
	c := requireCluster(t)
	s := &staticScenario{scenario: &scenario{c: c}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c.Exec(ctx, staticNode, "rm", "-f", manifestDir+"/static-web.yaml", manifestDir+"/broken.yaml")
		c.ComposeRun(ctx, "start", "apiserver")
	})
	s.runSteps(t, 3*time.Minute, func(ctx context.Context) {
		t.Logf("kubelet log of %s:\n%s", staticNode, c.Logs(ctx, staticNode, 60))
	}, []step{
		{"DropManifest", s.dropManifest},
		{"EditManifest", s.editManifest},
		{"DeleteMirrorPod", s.deleteMirror},
		{"BadManifest", s.badManifest},
		{"RemoveManifest", s.removeManifest},
		{"WithoutAPIServer", s.withoutAPIServer},
	})
}

// writeManifest writes a file into the node's manifest directory, by a
// rename so the kubelet never reads half of it.
func (s *staticScenario) writeManifest(name, content string) {
	s.t.Helper()
	id, err := s.c.Container(s.ctx, staticNode)
	if err != nil {
		s.t.Fatal(err)
	}
	script := fmt.Sprintf("mkdir -p %[1]s && cat > %[1]s/.%[2]s.tmp && mv %[1]s/.%[2]s.tmp %[1]s/%[2]s", manifestDir, name)
	if _, err := s.c.RunInput(s.ctx, []byte(content), "docker", "exec", "-i", id, "sh", "-c", script); err != nil {
		s.t.Fatal(err)
	}
}

// mirror reads the mirror pod (nil when there is none).
func (s *staticScenario) mirror(ctx context.Context) (*api.Pod, error) {
	var l api.List[api.Pod]
	if err := s.c.KubectlJSON(ctx, &l, "get", "pods", "-n", "default", "-l", "app=static-web"); err != nil {
		return nil, Retry(err)
	}
	for i := range l.Items {
		if l.Items[i].Name == staticMirror && l.Items[i].DeletionTimestamp == nil {
			return &l.Items[i], nil
		}
	}
	return nil, nil
}

func mirrorString(p *api.Pod) string {
	if p == nil {
		return "no mirror pod"
	}
	cid := ""
	if len(p.Status.ContainerStatuses) > 0 {
		cid = p.Status.ContainerStatuses[0].ContainerID
	}
	return fmt.Sprintf("%s uid=%s phase=%s mirror=%s container=%s", p.Name, p.UID, p.Status.Phase,
		p.Annotations["kubernetes.io/config.mirror"], cid)
}

// waitMirror waits for a Running mirror pod that cond accepts and records
// it.
func (s *staticScenario) waitMirror(d time.Duration, what string, cond func(*api.Pod) bool) *api.Pod {
	s.t.Helper()
	var got *api.Pod
	s.within(d, what, func(ctx context.Context) (bool, string, error) {
		p, err := s.mirror(ctx)
		if err != nil || p == nil {
			return false, mirrorString(p), err
		}
		ok := running(*p) && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil && cond(p)
		got = p
		return ok, mirrorString(p), nil
	})
	s.hash, s.mirrorUID = got.Annotations["kubernetes.io/config.mirror"], string(got.UID)
	s.containerID = got.Status.ContainerStatuses[0].ContainerID
	return got
}

func (s *staticScenario) dropManifest() {
	s.writeManifest("static-web.yaml", staticManifest("1"))
	p := s.waitMirror(time.Minute, "the static pod Running as mirror pod "+staticMirror, func(*api.Pod) bool { return true })
	if p.Spec.NodeName != staticNode || p.Annotations["kubernetes.io/config.source"] != "file" ||
		p.Annotations["kubernetes.io/config.hash"] != s.hash || s.hash == "" {
		s.t.Errorf("mirror pod: nodeName %q annotations %v", p.Spec.NodeName, p.Annotations)
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "Node" || p.OwnerReferences[0].Name != staticNode ||
		p.OwnerReferences[0].Controller == nil || !*p.OwnerReferences[0].Controller {
		s.t.Errorf("mirror owner references %+v, want the Node %s as controller", p.OwnerReferences, staticNode)
	}
	if out, err := s.c.Kubectl(s.ctx, "logs", "-n", "default", staticMirror); err != nil || !strings.Contains(out, "version 1") {
		s.t.Errorf("logs of the static pod through its mirror: %q %v", out, err)
	}
}

func (s *staticScenario) editManifest() {
	oldHash, oldContainer := s.hash, s.containerID
	s.writeManifest("static-web.yaml", staticManifest("2"))
	p := s.waitMirror(time.Minute, "the edited static pod Running with a new mirror pod", func(p *api.Pod) bool {
		return p.Annotations["kubernetes.io/config.mirror"] != oldHash
	})
	if env := p.Spec.Containers[0].Env; len(env) != 1 || env[0].Value != "2" {
		s.t.Errorf("mirror env %+v, want VERSION=2", env)
	}
	if s.containerID == oldContainer {
		s.t.Errorf("container %s kept: want the pod restarted with the new spec", oldContainer)
	}
	if out, err := s.c.Kubectl(s.ctx, "logs", "-n", "default", staticMirror); err != nil || !strings.Contains(out, "version 2") {
		s.t.Errorf("logs after the edit: %q %v", out, err)
	}
}

func (s *staticScenario) deleteMirror() {
	oldUID, oldContainer := s.mirrorUID, s.containerID
	s.kubectl("delete", "pod", "-n", "default", staticMirror)
	s.waitMirror(time.Minute, "the mirror pod created again", func(p *api.Pod) bool { return string(p.UID) != oldUID })
	if s.containerID != oldContainer {
		s.t.Errorf("container %s then %s: deleting the mirror pod restarted the static pod", oldContainer, s.containerID)
	}
}

func (s *staticScenario) badManifest() {
	oldContainer := s.containerID
	s.writeManifest("broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: broken}\nspec: {}\n")
	s.within(time.Minute, "a FailedStaticPodManifest event about broken.yaml", func(ctx context.Context) (bool, string, error) {
		var l api.List[api.Event]
		if err := s.c.KubectlJSON(ctx, &l, "get", "events", "-n", "default"); err != nil {
			return false, "", Retry(err)
		}
		for _, e := range l.Items {
			if e.Reason == "FailedStaticPodManifest" && e.InvolvedObject.Name == staticNode && strings.Contains(e.Message, "broken.yaml") {
				return true, e.Message, nil
			}
		}
		return false, fmt.Sprintf("%d events", len(l.Items)), nil
	})
	time.Sleep(3 * time.Second)
	p, err := s.mirror(s.ctx)
	if err != nil || p == nil || !running(*p) || p.Status.ContainerStatuses[0].ContainerID != oldContainer {
		s.t.Errorf("the other static pod after a bad manifest: %s %v", mirrorString(p), err)
	}
	if out, _ := s.c.Kubectl(s.ctx, "get", "pods", "-n", "default", "broken-"+staticNode); strings.Contains(out, "broken-") {
		s.t.Errorf("a mirror pod for the bad manifest: %s", out)
	}
}

func (s *staticScenario) removeManifest() {
	if _, err := s.c.Exec(s.ctx, staticNode, "rm", "-f", manifestDir+"/static-web.yaml", manifestDir+"/broken.yaml"); err != nil {
		s.t.Fatal(err)
	}
	s.within(time.Minute, "the mirror pod gone", func(ctx context.Context) (bool, string, error) {
		var l api.List[api.Pod]
		if err := s.c.KubectlJSON(ctx, &l, "get", "pods", "-n", "default", "-l", "app=static-web"); err != nil {
			return false, "", Retry(err)
		}
		return len(l.Items) == 0, fmt.Sprintf("%d pods", len(l.Items)), nil
	})
	s.within(time.Minute, "no containers of the static pod on "+staticNode, func(ctx context.Context) (bool, string, error) {
		out, err := s.c.Exec(ctx, staticNode, "ctr", "-n", runtimeNamespace(ctx, s.c, staticNode), "containers", "ls", "-q",
			`labels."io.kubernetes.pod.name"==`+staticMirror)
		if err != nil {
			return false, "", Retry(err)
		}
		return strings.TrimSpace(out) == "", "containers: " + strings.Join(strings.Fields(out), " "), nil
	})
}

func (s *staticScenario) withoutAPIServer() {
	if _, err := s.c.ComposeRun(s.ctx, "stop", "apiserver"); err != nil {
		s.t.Fatal(err)
	}
	started := false
	defer func() {
		if !started {
			s.c.ComposeRun(context.Background(), "start", "apiserver")
		}
	}()
	s.writeManifest("static-web.yaml", staticManifest("3"))
	s.within(time.Minute, "the static pod's container running on "+staticNode+" without the apiserver", func(ctx context.Context) (bool, string, error) {
		out, err := s.c.Exec(ctx, staticNode, "ctr", "-n", runtimeNamespace(ctx, s.c, staticNode), "tasks", "ls")
		if err != nil {
			return false, "", Retry(err)
		}
		ids, err := s.c.Exec(ctx, staticNode, "ctr", "-n", runtimeNamespace(ctx, s.c, staticNode), "containers", "ls", "-q",
			`labels."io.kubernetes.pod.name"==`+staticMirror+`,labels."io.kubernetes.container.name"==web`)
		if err != nil {
			return false, "", Retry(err)
		}
		for _, id := range strings.Fields(ids) {
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) >= 3 && f[0] == id && f[2] == "RUNNING" {
					return true, "", nil
				}
			}
		}
		return false, "containers: " + strings.Join(strings.Fields(ids), " "), nil
	})
	if _, err := s.c.ComposeRun(s.ctx, "start", "apiserver"); err != nil {
		s.t.Fatal(err)
	}
	started = true
	s.waitMirror(2*time.Minute, "its mirror pod Running once the apiserver is back", func(p *api.Pod) bool {
		return len(p.Spec.Containers[0].Env) == 1 && p.Spec.Containers[0].Env[0].Value == "3"
	})
	if _, err := s.c.Exec(s.ctx, staticNode, "rm", "-f", manifestDir+"/static-web.yaml"); err != nil {
		s.t.Fatal(err)
	}
	s.within(time.Minute, "the mirror pod gone again", func(ctx context.Context) (bool, string, error) {
		p, err := s.mirror(ctx)
		return p == nil && err == nil, mirrorString(p), err
	})
}
