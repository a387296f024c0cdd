#!/bin/sh
# Serves HTTP on ${PORT:-8080} from /www: an index page with this host's
# name and the image version; logs one line at start and each request.
port=${PORT:-8080}
host=$(hostname)
mkdir -p /www
printf '<html><body><h1>%s</h1><p>version %s</p></body></html>\n' "$host" "$MINIK8S_VERSION" >/www/index.html
printf '%s %s\n' "$host" "$MINIK8S_VERSION" >/www/version
echo "minik8s-httpd $MINIK8S_VERSION serving on :$port as $host"
exec httpd -f -vv -p "$port" -h /www
