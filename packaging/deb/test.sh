#!/usr/bin/env bash
# The Debian package on this machine, as an operator uses it (CI runs this after
# `cargo test`; it needs root and dpkg, and a machine with no other Sightline on it):
#   1. build the package twice (versions <v>-1 and <v>-2, the same binaries);
#   2. run README's operator quick start as written (it installs the first package),
#      starting the unit's own command (ExecStart, its Environment) as the sightline user
#      where systemd would; check the user, /var/lib/sightline, main.db, the unit's
#      hardening; fetch /install.sh and the built-in hook binary (which is
#      /usr/bin/sightline-hook, digest checked); stop it with SIGTERM;
#   4. put an older release's data directory in place (tests/fixtures/datadir-v26.tar.zst,
#      written by the schema-26 binary) and install the second package over the first:
#      postinst migrates main.db 26 -> current, every user and event is still there, and
#      the server serves it;
#   5. remove, then purge: the binaries go, /var/lib/sightline and its data stay.
#
#   packaging/deb/test.sh [--no-build]
set -euo pipefail
cd "$(dirname "$0")/../.."

[ "$(id -u)" = 0 ] || { echo "packaging/deb/test.sh: needs root (dpkg -i)" >&2; exit 1; }
marker=/var/lib/sightline/.made-by-packaging-test
if dpkg -s sightline >/dev/null 2>&1 || { [ -e /var/lib/sightline ] && [ ! -e "$marker" ]; }; then
    if [ ! -e "$marker" ]; then
        echo "packaging/deb/test.sh: this machine has a Sightline package or /var/lib/sightline of its own; not touching it" >&2
        exit 1
    fi
fi

server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    dpkg -P sightline >/dev/null 2>&1 || true
    rm -rf /var/lib/sightline /etc/sightline
    userdel sightline 2>/dev/null || true
    groupdel sightline 2>/dev/null || true
    [ -z "${packages:-}" ] || rm -rf "$packages"
}
cleanup
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }

version=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["version"])')
step "build the package twice ($version-1, $version-2)"
# cargo deb clears its output directory of older builds: each package is kept aside.
packages=$(mktemp -d)
built=$(packaging/deb/build.sh "$@" --deb-version "$version-1" | tail -n 1)
first="$packages/$(basename "$built")" && mv "$built" "$first"
built=$(packaging/deb/build.sh --no-build --deb-version "$version-2" | tail -n 1)
second="$packages/$(basename "$built")" && mv "$built" "$second"
[ -f "$first" ] && [ -f "$second" ] || fail "cargo deb made no package ($first, $second)"
dpkg-deb --info "$first" | grep -E "Package|Version|Depends"
dpkg-deb --contents "$first" | awk '{print $1, $6}'
unit=$(dpkg-deb --contents "$first" | awk '{print $6}' | grep 'systemd/system/sightline.service$' | sed 's#^\.##')
[ -n "$unit" ] || fail "the package has no systemd unit"

# The unit's command and environment, run as its user (systemd's part, where it runs).
exec_start=$(dpkg-deb --fsys-tarfile "$first" | tar -xO ".$unit" | sed -n 's/^ExecStart=//p')
mapfile -t unit_env < <(dpkg-deb --fsys-tarfile "$first" | tar -xO ".$unit" | sed -n 's/^Environment=//p')
start_unit() {
    # setpriv execs the command as the user (no parent left between), so the pid is the
    # server's and SIGTERM reaches it as systemd's would.
    # shellcheck disable=SC2086 # ExecStart is split into words, as systemd splits it.
    setpriv --reuid=sightline --regid=sightline --init-groups env "${unit_env[@]}" $exec_start \
        >/tmp/sightline-package-test.log 2>&1 &
    server_pid=$!
    for _ in $(seq 1 100); do
        runuser -u sightline -- /usr/bin/sightline healthcheck --config /etc/sightline/sightline.toml >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    cat /tmp/sightline-package-test.log >&2
    fail "the server did not become ready"
}
stop_unit() {
    kill -TERM "$server_pid"
    wait "$server_pid" || fail "the server did not stop cleanly on SIGTERM"
    server_pid=
}

step "README's operator quick start, every line as written (in the package's directory)"
[ "$(basename "$first")" = "sightline_${version}-1_amd64.deb" ] || fail "unexpected package name $first"
grep -q "dpkg -i $(basename "$first") " README.md || fail "README's quick start does not install $(basename "$first")"
mapfile -t quick_start < <(awk '/<!-- operator-quick-start/{f=1;next} f&&/^```sh/{g=1;next} g&&/^```/{exit} g' README.md)
[ "${#quick_start[@]}" -ge 3 ] || fail "README's operator quick start not found"
for line in "${quick_start[@]}"; do
    command="${line%%#*}"
    [ -n "${command// /}" ] || continue
    echo "+ $command"
    (cd "$(dirname "$first")" && bash -euo pipefail -c "$command")
    if [[ "$command" == "dpkg -i "* ]]; then
        touch "$marker"
        # Without systemd (a container), start the unit's command as systemd would.
        [ -d /run/systemd/system ] || start_unit
    fi
done

step "what the package made"
getent passwd sightline | grep -q ':/var/lib/sightline:/usr/sbin/nologin$' || fail "no sightline system user"
[ "$(stat -c '%U %a' /var/lib/sightline)" = "sightline 750" ] || fail "/var/lib/sightline: $(stat -c '%U %a' /var/lib/sightline)"
[ "$(stat -c '%G %a' /etc/sightline/sightline.toml)" = "sightline 640" ] || fail "sightline.toml: $(stat -c '%G %a' /etc/sightline/sightline.toml)"
[ "$(stat -c '%U' /var/lib/sightline/main.db)" = sightline ] || fail "main.db is not the service's"
grep -q "^NoNewPrivileges=true" "$unit" && grep -q "^ProtectSystem=strict" "$unit" || fail "the unit lost its hardening"
runuser -u sightline -- /usr/bin/sightline user list --config /etc/sightline/sightline.toml | grep -q "admin@example.com" ||
    fail "the quick start's administrator is not there"
step "the running unit ($exec_start, as sightline)"
runuser -u sightline -- /usr/bin/sightline healthcheck --config /etc/sightline/sightline.toml
script=$(curl -fsS http://127.0.0.1:4000/install.sh)
grep -q "^SERVER='http://127.0.0.1:4000'$" <<<"$script" || fail "install.sh does not name the address it was fetched from"
want=$(sha256sum /usr/bin/sightline-hook | cut -d ' ' -f 1)
served=$(curl -fsS http://127.0.0.1:4000/install/hook/linux-x86_64.sha256 | cut -d ' ' -f 1)
[ "$served" = "$want" ] || fail "the server hands out $served, not /usr/bin/sightline-hook ($want)"
curl -fsS -o /tmp/sightline-hook.download http://127.0.0.1:4000/install/hook/linux-x86_64
[ "$(sha256sum /tmp/sightline-hook.download | cut -d ' ' -f 1)" = "$want" ] || fail "the downloaded hook differs"
rm -f /tmp/sightline-hook.download
echo "serves /usr/bin/sightline-hook ($(stat -c %s /usr/bin/sightline-hook) bytes, sha256 $want)"
stop_unit

step "an older release's data directory (schema 26), then $second over $first"
find /var/lib/sightline -mindepth 1 -not -name "$(basename "$marker")" -delete
zstd -dc tests/fixtures/datadir-v26.tar.zst | tar -x -C /var/lib/sightline
chown -R sightline:sightline /var/lib/sightline
count() {
    python3 - "$1" <<'PY'
import glob, sqlite3, sys
data = sys.argv[1]
main = sqlite3.connect(f"file:{data}/main.db?mode=ro", uri=True)
users = main.execute("SELECT count(*) FROM users").fetchone()[0]
version = main.execute("PRAGMA user_version").fetchone()[0]
events = sum(sqlite3.connect(f"file:{p}?mode=ro", uri=True).execute("SELECT count(*) FROM events").fetchone()[0]
             for p in sorted(glob.glob(f"{data}/events/*.db")))
print(f"schema {version}, {users} users, {events} events")
PY
}
before=$(count /var/lib/sightline)
echo "before: $before"
[[ "$before" == "schema 26, "* ]] || fail "the fixture is not schema 26: $before"
dpkg -i "$second" | tee /tmp/sightline-package-upgrade.log
grep -q "migrated main.db from schema version 26 to" /tmp/sightline-package-upgrade.log || fail "postinst did not migrate"
after=$(count /var/lib/sightline)
echo "after:  $after"
[ "${before#schema 26, }" = "${after#schema *, }" ] || fail "users or events changed: $before -> $after"
[ "$(dpkg-query -W -f '${Version}' sightline)" = "$version-2" ] || fail "not upgraded"
start_unit
served_users=$(runuser -u sightline -- /usr/bin/sightline user list --config /etc/sightline/sightline.toml | grep -c '@')
echo "the upgraded server lists $served_users users"
stop_unit

step "remove, then purge: the data stays"
dpkg -r sightline
[ ! -e /usr/bin/sightline ] && [ ! -e /usr/bin/sightline-hook ] || fail "binaries left after remove"
[ -f /etc/sightline/sightline.toml ] || fail "remove deleted the configuration (only purge does)"
[ "$(count /var/lib/sightline)" = "$after" ] || fail "remove changed the data"
dpkg -P sightline
[ ! -e /etc/sightline/sightline.toml ] || fail "purge kept the configuration"
[ "$(count /var/lib/sightline)" = "$after" ] || fail "purge changed the data"
getent passwd sightline >/dev/null || fail "purge deleted the user that owns the data"
echo
echo "packaging/deb/test.sh: installed, ran, upgraded (schema 26 migrated, data kept), removed and purged (data kept)"
