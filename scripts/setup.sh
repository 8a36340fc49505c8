#!/usr/bin/env bash
# Set up DIBench on a fresh Debian-like machine: the fonts the screens need (Roboto for Latin,
# WenQuanYi Micro Hei for Chinese, DejaVu Sans Mono as the last fallback, Noto Sans Arabic and
# Hebrew and Symbola for what a real app's title holds beyond those) and the package with
# every extra. With --dev, also what the test suite opens: the faces its real-style scenes are drawn in (Liberation, DejaVu; see
# tests/fonts.py) and Debian's headless Chromium (the HTML report is opened in it). Idempotent:
# a package whose files are already there is not installed again.
set -euo pipefail
cd "$(dirname "$0")/.."
dev=0
[ "${1:-}" = "--dev" ] && dev=1

# "file-that-proves-it-is-installed package"; the second group only with --dev.
need=(
  "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc fonts-wqy-microhei"
  "/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF/Roboto-Regular.ttf fonts-roboto-unhinted"
  # DejaVu Sans Mono is the screens' last fallback face (render.SCREEN_FACES): generate needs it
  "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf fonts-dejavu-core"
  # fallback faces (render.FALLBACK_FACES): Arabic and Hebrew, emoji and other symbols
  "/usr/share/fonts/truetype/noto/NotoSansArabic-Regular.ttf fonts-noto-core"
  "/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf fonts-symbola"
)
if [ "$dev" = 1 ]; then
  need+=(
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf fonts-liberation"
    "/usr/bin/chromium chromium"
    # the TLS test makes its server's self-signed certificate with the openssl CLI
    "/usr/bin/openssl openssl"
  )
fi
packages=()
for entry in "${need[@]}"; do
  file=${entry% *}
  [ -e "$file" ] || packages+=("${entry##* }")
done

if [ ${#packages[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "setup: installing ${packages[*]} (Debian)" >&2
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
      "${packages[@]}" >/dev/null
  elif [ "$dev" = 1 ]; then
    echo "setup: error: no apt-get; install ${packages[*]} (or their equivalents) by hand" >&2
    exit 1
  else
    echo "setup: warning: install Roboto and a CJK font, or set DIBENCH_FONT_CJK" >&2
  fi
fi

pip=(python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore)
if [ "$dev" = 1 ]; then
  # the [classifier] extra's torch, first and CPU-only: the newest torch on the index brings
  # gigabytes of CUDA wheels that a test of a tiny model on a CPU never uses
  "${pip[@]}" "torch>=2.13,<2.14" || "${pip[@]}" "torch>=2.13"
fi
"${pip[@]}" -e ".[dev]"
echo "setup: ok ($(python3 -m dibench --version))" >&2
