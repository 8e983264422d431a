#!/usr/bin/env bash
# Start a throw-away MariaDB on a loopback port with its own data dir (no system service, no
# dependence on a MariaDB the machine runs). Prints the DSN on stdout when the server answers.
#   tests/services/mariadb.sh start DIR PORT   -> mysql://root@127.0.0.1:PORT/test
#   tests/services/mariadb.sh stop DIR
set -euo pipefail
cmd=${1:?start|stop}; dir=${2:?data dir}; port=${3:-3307}
sock="$dir/mariadb.sock"; pidf="$dir/mariadb.pid"
case "$cmd" in
start)
  mkdir -p "$dir"
  if [ ! -d "$dir/data/mysql" ]; then
    mariadb-install-db --no-defaults --datadir="$dir/data" --auth-root-authentication-method=normal \
      --skip-test-db --user="$(id -un)" >"$dir/install.log" 2>&1 \
      || { echo "mariadb-install-db failed; see $dir/install.log" >&2; exit 1; }
  fi
  # --user is needed (and harmless) when run as root; the server owns only $dir
  mariadbd --no-defaults --datadir="$dir/data" --port="$port" --bind-address=127.0.0.1 --socket="$sock" \
    --pid-file="$pidf" --log-error="$dir/error.log" --user="$(id -un)" --skip-name-resolve \
    --innodb-buffer-pool-size=32M --innodb-log-file-size=8M --performance-schema=OFF \
    --max-connections=60 >/dev/null 2>&1 &
  for _ in $(seq 1 60); do
    if mariadb --no-defaults -h 127.0.0.1 -P "$port" -u root -e "CREATE DATABASE IF NOT EXISTS test" 2>/dev/null; then
      echo "mysql://root@127.0.0.1:$port/test"; exit 0
    fi
    sleep 0.5
  done
  echo "mariadbd did not answer on 127.0.0.1:$port; see $dir/error.log" >&2; exit 1 ;;
stop)
  # the server writes its files until it has exited: wait for it (30 s at most), so its folder can be removed
  if [ -f "$pidf" ]; then
    pid="$(cat "$pidf")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi ;;
esac
