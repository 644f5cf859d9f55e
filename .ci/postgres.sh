#!/usr/bin/env bash
# Start a throw-away PostgreSQL server on loopback for the tests and print its URL as the LAST stdout line:
#   export MASC_TEST_POSTGRES_URL="$(bash .ci/postgres.sh | tail -n 1)"
# Installs Debian's `postgresql` when missing, creates a cluster in a fresh temp dir (owned by the
# `postgres` user when run as root), starts it on 127.0.0.1 on a free port with trust auth for local
# connections only, and creates the database `masc_test`. Progress goes to stderr. The server keeps
# running after this script exits; stop it with the `pg_ctl ... stop` command printed to stderr.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

find_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

bindir="$(find_bindir)"
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "postgres.sh: installing Debian's postgresql" >&2
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
  bindir="$(find_bindir)"
fi
[ -x "$bindir/initdb" ] || { echo "postgres.sh: initdb not found under /usr/lib/postgresql/*/bin" >&2; exit 1; }

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
root="$(mktemp -d /tmp/masc-pg.XXXXXX)"
chmod 755 "$root"

if [ "$(id -u)" = "0" ]; then
  id postgres >/dev/null 2>&1 || useradd --system --home-dir "$root" --shell /usr/sbin/nologin postgres
  chown postgres: "$root"
  as_pg() { runuser -u postgres -- "$@"; }
  dbuser=postgres
else
  as_pg() { "$@"; }
  dbuser="$(id -un)"
fi

as_pg "$bindir/initdb" -D "$root/data" -U "$dbuser" -A trust -E UTF8 --locale=C.UTF-8 >&2
as_pg "$bindir/pg_ctl" -D "$root/data" -l "$root/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $root -c max_connections=200 -c fsync=on" start >&2
as_pg "$bindir/createdb" -h 127.0.0.1 -p "$port" -U "$dbuser" masc_test >&2

echo "postgres.sh: server on 127.0.0.1:$port, data in $root/data; stop with:" \
     "$( [ "$(id -u)" = 0 ] && echo 'runuser -u postgres -- ')$bindir/pg_ctl -D $root/data stop" >&2
echo "postgresql+psycopg://$dbuser@127.0.0.1:$port/masc_test"
