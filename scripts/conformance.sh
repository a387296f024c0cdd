#!/usr/bin/env bash
# conformance.sh runs Kubernetes' own end-to-end suite (e2e.test, built by
# scripts/oracle.sh from k8s.io/kubernetes at the pinned release) against
# the running compose cluster (make up): it builds the suite's test images
# under their registry.k8s.io names (scripts/images.sh conformance), loads
# them into every node and pushes them into the compose network's registry
# (scripts/registry.sh: the nodes' mirror of registry.k8s.io), runs the
# specs and writes a summary (passed, failed, skipped, each failure's name,
# wall time, commit) beside the JUnit reports.
#
#   scripts/conformance.sh                 the whole [Conformance] suite: the
#                                          parallel part through ginkgo's own
#                                          runner in PROCS processes
#                                          (--skip '\[Serial\]'), then the
#                                          [Serial] part alone, as sonobuoy's
#                                          certified-conformance mode does
#   FOCUS='Pods should get a host IP' scripts/conformance.sh
#                                          the specs FOCUS selects, in one
#                                          serial run
#   FOCUS='\[sig-node\].*\[Conformance\]' PROCS=4 scripts/conformance.sh
#                                          the specs FOCUS selects as the
#                                          whole suite runs: [Serial] ones
#                                          apart, the others in PROCS
#                                          processes
#
# Environment: FOCUS (default: the whole suite), SKIP (default none), PROCS
# (parallel processes of the whole-suite run, default 4; of a FOCUS run
# only when set), TIMEOUT (each
# run's timeout, default 3h), REPORT_DIR (default .minik8s/conformance),
# KUBECONFIG (default .minik8s/kubeconfig). Progress (specs done / to run)
# is printed every 30 s; the summary is REPORT_DIR/summary.txt. It exits
# non-zero when any spec failed.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin

focus=${FOCUS:-}
skip=${SKIP:-}
procs=${PROCS:-4}
timeout=${TIMEOUT:-3h}
report=${REPORT_DIR:-.minik8s/conformance}
kubeconfig=${KUBECONFIG:-.minik8s/kubeconfig}
log() { echo "conformance: $*" >&2; }

if [ ! -f "$kubeconfig" ]; then
	log "no kubeconfig at $kubeconfig: bring the cluster up first (make up)"
	exit 1
fi
case "$procs" in
'' | *[!0-9]* | 0)
	log "PROCS must be a positive number of processes, not '$procs'"
	exit 2
	;;
esac
oracle=$(scripts/oracle.sh e2e.test ginkgo)
scripts/images.sh conformance
e2e=registry.k8s.io/e2e-test-images
images="$e2e/agnhost:2.66.1,$e2e/agnhost:2.55,$e2e/busybox:1.37.0-2,$e2e/nginx:1.27.0-2,$e2e/nginx:1.28.0-2,registry.k8s.io/pause:3.10.2,\
$e2e/glibc-dns-testing:2.1.1,$e2e/kitten:1.8,$e2e/nautilus:1.8,$e2e/nonroot:1.5,$e2e/nonewprivs:1.4,$e2e/sample-apiserver:1.29.2,registry.k8s.io/etcd:3.7.0-0"
scripts/load-image.sh "$images"
# Specs that pull with imagePullPolicy Always find them in the compose
# network's registry, the nodes' mirror of registry.k8s.io.
scripts/registry.sh
scripts/push-image.sh "$images"

rm -rf "$report"
mkdir -p "$report"
suite_args=(--kubeconfig "$(realpath "$kubeconfig")" --provider=skeleton)

# progress LOG PART: every 30 s, how many specs of the run logging to LOG
# are done: ginkgo's default reporter prints one "•" per spec run (a
# failure's block starts with "• [FAILED]"), and "Will run N of M specs".
progress() {
	local logf=$1 part=$2 total done failed
	while sleep 30; do
		[ -f "$logf" ] || continue
		total=$(grep -oE 'Will run [0-9]+ of' "$logf" | head -n1 | awk '{print $3}')
		done=$(grep -o '•' "$logf" | wc -l)
		failed=$(grep -cE '• \[(FAILED|PANICKED|TIMEDOUT)\]' "$logf" || true)
		log "$part: $done/${total:-?} specs done, $failed failed"
	done
}

# run PART DIR ARGS...: one e2e.test run, its log and JUnit in DIR.
run() {
	local part=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	log "$part: $* (log: $dir/e2e.log)"
	progress "$dir/e2e.log" "$part" &
	local watcher=$! rc=0
	"$@" >"$dir/e2e.log" 2>&1 || rc=$?
	kill "$watcher" 2>/dev/null || true
	wait "$watcher" 2>/dev/null || true
	return $rc
}

started=$(date +%s)
rc=0
if [ -z "$focus" ]; then
	# The parallel part: ginkgo's runner, PROCS processes of e2e.test.
	run parallel "$report/parallel" "$oracle/ginkgo" --procs="$procs" --timeout="$timeout" --no-color \
		--focus='\[Conformance\]' --skip="\[Serial\]${skip:+|$skip}" \
		"$oracle/e2e.test" -- "${suite_args[@]}" --report-dir "$report/parallel" || rc=$?
	# The serial part, alone.
	run serial "$report/serial" "$oracle/e2e.test" "${suite_args[@]}" --report-dir "$report/serial" \
		--ginkgo.focus='\[Serial\].*\[Conformance\]|\[Conformance\].*\[Serial\]' ${skip:+--ginkgo.skip="$skip"} \
		--ginkgo.timeout="$timeout" --ginkgo.no-color || rc=$?
elif [ -n "${PROCS:-}" ] && [ "$procs" -gt 1 ]; then
	# FOCUS with PROCS: the focused specs as the whole suite runs, the
	# parallel ones in PROCS processes, then the [Serial] ones alone.
	run parallel "$report/parallel" "$oracle/ginkgo" --procs="$procs" --timeout="$timeout" --no-color \
		--focus="$focus" --skip="\[Serial\]${skip:+|$skip}" \
		"$oracle/e2e.test" -- "${suite_args[@]}" --report-dir "$report/parallel" || rc=$?
	run serial "$report/serial" "$oracle/e2e.test" "${suite_args[@]}" --report-dir "$report/serial" \
		--ginkgo.focus="$focus" --ginkgo.label-filter=Serial ${skip:+--ginkgo.skip="$skip"} \
		--ginkgo.timeout="$timeout" --ginkgo.no-color || rc=$?
else
	run focus "$report/focus" "$oracle/e2e.test" "${suite_args[@]}" --report-dir "$report/focus" \
		--ginkgo.focus="$focus" ${skip:+--ginkgo.skip="$skip"} --ginkgo.timeout="$timeout" --ginkgo.no-color || rc=$?
fi
elapsed=$(($(date +%s) - started))

junits=$(ls "$report"/*/junit*.xml 2>/dev/null || true)
if [ -z "$junits" ]; then
	for l in "$report"/*/e2e.log; do tail -n 40 "$l" >&2; done
	log "no JUnit report under $report (exit $rc)"
	exit 1
fi
# Each <testcase> is one spec: it failed when it holds <failure>, was
# skipped when it holds <skipped> (specs outside the focus are reported as
# skipped too), else it passed. Counts by area ([sig-x]) are of run specs.
# shellcheck disable=SC2086
{
	echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "focus: ${focus:-the whole [Conformance] suite (parallel part in $procs processes, then [Serial])}"
	printf 'wall time: %dm%02ds\n' $((elapsed / 60)) $((elapsed % 60))
	awk '
	/<testcase / { name = $0; sub(/.*<testcase name="/, "", name); sub(/".*/, "", name); state = "passed" }
	/<failure/ { state = "failed" }
	/<skipped/ { if (state == "passed") state = "skipped" }
	/<\/testcase>|<testcase [^>]*\/>/ {
		if (name == "") next
		n[state]++
		if (state != "skipped" && match(name, /\[sig-[a-z-]+\]/)) {
			area = substr(name, RSTART, RLENGTH); total[area]++
			if (state == "passed") ok[area]++
		}
		if (state == "failed") failed[++f] = name
		name = ""
	}
	END {
		printf "conformance: %d passed, %d failed, %d skipped\n", n["passed"], n["failed"], n["skipped"]
		for (a in total) printf "  %s %d/%d\n", a, ok[a], total[a]
		for (i = 1; i <= f; i++) print "  FAIL " failed[i]
	}' $junits | sed -e 's/&#39;/'"'"'/g' -e 's/&quot;/"/g' -e 's/&amp;/\&/g' -e 's/&lt;/</g' -e 's/&gt;/>/g'
} >"$report/summary.txt"
cat "$report/summary.txt"
exit $rc
