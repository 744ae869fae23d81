#!/bin/sh
# Runs the fleet playbook against N inventory hosts that are all this
# machine (local connections with a directory each, as cmd/qoslab's fleet
# tests make them), to see what a fleet of N gives, compare.md and the
# report, without N machines. The hosts share this machine's CPUs: their
# numbers say what a shared machine measured, not what N machines would.
#
# From the repository root, after make setup build dist:
#
#   scripts/fleet-local.sh [-n N] [-f FORKS] [-s SPEC] [-i IMAGE_DIR] [-r RUN_ARGS] DIR
#
#   -n N          hosts, named host01..hostN (default 12)
#   -f FORKS      hosts run at once (ansible-playbook -f; default N)
#   -s SPEC       the spec every host runs (default testdata/fleet/host-only.yaml)
#   -i IMAGE_DIR  a built guest image to copy to every host (a spec with a
#                 VM otherwise builds one on each)
#   -r RUN_ARGS   more qoslab run flags, space-separated ("--accel tcg")
#
# DIR gets the inventory, the hosts' directories and fleet-results/; the
# playbook's exit status is the script's.
set -eu

n=12
forks=
spec=testdata/fleet/host-only.yaml
image=
runargs=
usage() {
	echo "usage: scripts/fleet-local.sh [-n N] [-f FORKS] [-s SPEC] [-i IMAGE_DIR] [-r RUN_ARGS] DIR" >&2
	exit 2
}
while getopts n:f:s:i:r: opt; do
	case $opt in
	n) n=$OPTARG ;;
	f) forks=$OPTARG ;;
	s) spec=$OPTARG ;;
	i) image=$OPTARG ;;
	r) runargs=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
case $n in '' | *[!0-9]*) echo "fleet-local: -n $n: want a count of hosts" >&2; exit 2 ;; esac
forks=${forks:-$n}

repo=$(pwd)
playbook=$repo/.venv-ansible/bin/ansible-playbook
for f in "$playbook" "$repo/bin/qoslab" "$repo/bin/dist"; do
	[ -e "$f" ] || { echo "fleet-local: $f is missing: run make setup build dist first" >&2; exit 1; }
done
[ -f "$spec" ] || { echo "fleet-local: spec $spec: no such file" >&2; exit 1; }

mkdir -p "$1"
dir=$(cd "$1" && pwd)
python=auto_silent
[ -x /usr/bin/python3 ] && python=/usr/bin/python3
inventory=$dir/inventory.yml
{
	echo "all:"
	echo "  vars:"
	echo "    qoslab_controller: $repo/bin/qoslab"
	echo "    qoslab_fleet_results: $dir/fleet-results"
	echo "qoslab:"
	echo "  hosts:"
	i=1
	while [ "$i" -le "$n" ]; do
		h=$(printf 'host%02d' "$i")
		echo "    $h: {ansible_connection: local, ansible_python_interpreter: $python, qoslab_remote_dir: $dir/hosts/$h}"
		i=$((i + 1))
	done
	echo "  vars:"
	echo "    qoslab_dist: $repo/bin/dist"
	echo "    qoslab_spec: $(cd "$(dirname "$spec")" && pwd)/$(basename "$spec")"
	echo "    qoslab_fleet_id: local-$n"
	[ -z "$image" ] || echo "    qoslab_image_dir: $(cd "$image" && pwd)"
	if [ -n "$runargs" ]; then
		printf '    qoslab_run_args: ['
		sep=
		for a in $runargs; do
			printf "%s'%s'" "$sep" "$a"
			sep=', '
		done
		echo ']'
	fi
} >"$inventory"

echo "fleet-local: $n hosts, $forks at once, spec $spec; inventory $inventory"
cd "$dir"
ANSIBLE_LOCAL_TEMP=$dir/ansible-local ANSIBLE_NOCOLOR=1 "$playbook" -i "$inventory" -f "$forks" "$repo/deploy/ansible/qoslab-fleet.yml"
