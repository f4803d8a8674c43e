#!/bin/sh
# Installs Sightline's hook on this machine for the server at {{ server }}:
# downloads the hook binary for this OS and processor from that server, checks its
# SHA-256, puts it in ~/.local/bin (no root), signs the machine in (device code in a
# browser) and registers the hooks of every agent found here. Running it again changes
# nothing; --uninstall undoes it.
#
#   curl -fsSL {{ server }}/install.sh | sh
#   curl -fsSL {{ server }}/install.sh | sh -s -- --uninstall
#
# SIGHTLINE_BIN_DIR moves the binary (default ~/.local/bin).
set -eu

SERVER={{ server_quoted }}

say() { printf 'sightline: %s\n' "$*"; }
fail() { printf 'sightline: %s\n' "$*" >&2; exit 1; }

usage() {
    cat <<USAGE
Usage: install.sh [--uninstall]
  (no option)   install or update the hook binary, sign in, register the agents' hooks
  --uninstall   remove the hooks, this machine's login and queue, and the binary
USAGE
}

detect_platform() {
    case "$(uname -s)" in
        Linux) os=linux ;;
        Darwin) os=macos ;;
        MINGW* | MSYS* | CYGWIN*) fail "on Windows, see $SERVER/install (the hook is installed from PowerShell there)" ;;
        *) fail "Sightline has no hook binary for $(uname -s); it releases Linux, macOS and Windows" ;;
    esac
    case "$(uname -m)" in
        x86_64 | amd64) arch=x86_64 ;;
        aarch64 | arm64) arch=aarch64 ;;
        *) fail "Sightline has no hook binary for the $(uname -m) processor" ;;
    esac
    # A shell running under Rosetta says x86_64 on an Apple silicon Mac: take the native binary.
    if [ "$os" = macos ] && [ "$arch" = x86_64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
        arch=aarch64
    fi
    platform="$os-$arch"
}

download() {
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --proto '=http,https' -o "$2" "$1"
    elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$1"
    else
        fail "neither curl nor wget is installed"
    fi
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d ' ' -f 1
    elif command -v openssl >/dev/null 2>&1; then
        openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1
    else
        fail "found no sha256sum, shasum or openssl to check the download with; nothing was installed"
    fi
}

install_hook() {
    detect_platform
    tmp=$(mktemp -d 2>/dev/null || mktemp -d -t sightline)
    trap 'rm -rf "$tmp"' EXIT
    trap 'rm -rf "$tmp"; exit 130' INT TERM
    download "$SERVER/install/hook/$platform.sha256" "$tmp/sum" ||
        fail "this server has no hook binary for $platform; its administrator can add one from a release with: sightline hook-binaries add <file>"
    want=$(cut -d ' ' -f 1 <"$tmp/sum")
    case "$want" in
        *[!0-9a-f]* | "") fail "the server's SHA-256 for $platform is not a digest: $want" ;;
    esac
    if [ -f "$BIN" ] && [ "$(sha256_of "$BIN")" = "$want" ]; then
        say "$BIN is already this server's hook binary for $platform"
    else
        say "downloading the hook binary for $platform from $SERVER"
        download "$SERVER/install/hook/$platform" "$tmp/sightline" || fail "cannot download $SERVER/install/hook/$platform"
        got=$(sha256_of "$tmp/sightline")
        [ "$got" = "$want" ] ||
            fail "the downloaded binary's SHA-256 is $got, not $want as the server published; nothing was installed"
        mkdir -p "$BIN_DIR"
        # Copied beside its final name, then renamed: a hook running now sees the old
        # binary or the new one, never half of one.
        cp "$tmp/sightline" "$BIN.partial"
        chmod 755 "$BIN.partial"
        mv -f "$BIN.partial" "$BIN"
        say "installed $BIN (sha256 $want)"
    fi
    "$BIN" login --server "$SERVER" --if-needed </dev/null
    "$BIN" install --found </dev/null
    case ":${PATH:-}:" in
        *":$BIN_DIR:"*) ;;
        *) say "$BIN_DIR is not on your PATH: the hooks call $BIN by its full path; add it to PATH to run sightline yourself" ;;
    esac
    say "done; \`$BIN status\` shows what this machine sends"
}

uninstall_hook() {
    if [ ! -f "$BIN" ]; then
        say "$BIN is not installed; nothing to undo"
        return 0
    fi
    "$BIN" uninstall --found </dev/null
    # Send what is still queued, then forget the login, the queue and the log.
    "$BIN" flusher --once </dev/null >/dev/null 2>&1 || true
    tries=0
    until "$BIN" purge-local --all </dev/null; do
        tries=$((tries + 1))
        [ "$tries" -lt 30 ] || fail "a flusher is still running; run this again in a minute"
        sleep 1
    done
    rm -f "$BIN"
    say "removed $BIN; the server keeps what this machine sent (revoke its hook token under Settings)"
}

main() {
    mode=install
    for arg in "$@"; do
        case "$arg" in
            --uninstall) mode=uninstall ;;
            -h | --help)
                usage
                return 0
                ;;
            *)
                usage >&2
                fail "unknown option $arg"
                ;;
        esac
    done
    [ -n "${HOME:-}" ] || fail "HOME is not set"
    BIN_DIR="${SIGHTLINE_BIN_DIR:-$HOME/.local/bin}"
    BIN="$BIN_DIR/sightline"
    if [ "$mode" = uninstall ]; then uninstall_hook; else install_hook; fi
}

# Everything above only defines; the shell has read the whole script before this line
# runs, so a download cut short never runs half of it.
main "$@"
