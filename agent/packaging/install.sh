#!/bin/sh
# Installs the Gatehouse agent as a systemd service. Run as root:
#
#   curl -fsSL "$SERVER/agent/install.sh" | sudo GATEHOUSE_SERVER_ADDRESS="$SERVER" GATEHOUSE_TENANT_ID=<tenant> sh
#
# A namespace that requires an install key gets it the same way, GATEHOUSE_INSTALL_KEY=<key>.
# Needs Node.js 20 or newer (Debian/Ubuntu: apt-get install nodejs). Optional settings are
# passed the same way: GATEHOUSE_INSTALL_KEY, GATEHOUSE_PREFERRED_HOSTNAME, GATEHOUSE_PREFERRED_IDENTITY,
# GATEHOUSE_KEEPALIVE_INTERVAL, GATEHOUSE_SINGLE_USER_PASSWORD. GATEHOUSE_AGENT_TARBALL may
# name a local file or URL instead of the server's copy; GATEHOUSE_INSTALL_ROOT (default /)
# and GATEHOUSE_NO_SYSTEMD=1 let it install into a staging tree.
set -eu

fail() { echo "gatehouse-agent install: $*" >&2; exit 1; }

[ -n "${GATEHOUSE_SERVER_ADDRESS:-}" ] || fail "GATEHOUSE_SERVER_ADDRESS is required"
[ -n "${GATEHOUSE_TENANT_ID:-}" ] || fail "GATEHOUSE_TENANT_ID is required"
ROOT="${GATEHOUSE_INSTALL_ROOT:-/}"
command -v node >/dev/null 2>&1 || fail "Node.js 20 or newer is needed (apt-get install nodejs)"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || fail "Node.js 20 or newer is needed, found $(node --version)"

case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) fail "no agent build for $(uname -m) yet" ;;
esac
tarball="${GATEHOUSE_AGENT_TARBALL:-${GATEHOUSE_SERVER_ADDRESS%/}/agent/gatehouse-agent-linux-$arch.tar.gz}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case "$tarball" in
  http://*|https://*) curl -fsSL "$tarball" -o "$work/agent.tar.gz" ||
    fail "cannot download $tarball (a 404 means the server has not built the agent for $arch: npm run build -w agent there)" ;;
  *) cp "$tarball" "$work/agent.tar.gz" ;;
esac
tar -xzf "$work/agent.tar.gz" -C "$work"

mkdir -p "$ROOT/opt" "$ROOT/etc/default" "$ROOT/etc/systemd/system" "$ROOT/var/lib/gatehouse-agent"
rm -rf "$ROOT/opt/gatehouse-agent"
mv "$work/gatehouse-agent" "$ROOT/opt/gatehouse-agent"
chmod 0700 "$ROOT/var/lib/gatehouse-agent"

env_file="$ROOT/etc/default/gatehouse-agent"
umask 077
{
  echo "GATEHOUSE_SERVER_ADDRESS=$GATEHOUSE_SERVER_ADDRESS"
  echo "GATEHOUSE_TENANT_ID=$GATEHOUSE_TENANT_ID"
  echo "GATEHOUSE_PRIVATE_KEY=${GATEHOUSE_PRIVATE_KEY:-/var/lib/gatehouse-agent/agent.key}"
  for name in GATEHOUSE_INSTALL_KEY GATEHOUSE_PREFERRED_HOSTNAME GATEHOUSE_PREFERRED_IDENTITY GATEHOUSE_KEEPALIVE_INTERVAL GATEHOUSE_SINGLE_USER_PASSWORD; do
    eval "value=\${$name:-}"
    [ -z "$value" ] || echo "$name=$value"
  done
} > "$env_file"
chmod 0600 "$env_file"
cp "$ROOT/opt/gatehouse-agent/gatehouse-agent.service" "$ROOT/etc/systemd/system/gatehouse-agent.service"

if [ "${GATEHOUSE_NO_SYSTEMD:-}" = "1" ]; then
  echo "installed into $ROOT (systemd not touched)"
  exit 0
fi
command -v systemctl >/dev/null 2>&1 || fail "systemd not found; run: node --initial-old-space-size=64 /opt/gatehouse-agent/gatehouse-agent.mjs with the settings in $env_file"
systemctl daemon-reload
systemctl enable --now gatehouse-agent.service
echo "gatehouse-agent installed and started; follow it with: journalctl -u gatehouse-agent -f"
