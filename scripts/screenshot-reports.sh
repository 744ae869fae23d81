#!/bin/sh
# screenshot-reports.sh OUT [DIR...]: draws the report of each results
# directory DIR (by default a real run and three constructed ones: one
# undecided with a next step, one capped, one interfered with) and the
# compare report of testdata/results/compare-{a,b,c}, then takes a
# screenshot of the first screen of each in headless Chromium at 1280x800
# and at 800x800, and checks that neither width scrolls sideways. Into OUT
# (made if missing) go each report.html as NAME.html and its screenshots as
# NAME-1280.png and NAME-800.png. It exits 1 when a page is wider than its
# window, naming it.
#
#   scripts/screenshot-reports.sh /tmp/shots
#   CHROMIUM=/path/to/chrome QOSLAB=bin/qoslab scripts/screenshot-reports.sh /tmp/shots testdata/results/linux-fixture
#
# CHROMIUM is the browser (else the first of chromium, chromium-browser,
# google-chrome, google-chrome-stable on PATH); QOSLAB a qoslab binary
# (else one is built with go). The width is read by loading a copy of each
# page with a line of script that writes document.documentElement's
# scrollWidth and clientWidth into the DOM, dumped with --dump-dom (the
# reports themselves carry no script). Run it from the repository root.
# POSIX sh.
set -eu
if [ $# -lt 1 ]; then
	echo "usage: $0 OUT [DIR...]" >&2
	exit 2
fi
out=$1
shift
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
if [ $# -eq 0 ]; then
	set -- testdata/results/compare-a testdata/results/constructed/sequential \
		testdata/results/constructed/capped testdata/results/constructed/interference
fi

browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
	for b in chromium chromium-browser google-chrome google-chrome-stable; do
		if command -v "$b" >/dev/null 2>&1; then
			browser=$b
			break
		fi
	done
fi
if [ -z "$browser" ]; then
	echo "$0: no Chromium: set CHROMIUM to its binary, or install chromium (apt-get install chromium)" >&2
	exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
bin=${QOSLAB:-}
if [ -z "$bin" ]; then
	go build -o "$work/qoslab" ./cmd/qoslab
	bin=$work/qoslab
fi
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
mkdir -p "$out" "$work/results"

# Chromium refuses to run as root without --no-sandbox.
sandbox=
if [ "$(id -u)" -eq 0 ]; then
	sandbox=--no-sandbox
fi

# chrome ARGS...: headless Chromium, quiet, on a profile of its own.
chrome() {
	# shellcheck disable=SC2086 # $sandbox is one flag or none
	"$browser" --headless --disable-gpu $sandbox --hide-scrollbars --user-data-dir="$work/profile" "$@" 2>/dev/null
}

# shoot NAME: the screenshots of OUT/NAME.html, and its width check.
failed=0
shoot() {
	name=$1
	page=$out/$name.html
	for w in 1280 800; do
		chrome --window-size="$w,800" --screenshot="$out/$name-$w.png" "file://$page" >/dev/null
		sed 's|</body>|<script>document.documentElement.setAttribute("data-width", document.documentElement.scrollWidth + " " + document.documentElement.clientWidth)</script></body>|' \
			"$page" >"$work/probe.html"
		widths=$(chrome --window-size="$w,800" --dump-dom "file://$work/probe.html" | sed -n 's/.*data-width="\([0-9]*\) \([0-9]*\)".*/\1 \2/p' | head -n 1)
		if [ -z "$widths" ]; then
			echo "$name at $w px: could not read the page's width" >&2
			failed=1
			continue
		fi
		page_w=${widths% *}
		window_w=${widths#* }
		if [ "$page_w" -gt "$window_w" ]; then
			echo "$name at $w px: scrolls sideways: the page is $page_w px wide in a window $window_w px wide" >&2
			failed=1
		else
			echo "$name at $w px: $out/$name-$w.png (page $page_w px wide, window $window_w px)"
		fi
	done
}

for d in "$@"; do
	name=$(basename "$d")
	rm -rf "${work:?}/results/$name"
	cp -R "$d" "$work/results/$name"
	"$bin" report "$work/results/$name" >/dev/null
	cp "$work/results/$name/report.html" "$out/$name.html"
	shoot "$name"
done
"$bin" report --compare testdata/results/compare-a testdata/results/compare-b testdata/results/compare-c --out "$work/compare" >/dev/null
cp "$work/compare/report.html" "$out/compare.html"
shoot compare
exit "$failed"
