#!/usr/bin/env bash
# conformance.sh runs Kubernetes' own end-to-end suite (e2e.test, built by
# scripts/oracle.sh from k8s.io/kubernetes at the pinned release) against
# the running compose cluster (make up): it builds the suite's test images
# under their registry.k8s.io names (scripts/images.sh conformance), loads
# them into every node, runs the specs FOCUS selects, and prints a summary
# (passed, failed, skipped, and each failure's name) from the JUnit report.
#
#   scripts/conformance.sh                 every [Conformance] spec
#   FOCUS='Pods should get a host IP' scripts/conformance.sh
#
# Environment: FOCUS (default '\[Conformance\]'), SKIP (default none),
# TIMEOUT (the suite's whole-run timeout, default 3h), REPORT_DIR (default
# .minik8s/conformance), KUBECONFIG (default .minik8s/kubeconfig).
# The run is serial (the compiled suite has no parallel runner); it exits
# non-zero when any spec failed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin

focus=${FOCUS:-'\[Conformance\]'}
skip=${SKIP:-}
timeout=${TIMEOUT:-3h}
report=${REPORT_DIR:-.minik8s/conformance}
kubeconfig=${KUBECONFIG:-.minik8s/kubeconfig}
log() { echo "conformance: $*" >&2; }

if [ ! -f "$kubeconfig" ]; then
	log "no kubeconfig at $kubeconfig: bring the cluster up first (make up)"
	exit 1
fi
oracle=$(scripts/oracle.sh e2e.test)
scripts/images.sh conformance
e2e=registry.k8s.io/e2e-test-images
scripts/load-image.sh "$e2e/agnhost:2.66.1,$e2e/agnhost:2.55,$e2e/busybox:1.37.0-2,$e2e/nginx:1.27.0-2,$e2e/nginx:1.28.0-2,registry.k8s.io/pause:3.10.2"

rm -rf "$report"
mkdir -p "$report"
args=(--kubeconfig "$kubeconfig" --provider=skeleton --report-dir "$report"
	--ginkgo.focus="$focus" --ginkgo.timeout="$timeout" --ginkgo.no-color)
[ -n "$skip" ] && args+=(--ginkgo.skip="$skip")
log "running e2e.test --ginkgo.focus='$focus'${skip:+ --ginkgo.skip='$skip'} (log: $report/e2e.log)"
rc=0
"$oracle/e2e.test" "${args[@]}" >"$report/e2e.log" 2>&1 || rc=$?

junit=$(ls "$report"/junit*.xml 2>/dev/null | head -n1 || true)
if [ -z "$junit" ]; then
	tail -n 40 "$report/e2e.log" >&2
	log "no JUnit report in $report (e2e.test exited $rc)"
	exit 1
fi
# Each <testcase> is one spec: it failed when it holds <failure>, was
# skipped when it holds <skipped> (specs outside FOCUS are reported as
# skipped too), else it passed.
awk '
	/<testcase / { name = $0; sub(/.*<testcase name="/, "", name); sub(/".*/, "", name); state = "passed" }
	/<failure/ { state = "failed" }
	/<skipped/ { if (state == "passed") state = "skipped" }
	/<\/testcase>|<testcase [^>]*\/>/ {
		if (name == "") next
		n[state]++
		if (state == "failed") failed[++f] = name
		name = ""
	}
	END {
		printf "conformance: %d passed, %d failed, %d skipped\n", n["passed"], n["failed"], n["skipped"]
		for (i = 1; i <= f; i++) print "  FAIL " failed[i]
	}' "$junit" | sed -e 's/&#39;/'"'"'/g' -e 's/&quot;/"/g' -e 's/&amp;/\&/g' -e 's/&lt;/</g' -e 's/&gt;/>/g'
exit $rc
