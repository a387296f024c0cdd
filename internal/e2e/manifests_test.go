package e2e

import "fmt"

// The manifests the scenarios share, each in its own namespace.

// webManifest is a Namespace and in it the backend Deployment web (the
// busybox image's page naming its pod on port 8080, ready once it serves)
// behind the ClusterIP Service web on port 80, as deploy/examples/web.yaml.
func webManifest(ns string, replicas int) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: %[1]s
spec:
  replicas: %[2]d
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      terminationGracePeriodSeconds: 2
      containers:
        - name: web
          image: minik8s/busybox:latest
          imagePullPolicy: IfNotPresent
          ports:
            - name: http
              containerPort: 8080
          readinessProbe:
            httpGet:
              path: /
              port: http
            periodSeconds: 1
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: %[1]s
spec:
  selector:
    app: web
  ports:
    - name: http
      port: 80
      targetPort: http
`, ns, replicas)
}

// clientManifest is a pod pinned to node that only sleeps: the tests exec
// busybox wget and nslookup in it.
func clientManifest(ns, node string) string {
	return `apiVersion: v1
kind: Pod
metadata:
  name: client-` + node + `
  namespace: ` + ns + `
  labels:
    app: client
spec:
  nodeName: ` + node + `
  terminationGracePeriodSeconds: 1
  containers:
    - name: client
      image: minik8s/busybox:latest
      imagePullPolicy: IfNotPresent
      command: ["sleep", "86400"]
`
}
