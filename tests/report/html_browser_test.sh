#!/usr/bin/env bash
# Renders `trainsim run --html` in headless Chromium: the page must load from file://
# without network or script errors, the screenshot must be a non-trivial PNG and the DOM
# Chromium built must hold the timeline views, the breakdown and memory charts, the
# legends and the micro-batch labels. Then the sweep and scale pages: a chart and a table
# row per point, the failed ones marked.
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

# render NAME: screenshot and DOM of $work/NAME.html, each checked (a PNG of some size, no load errors).
render() {
  local name=$1 url="file://$work/$1.html"
  timeout 180 "$browser" "${flags[@]}" --screenshot="$work/$name.png" "$url" >"$work/$name.screenshot.log" 2>&1 ||
    fail "chromium --screenshot of $name failed: $(tail -5 "$work/$name.screenshot.log")"
  [ -f "$work/$name.png" ] || fail "no screenshot of $name written"
  size=$(stat -c %s "$work/$name.png")
  [ "$size" -gt 20000 ] || fail "the screenshot of $name is only $size bytes (blank page?)"
  [ "$(head -c 8 "$work/$name.png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] ||
    fail "the screenshot of $name is not a PNG"
  timeout 180 "$browser" "${flags[@]}" --dump-dom "$url" >"$work/$name.dom.html" 2>"$work/$name.dom.log" ||
    fail "chromium --dump-dom of $name failed: $(tail -5 "$work/$name.dom.log")"
  # Load errors Chromium reports for a page: failed requests or script errors.
  if grep -E "net::ERR_|Uncaught|Not allowed to load" "$work/$name.screenshot.log" "$work/$name.dom.log"; then
    fail "$name did not load cleanly"
  fi
}

"$trainsim" run "$source_dir/scenarios/default.yaml" --html "$work/report.html" >"$work/summary.txt" ||
  fail "trainsim run --html failed"
url="file://$work/report.html"
render report
cp "$work/report.dom.html" "$work/dom.html"

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

# The sweep and scale pages: the same look, a chart, and a table row per point, the failed one too.
"$trainsim" sweep "$source_dir/scenarios/default.yaml" --grid plan.micro_batch_size=1,2,4 --grid plan.schedule=1f1b,zb-h1 \
  --html "$work/sweep.html" >"$work/sweep.txt" || fail "trainsim sweep --html failed"
"$trainsim" scale "$source_dir/scenarios/default.yaml" --devices 8,9,16,32 --html "$work/scale.html" >"$work/scale.txt" ||
  fail "trainsim scale --html failed"
for page in sweep scale; do
  render "$page"
  grep -q '<svg[^>]*class="chart"' "$work/$page.dom.html" || fail "the $page page has no chart"
  rows=$(grep -o '<tr' "$work/$page.dom.html" | wc -l)
  failed=$(grep -o '<tr class="fail"' "$work/$page.dom.html" | wc -l)
  # sweep: 6 combinations, micro batch 4 out of memory under both schedules and 2 under zb-h1 (its
  # W passes keep each Linear's input and output gradient); scale: 9 devices invalid.
  if [ "$page" = sweep ]; then expected_rows=7 expected_failed=3; else expected_rows=5 expected_failed=1; fi
  [ "$rows" -eq "$expected_rows" ] || fail "the $page page's table has $rows rows, expected $expected_rows (header included)"
  [ "$failed" -eq "$expected_failed" ] || fail "the $page page marks $failed failed rows, expected $expected_failed"
  echo "OK: $page page rendered: $(stat -c %s "$work/$page.png") bytes, $rows table rows, $failed failed"
done
