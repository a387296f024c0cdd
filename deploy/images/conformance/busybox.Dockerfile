# registry.k8s.io/e2e-test-images/busybox, built locally for Kubernetes'
# conformance suite. Upstream's image is Docker's busybox:1.37.0: busybox
# 1.37.0 as released, built with its defconfig. Debian's busybox is not
# that: Debian reverts upstream's commit 9c143ce52 ("ash: retain envvars
# with bad names in initial environment"), so its ash drops every
# environment variable whose name is not a shell identifier and
# `sh -c env` prints no 'data-1', '1-data-1', '$_-data-1' or '#@!data-1'
# (the ConfigMap and Secret "environment variable names" specs read them).
# So busybox is built here from the release itself: the orig tarball of
# Debian's busybox 1.37.0 source package, which is upstream's tarball
# byte for byte (its SHA-256 is checked below), without Debian's patches.
#
# Static, with upstream's defconfig and the changes Docker's image makes
# (ar, no wide characters past ASCII, inotifyd, sync without options).
# Every applet is in /bin, as in the upstream image (the suite runs
# /bin/sysctl, /bin/echo, /bin/true ...), and also where busybox's own
# --install puts it (/sbin, /usr/bin, /usr/sbin).
ARG BASE=minik8s/debian-base:bookworm
FROM ${BASE} AS build
RUN apt-get update -q \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -qy --no-install-recommends gcc libc6-dev make bzip2 \
	&& rm -rf /var/lib/apt/lists/*
# The source package comes from the Debian mirror the base image uses, from
# trixie (bookworm has 1.35.0), through an apt that knows only trixie's
# sources (the whole apt would look for the source of bookworm's binary).
ENV BUSYBOX_VERSION=1.37.0 \
	BUSYBOX_SHA256=3311dff32e746499f4df0d5df04d7eb396382d7e108bb9250e7b519b837043a4
WORKDIR /usr/src
RUN set -eu; \
	sed -n 's/^deb \([^ ]*\) bookworm main$/deb-src \1 trixie main/p' /etc/apt/sources.list >/tmp/trixie-src.list; \
	grep -q '^deb-src ' /tmp/trixie-src.list; \
	mkdir -p /tmp/trixie-lists/partial; \
	src_apt() { apt-get -q -o Dir::Etc::sourcelist=/tmp/trixie-src.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=/tmp/trixie-lists "$@"; }; \
	src_apt update; \
	src_apt source --download-only busybox; \
	rm -rf /tmp/trixie-lists /tmp/trixie-src.list; \
	echo "$BUSYBOX_SHA256 *busybox_$BUSYBOX_VERSION.orig.tar.bz2" | sha256sum -c -; \
	mkdir busybox; \
	tar -xjf "busybox_$BUSYBOX_VERSION.orig.tar.bz2" -C busybox --strip-components=1; \
	rm -f busybox_*
WORKDIR /usr/src/busybox
RUN set -eu; \
	make -s defconfig; \
	set_conf() { \
		sed -i -e "/^$1=/d" -e "/^# $1 is not set\$/d" .config; \
		if [ "$2" = n ]; then echo "# $1 is not set"; else echo "$1=$2"; fi >>.config; \
	}; \
	set_conf CONFIG_STATIC y; \
	set_conf CONFIG_AR y; \
	set_conf CONFIG_FEATURE_AR_CREATE y; \
	set_conf CONFIG_FEATURE_AR_LONG_FILENAMES y; \
	set_conf CONFIG_LAST_SUPPORTED_WCHAR 0; \
	set_conf CONFIG_INOTIFYD y; \
	set_conf CONFIG_FEATURE_SYNC_FANCY n; \
	case "$(dpkg --print-architecture)" in \
	amd64 | i386) ;; \
	*) set_conf CONFIG_SHA1_HWACCEL n ;; \
	esac; \
	yes '' | make -s oldconfig >/dev/null; \
	grep -qx 'CONFIG_STATIC=y' .config; \
	make -j "$(nproc)" busybox >/tmp/make.log 2>&1 || { tail -n 50 /tmp/make.log; exit 1; }; \
	./busybox --help >/dev/null; \
	env 'a-b=1' '1x=2' ./busybox sh -c env | grep -qx 'a-b=1'
# /etc/passwd and /etc/group with the system users of upstream's image.
RUN mkdir -p /rootfs/etc \
	&& printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'daemon:x:1:1:daemon:/usr/sbin:/bin/false' \
		'bin:x:2:2:bin:/bin:/bin/false' 'sys:x:3:3:sys:/dev:/bin/false' 'sync:x:4:100:sync:/bin:/bin/sync' \
		'mail:x:8:8:mail:/var/spool/mail:/bin/false' 'www-data:x:33:33:www-data:/var/www:/bin/false' \
		'operator:x:37:37:Operator:/var:/bin/false' 'nobody:x:65534:65534:nobody:/home:/bin/false' >/rootfs/etc/passwd \
	&& printf '%s\n' 'root:x:0:' 'daemon:x:1:' 'bin:x:2:' 'sys:x:3:' 'adm:x:4:' 'tty:x:5:' 'disk:x:6:' 'lp:x:7:' \
		'mail:x:8:' 'kmem:x:9:' 'wheel:x:10:root' 'cdrom:x:11:' 'dialout:x:18:' 'floppy:x:19:' 'video:x:28:' \
		'audio:x:29:' 'tape:x:32:' 'www-data:x:33:' 'operator:x:37:' 'utmp:x:43:' 'plugdev:x:46:' 'staff:x:50:' \
		'lock:x:54:' 'netdev:x:82:' 'users:x:100:' 'nogroup:x:65534:' >/rootfs/etc/group

FROM scratch
COPY --from=build /usr/src/busybox/busybox /bin/busybox
COPY --from=build /rootfs/etc /etc
RUN ["/bin/busybox", "mkdir", "-p", "/usr/bin", "/sbin", "/usr/sbin", "/tmp", "/root"]
RUN ["/bin/busybox", "chmod", "1777", "/tmp"]
RUN ["/bin/busybox", "sh", "-c", "for a in $(/bin/busybox --list); do [ -e /bin/$a ] || /bin/busybox ln -s busybox /bin/$a; done"]
RUN ["/bin/busybox", "--install", "-s"]
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD ["sh"]
