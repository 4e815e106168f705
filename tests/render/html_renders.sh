#!/usr/bin/env bash
# The HTML reports render in headless Chromium: `hetsim run --report` and `hetsim compare
# --report` pages, each opened twice with the page's own script on:
#   --dump-dom   the page's script marks <body data-rendered="ok"> once it has drawn, and
#                Chromium's log (--enable-logging=stderr) shows no uncaught error or console error;
#   --screenshot a 1400x900 PNG that png_check decodes: not blank (ink and colours).
# The same checks must catch a page whose script throws and a blank page, or the test fails.
# Skips (exit 77, ctest's SKIP_RETURN_CODE) only where chromium is not installed: ./hetsim test
# installs the Debian package chromium and says so when it cannot.
#
# usage: html_renders.sh HETSIM PNG_CHECK SOURCE_DIR
set -u
hetsim="$1" png_check="$2" src="$3"
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chromium" ]; then
  echo "SKIPPED: chromium is not installed, so the HTML reports are not rendered (./hetsim test installs the Debian package chromium; here it could not)"
  exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --enable-logging=stderr --v=0)
n=0
# chrome URL DOM_OUT LOG_OUT [extra flags...]: one run with a new empty profile.
chrome() {
  local url="$1" out="$2" log="$3"
  shift 3
  n=$((n + 1))
  mkdir -p "$work/profile$n"
  timeout 120 "$chromium" "${flags[@]}" --user-data-dir="$work/profile$n" "$@" "$url" >"$out" 2>"$log"
}
console_errors() { grep -E 'Uncaught|:ERROR:CONSOLE|CONSOLE\([0-9]+\)\] "(Uncaught|Error|TypeError|ReferenceError|SyntaxError)' "$1"; }

cd "$src" || fail "no source folder $src"
"$hetsim" run scenarios/examples/chunked_pipeline.yaml --report "$work/run.html" >/dev/null || fail "hetsim run --report failed"
"$hetsim" compare scenarios/validation/01_pipeline_1stream_small.yaml \
  validation/measurements/h200/2026-11-30a/measured/01_pipeline_1stream_small.json.gz --report "$work/compare.html" >/dev/null
[ -s "$work/compare.html" ] || fail "hetsim compare --report wrote nothing"
printf '<!DOCTYPE html><html><body data-rendered="no"><script>throw new Error("boom")</script></body></html>\n' >"$work/broken.html"
printf '<!DOCTYPE html><html><body></body></html>\n' >"$work/blank.html"

# The checks catch what they are meant to catch.
chrome "file://$work/broken.html" "$work/broken.dom" "$work/broken.log" --dump-dom
grep -q 'data-rendered="ok"' "$work/broken.dom" && fail "a page whose script throws looked drawn"
console_errors "$work/broken.log" >/dev/null || fail "the uncaught error of a broken page was not in Chromium's log: $(head -c 2000 "$work/broken.log")"
chrome "file://$work/blank.html" "$work/blank.out" "$work/blank.log" --screenshot="$work/blank.png" --window-size=1400,900
[ -s "$work/blank.png" ] || fail "no screenshot of the blank page: $(tail -5 "$work/blank.log")"
"$png_check" "$work/blank.png" --min-ink 0.05 --min-colours 16 >/dev/null && fail "a blank page passed the screenshot check"

for page in run compare; do
  chrome "file://$work/$page.html" "$work/$page.dom" "$work/$page.log" --dump-dom
  grep -q 'data-rendered="ok"' "$work/$page.dom" ||
    fail "$page.html: the page's script did not mark it drawn: $(grep -o 'render-status">[^<]*' "$work/$page.dom") $(tail -5 "$work/$page.log")"
  if console_errors "$work/$page.log"; then fail "$page.html: console errors (above)"; fi
  chrome "file://$work/$page.html" "$work/$page.out" "$work/$page.shot.log" --screenshot="$work/$page.png" --window-size=1400,900
  [ -s "$work/$page.png" ] || fail "$page.html: no screenshot: $(tail -5 "$work/$page.shot.log")"
  if console_errors "$work/$page.shot.log"; then fail "$page.html: console errors while taking the screenshot (above)"; fi
  result="$("$png_check" "$work/$page.png" --min-ink 0.05 --min-colours 16)" || fail "$page.html: the screenshot looks blank: $result"
  echo "$page.html: $(grep -o 'render-status">[^<]*' "$work/$page.dom" | cut -d'>' -f2); screenshot $result"
done
echo "PASS: both reports render in $("$chromium" --version 2>/dev/null | head -1)"
