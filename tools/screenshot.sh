#!/usr/bin/env bash
# Screenshot one page of the built book with headless Chromium, to look at a page without a browser.
#   tools/screenshot.sh book/_build/html/chapters/dyck.html /tmp/dyck.png [WIDTH,HEIGHT]
# Needs /usr/bin/chromium (Debian: apt-get install -y chromium). Offline, MathJax (loaded from a CDN)
# does not render: formulas show as TeX source.
set -euo pipefail
if [[ $# -lt 2 ]]; then
    echo "usage: $0 PAGE.html OUT.png [WIDTH,HEIGHT (default 1280,2000)]" >&2
    exit 2
fi
page=$(realpath "$1")
out=$(realpath -m "$2")
size=${3:-1280,2000}
[[ -f $page ]] || { echo "error: $page does not exist" >&2; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
/usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --window-size="$size" --screenshot="$out" "file://$page" 2>/dev/null
[[ -f $out ]] || { echo "error: chromium wrote no $out" >&2; exit 1; }
echo "$out"
