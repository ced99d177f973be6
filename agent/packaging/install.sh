#!/bin/sh
# Installs the Gatehouse agent (a single executable: the device needs no Node.js) and starts it with the device's
# init system. As root, or as a user who may use sudo:
#
#   curl -fsSL "$SERVER/agent/install.sh" | GATEHOUSE_SERVER_ADDRESS="$SERVER" GATEHOUSE_TENANT_ID=<tenant> sh
#
# systemd gets /etc/systemd/system/gatehouse-agent.service, OpenRC /etc/init.d/gatehouse-agent; with neither (a
# container, a minimal system) it says how to run the agent. Optional settings are passed the same way:
# GATEHOUSE_INSTALL_KEY, GATEHOUSE_PREFERRED_HOSTNAME, GATEHOUSE_PREFERRED_IDENTITY, GATEHOUSE_KEEPALIVE_INTERVAL,
# GATEHOUSE_SINGLE_USER_PASSWORD. GATEHOUSE_AGENT_EXECUTABLE may name a local file or URL instead of the server's
# copy; GATEHOUSE_INIT (systemd, openrc or none) overrides the detection; GATEHOUSE_INSTALL_ROOT (default /) and
# GATEHOUSE_NO_SYSTEMD=1 install into a staging tree and start nothing.
set -eu

fail() { echo "gatehouse-agent install: $*" >&2; exit 1; }

[ -n "${GATEHOUSE_SERVER_ADDRESS:-}" ] || fail "GATEHOUSE_SERVER_ADDRESS is required"
[ -n "${GATEHOUSE_TENANT_ID:-}" ] || fail "GATEHOUSE_TENANT_ID is required"
ROOT="${GATEHOUSE_INSTALL_ROOT:-/}"
SERVER="${GATEHOUSE_SERVER_ADDRESS%/}"

# Root needs nothing more; anyone else goes through sudo for the steps that write system files.
SUDO=""
if [ "$(id -u)" != "0" ]; then
  command -v sudo >/dev/null 2>&1 || fail "run this as root (sudo was not found)"
  SUDO="sudo"
fi

case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) fail "no agent build for $(uname -m); the agent is built for x86_64 and aarch64" ;;
esac

fetch() { # fetch <url or file> <destination>
  case "$1" in
    http://* | https://*)
      if command -v curl >/dev/null 2>&1; then curl -fsSL "$1" -o "$2"
      elif command -v wget >/dev/null 2>&1; then wget -q -O "$2" "$1"
      else fail "curl or wget is needed to download $1"; fi ;;
    *) cp "$1" "$2" ;;
  esac
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
executable="${GATEHOUSE_AGENT_EXECUTABLE:-$SERVER/agent/gatehouse-agent-linux-$arch}"
fetch "$executable" "$work/gatehouse-agent" ||
  fail "cannot download $executable (a 404 means the server has not built the agent for $arch)"
chmod 0755 "$work/gatehouse-agent"

if [ -n "${GATEHOUSE_INIT:-}" ]; then init="$GATEHOUSE_INIT"
elif [ -d /run/systemd/system ]; then init=systemd
elif command -v openrc-run >/dev/null 2>&1 || [ -x /sbin/openrc-run ]; then init=openrc
else init=none; fi
case "$init" in systemd | openrc | none) ;; *) fail "GATEHOUSE_INIT must be systemd, openrc or none" ;; esac

umask 077
{
  echo "GATEHOUSE_SERVER_ADDRESS=$GATEHOUSE_SERVER_ADDRESS"
  echo "GATEHOUSE_TENANT_ID=$GATEHOUSE_TENANT_ID"
  echo "GATEHOUSE_PRIVATE_KEY=${GATEHOUSE_PRIVATE_KEY:-/var/lib/gatehouse-agent/agent.key}"
  for name in GATEHOUSE_INSTALL_KEY GATEHOUSE_PREFERRED_HOSTNAME GATEHOUSE_PREFERRED_IDENTITY GATEHOUSE_KEEPALIVE_INTERVAL GATEHOUSE_SINGLE_USER_PASSWORD; do
    eval "value=\${$name:-}"
    [ -z "$value" ] || echo "$name=$value"
  done
} > "$work/settings"
umask 022

$SUDO mkdir -p "$ROOT/usr/local/bin" "$ROOT/etc/default" "$ROOT/var/lib/gatehouse-agent"
$SUDO chmod 0700 "$ROOT/var/lib/gatehouse-agent"
$SUDO cp "$work/gatehouse-agent" "$ROOT/usr/local/bin/gatehouse-agent.new"
$SUDO mv "$ROOT/usr/local/bin/gatehouse-agent.new" "$ROOT/usr/local/bin/gatehouse-agent"
env_file="$ROOT/etc/default/gatehouse-agent"
$SUDO cp "$work/settings" "$env_file"
$SUDO chmod 0600 "$env_file"
# The first start unpacks the agent's runtime beside its key; this one also shows that it runs here.
$SUDO env GATEHOUSE_AGENT_RUNTIME_DIR="$ROOT/var/lib/gatehouse-agent/runtime" "$ROOT/usr/local/bin/gatehouse-agent" --version >/dev/null ||
  fail "the downloaded agent does not run on this machine ($(uname -m))"

case "$init" in
  systemd)
    fetch "$SERVER/agent/gatehouse-agent.service" "$work/unit"
    $SUDO mkdir -p "$ROOT/etc/systemd/system"
    $SUDO cp "$work/unit" "$ROOT/etc/systemd/system/gatehouse-agent.service"
    ;;
  openrc)
    fetch "$SERVER/agent/gatehouse-agent.openrc" "$work/openrc"
    $SUDO mkdir -p "$ROOT/etc/init.d"
    $SUDO cp "$work/openrc" "$ROOT/etc/init.d/gatehouse-agent"
    $SUDO chmod 0755 "$ROOT/etc/init.d/gatehouse-agent"
    ;;
esac

if [ "${GATEHOUSE_NO_SYSTEMD:-}" = "1" ]; then
  echo "installed into $ROOT ($init service files written, nothing started)"
  exit 0
fi
case "$init" in
  systemd)
    $SUDO systemctl daemon-reload
    $SUDO systemctl enable gatehouse-agent.service
    # restart, not start: run again over an older agent, the command upgrades it.
    $SUDO systemctl restart gatehouse-agent.service
    echo "gatehouse-agent installed and started; follow it with: journalctl -u gatehouse-agent -f"
    ;;
  openrc)
    $SUDO rc-update add gatehouse-agent default
    if $SUDO rc-service gatehouse-agent status >/dev/null 2>&1; then
      $SUDO rc-service gatehouse-agent restart
    else
      $SUDO rc-service gatehouse-agent start
    fi
    echo "gatehouse-agent installed and started; its log: /var/log/gatehouse-agent.log"
    ;;
  none)
    echo "gatehouse-agent installed as /usr/local/bin/gatehouse-agent; no systemd or OpenRC here, so start it yourself"
    echo "(in the background, under your supervisor, or as a container's command), as root:"
    echo "  sh -c 'set -a; . /etc/default/gatehouse-agent; exec /usr/local/bin/gatehouse-agent'"
    ;;
esac
