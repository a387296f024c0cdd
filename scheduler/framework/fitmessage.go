package framework

import (
	"fmt"
	"sort"
	"strings"
)

// FitErrorMessage renders kube's FitError: "0/3 nodes are available: 1
// Insufficient cpu, 2 node(s) had untolerated taint {k: v}." The reasons
// of nodeToStatus are counted over nodes (the numAllNodes-len(nodeToStatus)
// nodes absent from it count absent's reasons) and the "count reason"
// strings sorted as strings. A PreFilter message replaces the per-node
// reasons; a PostFilter message is appended after a space.
func FitErrorMessage(numAllNodes int, nodeToStatus map[string]*Status, absent *Status, preFilterMsg, postFilterMsg string) string {
	msg := fmt.Sprintf("0/%v nodes are available:", numAllNodes)
	if preFilterMsg != "" {
		msg += " " + preFilterMsg + "."
	} else {
		counts := map[string]int{}
		for _, s := range nodeToStatus {
			for _, r := range s.Reasons {
				counts[r]++
			}
		}
		if n := numAllNodes - len(nodeToStatus); n > 0 && absent != nil {
			for _, r := range absent.Reasons {
				counts[r] += n
			}
		}
		reasons := make([]string, 0, len(counts))
		for r, n := range counts {
			reasons = append(reasons, fmt.Sprintf("%v %v", n, r))
		}
		sort.Strings(reasons)
		if len(reasons) > 0 {
			msg += " " + strings.Join(reasons, ", ") + "."
		}
	}
	if postFilterMsg != "" {
		msg += " " + postFilterMsg
	}
	return msg
}
