#!/usr/bin/env bash
# Renders `trainsim run --html` in headless Chromium: the page must load from file://
# without network or script errors, the screenshot must be a non-trivial PNG and the DOM
# Chromium built must hold the timeline views, the breakdown and memory charts, the
# legends and the micro-batch labels.
# Exits 77 (CTest SKIP_RETURN_CODE) with a SKIP line when no Chromium is installed.
# Usage: html_browser_test.sh TRAINSIM_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
trainsim=$1
source_dir=$2
work=$3

browser=""
for candidate in chromium chromium-browser google-chrome-stable google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then
    browser=$(command -v "$candidate")
    break
  fi
done
if [ -z "$browser" ]; then
  echo "SKIP: no Chromium found (install Debian's 'chromium' package to run the browser test)"
  exit 77
fi

rm -rf "$work"
mkdir -p "$work"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir="$profile"
       --window-size=1400,1000)

fail() {
  echo "FAIL: $*"
  exit 1
}

"$trainsim" run "$source_dir/scenarios/default.yaml" --html "$work/report.html" >"$work/summary.txt" ||
  fail "trainsim run --html failed"
url="file://$work/report.html"

timeout 180 "$browser" "${flags[@]}" --screenshot="$work/report.png" "$url" >"$work/screenshot.log" 2>&1 ||
  fail "chromium --screenshot failed: $(tail -5 "$work/screenshot.log")"
[ -f "$work/report.png" ] || fail "no screenshot written"
size=$(stat -c %s "$work/report.png")
[ "$size" -gt 20000 ] || fail "screenshot is only $size bytes (blank page?)"
[ "$(head -c 8 "$work/report.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "screenshot is not a PNG"

timeout 180 "$browser" "${flags[@]}" --dump-dom "$url" >"$work/dom.html" 2>"$work/dom.log" ||
  fail "chromium --dump-dom failed: $(tail -5 "$work/dom.log")"
# Load errors Chromium reports for a page: failed requests or script errors.
if grep -E "net::ERR_|Uncaught|Not allowed to load" "$work/screenshot.log" "$work/dom.log"; then
  fail "the page did not load cleanly"
fi

expect() {
  grep -q -- "$1" "$work/dom.html" || fail "the rendered DOM lacks: $1"
}
expect '<svg[^>]*class="timeline"'
expect '<svg[^>]*class="breakdown"'
expect '<svg[^>]*class="memory"'
expect 'Pipeline timeline'
expect 'bubble (rank idle)'
expect 'forward'
expect 'backward'
expect 'HBM'
expect 'start of the step (ms)'
expect 'class="mb"'
svgs=$(grep -o '<svg' "$work/dom.html" | wc -l)
[ "$svgs" -eq 5 ] || fail "expected 5 charts (3 timeline views, breakdown, memory), the DOM has $svgs <svg> elements"
echo "OK: $url rendered by $("$browser" --version 2>/dev/null | head -1): screenshot $size bytes, $svgs charts"
