// Package nodeaffinity filters nodes by the pod's nodeSelector and
// required node affinity, and scores them by its preferred node affinity.
package nodeaffinity
