#!/usr/bin/env bash
# Set up DIBench on a fresh Debian-like machine: the fonts the screens need (Roboto for Latin,
# WenQuanYi Micro Hei for Chinese) and the package with every extra. With --dev, also what the
# test suite uses: Debian's headless Chromium (the HTML report is opened in it). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
dev=0
[ "${1:-}" = "--dev" ] && dev=1

fonts=(
  /usr/share/fonts/truetype/wqy/wqy-microhei.ttc
  /usr/share/fonts/truetype/roboto/unhinted/RobotoTTF/Roboto-Regular.ttf
)
missing=0
for f in "${fonts[@]}"; do [ -f "$f" ] || missing=1; done
if [ "$missing" = 1 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "setup: installing fonts-wqy-microhei and fonts-roboto-unhinted (Debian)" >&2
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      fonts-wqy-microhei fonts-roboto-unhinted >/dev/null
  else
    echo "setup: warning: install Roboto and a CJK font, or set DIBENCH_FONT_CJK" >&2
  fi
fi

if [ "$dev" = 1 ] && ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "setup: installing chromium (Debian) for the HTML report tests" >&2
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium \
    >/dev/null || echo "setup: warning: chromium not installed; its tests will be skipped" >&2
fi

python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore -e ".[dev]"
echo "setup: ok ($(python3 -m dibench --version))" >&2
