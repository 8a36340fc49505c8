#!/usr/bin/env bash
# Set up DIBench on a fresh Debian-like machine: the fonts the screens need (Roboto for Latin,
# WenQuanYi Micro Hei for Chinese) and the package with its OCR and dev extras. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

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

python3 -m pip install -q --disable-pip-version-check -e ".[dev]"
echo "setup: ok ($(python3 -m dibench --version))" >&2
