#!/usr/bin/env bash
# Set up DIBench on a fresh Debian-like machine: the fonts the screens need (Roboto for Latin,
# WenQuanYi Micro Hei for Chinese, DejaVu Sans Mono as the last fallback, Noto Sans Arabic and
# Hebrew and Symbola for what a real app's title holds beyond those) and the package with what
# the main job needs (the offline OCR agent: extra [ocr]); nothing here pulls torch. With --dev,
# also the package with every extra and the test tools, torch as its CPU build first, and what
# the test suite opens: the faces its real-style scenes are drawn in (Liberation, DejaVu; see
# tests/fonts.py), Debian's headless Chromium (the HTML report is opened in it) and openssl.
# Idempotent: a package whose files are already there is not installed again.
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
  # The [classifier] extra's torch, first and as its CPU build: torch from the package index is
  # the CUDA build, gigabytes of wheels that a test of a tiny model on a CPU never uses. A CPU
  # wheel in one of pip's local wheel folders (find-links) is taken without asking any index;
  # else PyTorch's own CPU index is asked. Its dependencies come with [dev] below.
  if ! "${pip[@]}" --no-index --no-deps "torch>=2.13" 2>/dev/null; then
    "${pip[@]}" --no-deps "torch>=2.13" --index-url https://download.pytorch.org/whl/cpu
  fi
  "${pip[@]}" -e ".[dev]"
else
  # the main job: the offline OCR agent and nothing that pulls torch (see the README for extras)
  "${pip[@]}" -e ".[ocr]"
fi
echo "setup: ok ($(python3 -m dibench --version))" >&2
