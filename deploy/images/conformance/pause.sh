#!/bin/busybox sh
# /pause of the locally built registry.k8s.io/pause image: wait for
# SIGINT or SIGTERM, then exit 0.
trap 'exit 0' INT TERM
while :; do
	/bin/busybox sleep 2147483647 &
	wait $!
done
