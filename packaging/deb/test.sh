#!/usr/bin/env bash
# The Debian package on this machine, as an operator uses it (CI runs this after
# `cargo test`; it needs root and dpkg, and a machine with no other Sightline on it):
#   1. build the package twice (versions <v>-1 and <v>-2, the same binaries); lintian
#      finds no error in it; the unit it installs scores at most 2.0 in
#      `systemd-analyze security` (--threshold=20: the threshold is the score times ten);
#   2. the unit under systemd itself: a container (systemd-nspawn) boots this machine's
#      own root through an overlay, so nothing it writes reaches the disk; the package is
#      installed there and systemd starts the hardened unit; it serves, its process has
#      the sandbox the unit asks for (no capabilities, the system call filter, its own
#      user namespace, umask 0077, a /proc of its own process), its files are 0600 and
#      0700, the port-443 drop-in of docs/operations.md works, it stops cleanly, and the
#      second package upgrades it under systemd;
#   3. run README's operator quick start as written (it installs the first package),
#      starting the unit's own command (ExecStart, its Environment, its UMask, no
#      capabilities, no new privileges) as the sightline user where systemd would; check
#      the user, /var/lib/sightline, main.db and the modes of its files; fetch
#      /install.sh and the built-in hook binary (which is /usr/bin/sightline-hook, digest
#      checked); stop it with SIGTERM;
#   4. put an older release's data directory in place (tests/fixtures/datadir-v26.tar.zst,
#      written by the schema-26 binary, in a 0750 directory as older packages made it) and
#      install the second package over the first: postinst migrates main.db 26 -> current,
#      every user and event is still there, the directory is 0700, and the server serves it;
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

# What the test runs besides dpkg and cargo -> the Debian package that has it (installed
# when missing, as scripts/test installs its own).
declare -A package=([lintian]=lintian [systemd-nspawn]=systemd-container [systemd-analyze]=systemd
    [nsenter]=util-linux [setpriv]=util-linux [pgrep]=procps [curl]=curl [zstd]=zstd)
missing=()
for command in "${!package[@]}"; do
    type -P "$command" >/dev/null 2>&1 || missing+=("${package[$command]}")
done
if ((${#missing[@]})); then
    echo "== installing ${missing[*]} (Debian packages this test uses)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

server_pid=
container=/tmp/sightline-package-test.container
container_pid=
container_stop() {
    if [ -n "$container_pid" ]; then
        # SIGTERM to systemd-nspawn shuts the container's systemd down in order.
        kill -TERM "$container_pid" 2>/dev/null && wait "$container_pid" 2>/dev/null || true
        container_pid=
    fi
    if [ -d "$container" ]; then
        ! mountpoint -q "$container/root" || umount "$container/root"
        ! mountpoint -q "$container" || umount "$container"
        rmdir "$container"
    fi
    # systemd-nspawn leaves this empty directory behind where /run is not a tmpfs.
    rmdir /run/systemd/nspawn/propagate/sightline-package-test 2>/dev/null || true
}
cleanup() {
    [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    container_stop
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
mkdir "$packages/unit"
dpkg-deb --fsys-tarfile "$first" | tar -xO ".$unit" >"$packages/unit/sightline.service"

step "lintian on $(basename "$first")"
# Errors fail the test. What lintian finds that is a choice is overridden in
# packaging/deb/lintian-overrides, each with its reason (packaging/release.md).
started=$SECONDS
lintian --fail-on error "$first" || fail "lintian found errors in $(basename "$first")"
echo "lintian: no error ($((SECONDS - started)) s)"

step "the unit's exposure (systemd-analyze security, at most 2.0)"
# --threshold is the score times ten (the scale is 0-100 inside, printed as 0.0-10.0):
# 20 fails a unit above 2.0. This is the unit as the package installs it, at /usr/bin.
if ! analysis=$(systemd-analyze security --offline=yes --threshold=20 "$packages/unit/sightline.service" 2>&1); then
    echo "$analysis"
    fail "the unit scores above 2.0"
fi
grep '✗' <<<"$analysis" || true # what the unit leaves open, with each item's weight
grep 'Overall exposure' <<<"$analysis"

step "the unit under systemd: a container booted from this machine's own root"
# start_unit below runs the unit's command without systemd, which cannot apply most of
# the unit's sandbox. Here systemd does: systemd-nspawn boots this machine's root
# directory through an overlay whose changes stay in memory (nothing reaches the disk;
# the host has no Sightline yet, so neither has the container), with a network of its
# own (loopback only: its ports are not the host's). Only the base system is started
# (basic.target), not the host's services.
started=$SECONDS
mkdir "$container"
mount -t tmpfs -o mode=0700 sightline-package-test "$container"
mkdir "$container/upper" "$container/work" "$container/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$container/upper,workdir=$container/work" "$container/root"
systemd-nspawn --quiet --directory="$container/root" --machine=sightline-package-test --register=no --keep-unit --link-journal=no \
    --private-network --console=read-only --bind-ro="$packages:/packages" \
    --boot -- systemd.unit=basic.target >/tmp/sightline-package-test.container.log 2>&1 </dev/null &
container_pid=$!
leader=
for _ in $(seq 1 100); do
    leader=$(pgrep -P "$container_pid" -x systemd || true)
    [ -n "$leader" ] && break
    sleep 0.1
done
[ -n "$leader" ] || { cat /tmp/sightline-package-test.container.log >&2; fail "the container's systemd did not start"; }
inside() { nsenter --target "$leader" --all -- "$@"; }
state=
for _ in $(seq 1 120); do
    state=$(inside systemctl is-system-running --wait 2>/dev/null || true)
    [ "$state" = running ] || [ "$state" = degraded ] && break
    sleep 0.5
done
case "$state" in
    running) echo "booted (basic.target) in $(inside systemd-analyze time 2>/dev/null | head -n 1 | sed 's/^Startup finished in //')" ;;
    degraded) inside systemctl --failed --no-pager ;; # not the unit's doing; shown, not fatal
    *) cat /tmp/sightline-package-test.container.log >&2; fail "the container did not boot ($state)" ;;
esac
unit_journal() { inside journalctl --unit=sightline --no-pager --output=short-monotonic | tail -n 40 >&2; }
# A machine image built for containers may carry a policy-rc.d that forbids packages to
# start their services (Docker's base images do); an operator's machine has none. Gone
# from the container only (the overlay), so postinst starts the unit as it would there.
inside rm -f /usr/sbin/policy-rc.d

inside dpkg -i "/packages/$(basename "$first")" || fail "dpkg -i failed in the container"
inside systemctl is-active --quiet sightline || { unit_journal; fail "systemd did not start sightline.service"; }
main_pid=$(inside systemctl show --property=MainPID --value sightline)
echo "systemd started sightline.service (pid $main_pid in the container)"
# The online analysis reads the unit as systemd loaded it, drop-ins and defaults included.
if ! analysis=$(inside systemd-analyze security --threshold=20 sightline.service 2>&1); then
    echo "$analysis"
    fail "the loaded unit scores above 2.0"
fi
grep 'Overall exposure' <<<"$analysis"

# The sandbox is on the process, not only in the file: no capabilities in any set, no
# new privileges, the system call filter (seccomp mode 2), umask 0077, and a user
# namespace of its own (a uid map of single ids, not the host's whole range).
status=$(inside cat "/proc/$main_pid/status")
for want in "NoNewPrivs:1" "Seccomp:2" "CapInh:0000000000000000" "CapPrm:0000000000000000" \
    "CapEff:0000000000000000" "CapBnd:0000000000000000" "CapAmb:0000000000000000" "Umask:0077"; do
    grep -qx "${want%%:*}:[[:space:]]*${want#*:}" <<<"$status" || fail "the server's /proc/$main_pid/status has no $want"
done
[ "$(inside awk '{print $3}' "/proc/$main_pid/uid_map" | sort -u)" = 1 ] ||
    fail "the server is not in a user namespace of its own: $(inside cat "/proc/$main_pid/uid_map")"
# /proc as the unit mounts it (ProtectProc=invisible, ProcSubset=pid), read by a process
# of the sightline user in the server's mount namespace: its own /proc/self/status, stat
# and fd (the server's memory, CPU and open files) are there; the container's PID 1
# (root's) and the kernel's files (/proc/meminfo, /proc/sys) are not.
inside nsenter --target "$main_pid" --mount -- setpriv --reuid=sightline --regid=sightline --clear-groups \
    sh -c 'head -c 1 /proc/self/status >/dev/null && head -c 1 /proc/self/stat >/dev/null && ls /proc/self/fd >/dev/null &&
           [ ! -e /proc/1 ] && [ ! -e /proc/meminfo ] && [ ! -e /proc/sys ]' ||
    fail "/proc in the unit's namespace is not its own process's alone"

inside /usr/bin/sightline healthcheck --config /etc/sightline/sightline.toml
# Read whole, then matched: `curl | grep -q` fails under pipefail when grep stops reading
# at its match before curl has written the rest (curl: (23) Failed writing body).
served=$(inside curl -fsS http://127.0.0.1:4000/install.sh)
grep -q "^SERVER='http://127.0.0.1:4000'$" <<<"$served" ||
    fail "the unit under systemd does not serve /install.sh"
echo 'a long passphrase of hers' | inside runuser -u sightline -- /usr/bin/sightline user add --config /etc/sightline/sightline.toml \
    --email admin@example.com --name Admin --role ADMIN --password-stdin
# UMask=0077 and StateDirectoryMode=0700 (and postinst's migrate under umask 0077): the
# data directory and everything in it is the service's alone.
[ "$(inside stat -c '%U %a' /var/lib/sightline)" = "sightline 700" ] ||
    fail "/var/lib/sightline under systemd: $(inside stat -c '%U %a' /var/lib/sightline)"
open=$(inside find /var/lib/sightline -mindepth 1 -perm /077 -printf '%m %p\n')
[ -z "$open" ] || fail "files in /var/lib/sightline others can read: $open"
echo "/var/lib/sightline: $(inside find /var/lib/sightline -mindepth 1 | wc -l) files and directories, none readable by others"
# Ingest under the system call filter: 5 s of hook batches from 10 developers, every
# event stored (a refused call would fail a write, and the batch with it).
token=$(inside runuser -u sightline -- /usr/bin/sightline token create --config /etc/sightline/sightline.toml \
    --user admin@example.com --kind hook 2>/dev/null | grep '^slh_')
bench=$(inside /usr/bin/sightline bench ingest --url http://127.0.0.1:4000 --token "$token" --developers 10 \
    --rate 200 --duration 5s 2>&1 || true)
summary=$(grep ' events accepted ' <<<"$bench" || true)
echo "$summary"
[[ "$summary" =~ \ [1-9][0-9]*\ events\ accepted.*\ 0\ rejected,\ 0\ errors$ ]] || { echo "$bench"; fail "ingest under systemd failed"; }

# The port-443 drop-in exactly as the unit's comment gives it (and docs/operations.md).
dropin=$(sed -n '/^# Port 443/,/^# (all three/p' "$packages/unit/sightline.service" | sed -n 's/^#   //p')
grep -qx 'PrivateUsers=false' <<<"$dropin" || fail "the unit's comment has no port-443 drop-in"
inside mkdir -p /etc/systemd/system/sightline.service.d
printf '%s\nEnvironment=SIGHTLINE_WEB_ADDR=127.0.0.1:443\n' "$dropin" |
    inside tee /etc/systemd/system/sightline.service.d/port-443.conf >/dev/null
inside systemctl daemon-reload
inside systemctl restart sightline || { unit_journal; fail "the unit with the port-443 drop-in did not start"; }
inside curl -fsS -o /dev/null http://127.0.0.1:443/health || fail "the web app is not on port 443 with the drop-in"
analysis=$(inside systemd-analyze security --threshold=20 sightline.service 2>&1) || { echo "$analysis"; fail "the port-443 drop-in scores above 2.0"; }
echo "with the port-443 drop-in: serves on 443; $(grep -o 'Overall exposure.*' <<<"$analysis")"
inside rm -r /etc/systemd/system/sightline.service.d
inside systemctl daemon-reload
inside systemctl restart sightline

# SIGTERM from systemd: the server drains and exits 0 (not killed by a signal).
inside systemctl stop sightline
stopped=$(inside systemctl show --property=Result,ExecMainCode,ExecMainStatus sightline | sort | tr '\n' ' ')
[ "$stopped" = "ExecMainCode=1 ExecMainStatus=0 Result=success " ] || { unit_journal; fail "the unit did not stop cleanly: $stopped"; }
echo "stopped cleanly: $stopped"

# The upgrade under systemd: prerm stops the unit, postinst migrates and starts it.
inside systemctl start sightline
before_pid=$(inside systemctl show --property=MainPID --value sightline)
inside dpkg -i "/packages/$(basename "$second")" || fail "the upgrade failed in the container"
[ "$(inside dpkg-query -W -f '${Version}' sightline)" = "$version-2" ] || fail "not upgraded in the container"
inside systemctl is-active --quiet sightline || { unit_journal; fail "systemd did not start the upgraded unit"; }
after_pid=$(inside systemctl show --property=MainPID --value sightline)
[ "$after_pid" != "$before_pid" ] || fail "the upgrade did not restart the server"
people=$(inside runuser -u sightline -- /usr/bin/sightline user list --config /etc/sightline/sightline.toml)
grep -q admin@example.com <<<"$people" ||
    fail "the upgraded unit lost the administrator"
[ "$(inside systemctl show --property=NRestarts --value sightline)" = 0 ] || { unit_journal; fail "the unit restarted after a failure"; }
# Across start, ingest, restarts, stop and upgrade: no error in the server's log, no
# refused call it reported (EPERM, "Operation not permitted"), no kill by the filter
# (SIGSYS), and no warning from systemd that a directory's mode is not the unit's.
journal=$(inside journalctl --unit=sightline --no-pager --output=cat)
if grep -E 'Operation not permitted|status=31/SYS|"level":"ERROR"|mode is different' <<<"$journal"; then
    fail "the unit's journal has the errors above"
fi
echo "upgraded to $version-2 under systemd (pid $before_pid -> $after_pid); the journal has no error"
container_stop
echo "the unit under systemd: $((SECONDS - started)) s"

# The unit's command and environment, run as its user (systemd's part, where it runs).
exec_start=$(sed -n 's/^ExecStart=//p' "$packages/unit/sightline.service")
mapfile -t unit_env < <(sed -n 's/^Environment=//p' "$packages/unit/sightline.service")
unit_umask=$(sed -n 's/^UMask=//p' "$packages/unit/sightline.service")
[ "$unit_umask" = 0077 ] || fail "the unit's UMask is ${unit_umask:-unset}, not 0077"
start_unit() {
    # setpriv execs the command as the user (no parent left between), so the pid is the
    # server's and SIGTERM reaches it as systemd's would. Of the unit's sandbox it applies
    # what needs no systemd: the unit's UMask, no capabilities (CapabilityBoundingSet=
    # empty) and NoNewPrivileges; the rest is checked under systemd above.
    # shellcheck disable=SC2086 # ExecStart is split into words, as systemd splits it.
    (umask "$unit_umask" && exec setpriv --reuid=sightline --regid=sightline --init-groups --no-new-privs \
        --bounding-set=-all --inh-caps=-all env "${unit_env[@]}" $exec_start) >/tmp/sightline-package-test.log 2>&1 &
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
# 0700 and 0600 (the unit's StateDirectoryMode and UMask, postinst's migrate under umask
# 0077): only the service and root read the data. The configuration stays root's,
# readable by the service's group.
[ "$(stat -c '%U %a' /var/lib/sightline)" = "sightline 700" ] || fail "/var/lib/sightline: $(stat -c '%U %a' /var/lib/sightline)"
[ "$(stat -c '%U:%G %a' /etc/sightline)" = "root:sightline 750" ] || fail "/etc/sightline: $(stat -c '%U:%G %a' /etc/sightline)"
[ "$(stat -c '%U:%G %a' /etc/sightline/sightline.toml)" = "root:sightline 640" ] || fail "sightline.toml: $(stat -c '%U:%G %a' /etc/sightline/sightline.toml)"
[ "$(stat -c '%U %a' /var/lib/sightline/main.db)" = "sightline 600" ] || fail "main.db: $(stat -c '%U %a' /var/lib/sightline/main.db)"
open=$(find /var/lib/sightline -mindepth 1 -perm /077 ! -path "$marker" -printf '%m %p\n')
[ -z "$open" ] || fail "files in /var/lib/sightline others can read: $open"
cmp -s "$unit" "$packages/unit/sightline.service" || fail "the installed unit differs from the package's"
people=$(runuser -u sightline -- /usr/bin/sightline user list --config /etc/sightline/sightline.toml)
grep -q "admin@example.com" <<<"$people" ||
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
# As packages before the hardened unit left it; postinst makes it 0700.
chmod 0750 /var/lib/sightline
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
[ "$(stat -c '%a' /var/lib/sightline)" = 700 ] || fail "the upgrade left /var/lib/sightline $(stat -c '%a' /var/lib/sightline)"
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
