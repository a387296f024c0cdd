// Package create implements "create -f" (each manifest object POSTed, an
// existing one an error; --save-config records the last-applied
// annotation as apply would) and kubectl's "create KIND NAME" generators:
// namespace, configmap, secret generic (from literals, files and env
// files), docker-registry and tls, deployment, job, cronjob, service
// clusterip|nodeport|loadbalancer|externalname, serviceaccount, token,
// ingress, role and clusterrole (one rule per API group, resources
// resolved through discovery as kubectl's RESTMapper does), rolebinding,
// clusterrolebinding, quota, priorityclass and poddisruptionbudget.
package create
