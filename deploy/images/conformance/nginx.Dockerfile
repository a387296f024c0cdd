# registry.k8s.io/e2e-test-images/nginx, built locally for Kubernetes'
# conformance suite: Debian's nginx serving /usr/share/nginx/html on port
# 80 (IPv4 and IPv6), in the foreground, logs on stdout and stderr, as the
# upstream image (which is nginx's own on Alpine) does.
ARG BASE=minik8s/debian-base:bookworm
FROM ${BASE}
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -qy --no-install-recommends nginx-light \
	&& rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/* \
	&& mkdir -p /usr/share/nginx/html \
	&& printf '<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n<h1>Welcome to nginx!</h1>\n</body>\n</html>\n' >/usr/share/nginx/html/index.html \
	&& printf 'server {\n\tlisten 80 default_server;\n\tlisten [::]:80 default_server;\n\troot /usr/share/nginx/html;\n\tindex index.html;\n}\n' >/etc/nginx/conf.d/default.conf \
	&& ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
