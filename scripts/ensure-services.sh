#!/usr/bin/env bash
# Start PostgreSQL and Redis on this machine when they are down, and create the site's database.
set -euo pipefail
PGHOST=${POSTGRES_HOST:-127.0.0.1}
PGPORT=${POSTGRES_PORT:-5432}
PGUSER=${POSTGRES_USER:-postgres}
DB=${POSTGRES_DB:-mtg}

pg_up() { pg_isready -q -h "$PGHOST" -p "$PGPORT" 2>/dev/null; }
if ! pg_up; then
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    echo "starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  fi
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
  pg_up || { echo "PostgreSQL is not running on $PGHOST:$PGPORT and could not be started" >&2; exit 1; }
fi
if ! psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -Atc "select 1 from pg_database where datname='$DB'" postgres | grep -q 1; then
  createdb -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" "$DB"
fi

redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }
if ! redis_up; then
  echo "starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  for _ in $(seq 1 30); do redis_up && break; sleep 0.5; done
  redis_up || { echo "Redis is not running on 127.0.0.1:6379 and could not be started" >&2; exit 1; }
fi
echo "services: PostgreSQL $PGHOST:$PGPORT/$DB and Redis 127.0.0.1:6379 are up"
