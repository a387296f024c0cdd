// Package faults is the fault suite of the control plane: its tests build
// the real binaries, run them as processes against loopback ports and temp
// dirs, SIGKILL one in the middle of its work, start it again, and check
// that the cluster converges without breaking its contracts:
//
//   - apiserver (embedded etcd) killed under concurrent writes: no
//     acknowledged create is lost, resourceVersions keep rising across the
//     restart, and watchers resume from their last resourceVersion with no
//     gap and no duplicate (or get 410 and relist);
//   - controller-manager killed in the middle of a Deployment's rolling
//     update: the next instance takes the lease over and finishes the
//     rollout, and no pod event ever shows more than replicas+maxSurge live
//     pods or fewer than replicas-maxUnavailable available ones;
//   - scheduler killed in the middle of a burst of pods: every pod is bound
//     exactly once and no pod's spec.nodeName ever changes.
//
// Nodes are simulated (no containers): pods are bound and reported Running
// and Ready through the API, as controllermanagertest.Kubelet does. The
// kubelet and containerd kills have their tests beside the kubelet
// (kubelet/app TestKubeletKill9Restart, kubelet/pods
// TestSurvivesContainerdRestart) as they need root and a containerd.
//
// Each test logs its figures (writes acknowledged and stored, time from the
// kill to a serving or leading process and to convergence, the extremes of
// the invariants it watched) with t.Logf; run with -v to see them:
//
//	go test -v -count=1 ./internal/faults/
//
// The tests run one after another, not in parallel: each relies on lease
// and readiness timings that a CPU-starved neighbour would stretch. They are
// skipped with -short, and each is bounded by a context of a few minutes.
package faults
