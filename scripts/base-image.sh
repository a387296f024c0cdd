#!/usr/bin/env bash
# Builds the Debian base image (default minik8s/debian-base:bookworm) offline:
# debootstrap a minbase bookworm root file system from the Debian mirror this
# machine's apt already uses, then `docker import` it. Does nothing when the
# image exists (pass --force to rebuild). Needs root, debootstrap and docker.
#
#   scripts/base-image.sh [--force] [IMAGE]
set -euo pipefail

force=0
if [ "${1:-}" = "--force" ]; then
	force=1
	shift
fi
image=${1:-minik8s/debian-base:bookworm}
suite=${DEBIAN_SUITE:-bookworm}

if [ "$force" = 0 ] && docker image inspect "$image" >/dev/null 2>&1; then
	exit 0
fi

# mirror prints the Debian mirror apt uses here (deb822 .sources or a
# one-line sources.list entry), so the image comes from a reachable place.
mirror() {
	local m=""
	if [ -n "${DEBIAN_MIRROR:-}" ]; then
		echo "$DEBIAN_MIRROR"
		return
	fi
	m=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '{print $2}' | grep -v -- '-security' | grep -E '/debian/?$' | head -n1 || true)
	if [ -z "$m" ]; then
		m=$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '{for (i=2;i<=NF;i++) if ($i ~ /^https?:/) {print $i; exit}}' | grep -E '/debian/?$' | head -n1 || true)
	fi
	echo "${m:-http://deb.debian.org/debian}"
}

if ! command -v debootstrap >/dev/null; then
	echo "base-image: debootstrap is missing (apt-get install debootstrap)" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "base-image: debootstrap needs root; run: sudo $0 $image" >&2
	exit 1
fi

url=$(mirror)
root=$(mktemp -d /tmp/minik8s-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "base-image: debootstrap $suite from $url (about a minute)" >&2
start=$(date +%s)
debootstrap --variant=minbase "$suite" "$root" "$url" >"$root.log" 2>&1 || {
	tail -n 30 "$root.log" >&2
	rm -f "$root.log"
	exit 1
}
rm -f "$root.log"
# Keep the image small and apt ready to use inside `docker build`.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/tmp/*
printf 'deb %s %s main\ndeb %s %s-updates main\n' "$url" "$suite" "$url" "$suite" >"$root/etc/apt/sources.list"
tar -C "$root" -c . | docker import \
	--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	--change 'CMD ["/bin/bash"]' \
	- "$image" >/dev/null
echo "base-image: built $image in $(($(date +%s) - start)) s" >&2
