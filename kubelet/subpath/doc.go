// Package subpath bind-mounts a volume mount's subPath the way kube's
// pkg/volume/util/subpath does on Linux, so that the mount can never leave
// the volume. A container can write symlinks into its volumes (`ln -s /
// /vol/x`); a kubelet that handed "volume/x" to the runtime would give the
// next container the node's root file system. Instead the kubelet resolves
// the path once, checks it is inside the volume, then opens it again one
// component at a time with openat(O_NOFOLLOW|O_PATH) from the volume root
// (a link swapped in after the check makes the open fail) and bind-mounts
// /proc/self/fd/N — the inode it holds, whatever the path names by then —
// onto a kubelet-owned target, pods/UID/volume-subpaths/VOLUME/CONTAINER/INDEX,
// which is what the runtime is given as the mount source (CVE-2017-1002101,
// CVE-2021-25741). SafeMakeDir creates a missing subPath with mkdirat under
// the same rule. Clean unmounts the targets before the pod directory is
// removed: removing through a live bind mount would delete the volume's
// (for hostPath, the node's) files.
package subpath
