# Sourced by ops/*/start: refuse to start an engine when a port it will bind is taken
# (docs/architecture.md section 9). A start that found one of its ports in use used to fail
# later and vaguely (SeaweedFS: "s3 did not start", the reason lost in its own log), or worse,
# its readiness probe talked to someone else's server.
#
#   require_free_ports WHO NAME=PORT [NAME=PORT ...]
#
# checks each port on 127.0.0.1 and, for the first one that answers, prints which one it is
# (by its NAME, e.g. "filer gRPC"), who holds it when `ss` can tell, and exits 1.

# a listener on 127.0.0.1:$1 (or on every address) accepts a connection
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# "users:(("weed",pid=123,fd=7))" for the listener on port $1, when ss can see it
port_holder() {
  command -v ss >/dev/null 2>&1 || return 0
  ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'users:.*' | head -n 1 || true
}

require_free_ports() {
  local who="$1" spec name port holder
  shift
  for spec in "$@"; do
    name="${spec%=*}"
    port="${spec##*=}"
    if port_in_use "$port"; then
      holder="$(port_holder "$port")"
      printf '[%s] ERROR: port %s (%s) is already in use%s; stop that process or choose another port (ops/README.md, "The engines")\n' \
        "$who" "$port" "$name" "${holder:+ by $holder}" >&2
      exit 1
    fi
  done
}
