// Package kubeconfig reads and writes kubeconfig files (~/.kube/config) in
// the shape kubectl uses, and turns a context of one into a client.Config.
//
// Loading follows kubectl's precedence: an explicit path (the --kubeconfig
// flag), else the files listed in $KUBECONFIG merged so that the first file
// to define a name or the current-context wins, else ~/.kube/config. Relative
// file paths inside a kubeconfig (certificate-authority, client-certificate,
// client-key, tokenFile) are resolved against the directory of the file that
// defined them, as kubectl does. The server is always verified against the
// cluster's CA unless the file explicitly says insecure-skip-tls-verify.
package kubeconfig
