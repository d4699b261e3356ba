#!/bin/sh
# html_check.sh - open memcheck's HTML report in headless Chromium, as a
# user's browser would, and check what it rendered: the page's own script
# ran to its end (it sets data-ready), no script error happened (the page
# counts them in data-errors; Chromium's console log names them too), and
# the charts are there (data-charts, the number of SVG charts, at least
# MIN).  A screenshot is kept at SHOT.
#
#   tests/html_check.sh PAGE SHOT MIN
#
# Without Chromium (Debian package chromium) it says so and passes: the
# page itself is tested without a browser in tests/test_pictures.c.  The
# flags keep a headless run from reaching the network or a profile of the
# user's: a fresh --user-data-dir, no background networking, no updates.
set -u
page=$1 shot=$2 min=$3
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
	echo "html-check: skipped: chromium is not installed (Debian package chromium)"
	exit 0
fi
[ -s "$page" ] || { echo "html-check: no page $page"; exit 1; }
case $page in /*) abs=$page ;; *) abs=$(pwd)/$page ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memcheck-html.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
set -- --headless --no-sandbox --disable-gpu --disable-background-networking \
	--disable-component-update --disable-sync --no-first-run \
	--user-data-dir="$tmp/profile" --enable-logging=stderr --v=0
timeout 120 "$browser" "$@" --dump-dom "file://$abs" > "$tmp/dom" 2> "$tmp/log"
rc=$?
fail() {
	echo "html-check: $page: $1"
	grep -i "console\|uncaught" "$tmp/log" | head -20
	exit 1
}
[ $rc -eq 0 ] || fail "chromium exited $rc"
grep -q 'data-ready="1"' "$tmp/dom" || fail "the page's script did not run to its end"
! grep -q 'data-errors=' "$tmp/dom" || fail "script errors: $(grep -o 'data-errors="[0-9]*"' "$tmp/dom")"
! grep -qi 'uncaught\|CONSOLE.*error' "$tmp/log" || fail "errors in the console"
charts=$(grep -o 'data-charts="[0-9]*"' "$tmp/dom" | tr -dc 0-9)
[ "${charts:-0}" -ge "$min" ] || fail "$charts charts, expected at least $min"
timeout 120 "$browser" "$@" --window-size=1100,1500 --screenshot="$shot" "file://$abs" \
	> /dev/null 2>&1 || fail "no screenshot"
[ -s "$shot" ] || fail "empty screenshot"
echo "html-check: $page renders in $("$browser" --version 2>/dev/null | head -1): $charts charts," \
	"no script errors; screenshot $shot"
