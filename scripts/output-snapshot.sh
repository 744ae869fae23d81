#!/bin/sh
# output-snapshot.sh QOSLAB OUT: runs every command that reads results over
# every results directory under testdata/results, with QOSLAB (a qoslab
# binary), and writes what each printed into OUT, one file per command, so
# that two trees' outputs can be compared with diff -r:
#
#   go build -o /tmp/old/qoslab ./cmd/qoslab   # on the old tree
#   scripts/output-snapshot.sh /tmp/old/qoslab /tmp/old/out
#   go build -o /tmp/new/qoslab ./cmd/qoslab   # on the new tree
#   scripts/output-snapshot.sh /tmp/new/qoslab /tmp/new/out
#   diff -r /tmp/old/out /tmp/new/out
#
# The commands run on a copy of testdata/results (report writes into the
# run's directory), from its parent, so the paths they print are the same
# in both trees. Run it from the repository root. POSIX sh.
set -eu
if [ $# -ne 2 ]; then
	echo "usage: $0 QOSLAB OUT" >&2
	exit 2
fi
bin=$1
out=$2
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
cp -R testdata/results "$work/results"
rm -rf "$out"
mkdir -p "$out"
cd "$work"
mkdir "$work/config"
export NO_COLOR=1 COLUMNS=100 XDG_CONFIG_HOME="$work/config"

# run NAME ARGS...: qoslab ARGS, its output in OUT/NAME.out and .err and
# its exit status in OUT/NAME.rc.
run() {
	name=$1
	shift
	rc=0
	"$bin" "$@" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
	echo "$rc" >"$out/$name.rc"
}

for d in results/* results/constructed/*; do
	[ -f "$d/run.json" ] || continue
	n=$(echo "$d" | tr / _)
	run "show_$n" results show "$d"
	run "show-json_$n" results show --json "$d"
	run "report_$n" report "$d"
	for f in report.md report.html; do
		[ -f "$d/$f" ] && cp "$d/$f" "$out/report_$n.$f"
	done
done
run list results list --results results
run list-constructed results list --results results/constructed
for f in table csv markdown json; do
	run "compare-abc_$f" compare --format "$f" results/compare-a results/compare-b results/compare-c
	run "compare-linux_$f" compare --format "$f" results/linux-fixture results/linux-contention
done
run report-compare report --compare results/compare-a results/compare-b results/compare-c --out cmp
for f in cmp/*; do
	[ -f "$f" ] && cp "$f" "$out/report-compare_$(basename "$f")"
done
echo "$(ls "$out" | wc -l | tr -d ' ') files in $out"
