// Package create implements "create -f" (each manifest object POSTed, an
// existing one an error; --save-config records the last-applied
// annotation as apply would) and kubectl's "create KIND NAME" generators:
// namespace, configmap and secret generic (from literals, files and env
// files), deployment, and service clusterip|nodeport.
package create
