#!/usr/bin/env bash
# The interleaved time ratios of the `dispatch` or `invoke` bench, as the
# median over several processes, with their range: the figures BENCHMARKS.md
# records.
#
#   bench/across.sh dispatch        # toolwright-bench's dispatch, 12 processes
#   bench/across.sh invoke 20       # toolwright-invoke-bench's invoke, 20 processes
#   ROUNDS=41 bench/across.sh invoke
#   LAYOUTS=8 bench/across.sh dispatch 24   # 8 code layouts, 3 processes each
#
# Within one process, interleaving cancels the machine's drift, but not the
# process's own bias: where its heap, stack and code land decides which
# loads collide with earlier stores, and the same binary's median ratio can
# differ by a fifth from one process to the next. Each process runs ROUNDS
# rounds (default 21) and prints its medians as `ratio NAME VALUE` lines.
#
# A binary's code layout biases all its processes alike: which hot lines
# share an instruction-cache set is fixed at link time. With LAYOUTS=K the
# bench is linked K times with its functions in a different random order
# (lld's `--shuffle-sections`, seeds 1 to K) and the processes take turns
# among the K binaries, so the figure is a median over layouts as well.
set -euo pipefail
cd "$(dirname "$0")/.."
bench=${1:?"which bench: dispatch or invoke"}
processes=${2:-12}
case $bench in
    dispatch) package=toolwright-bench ;;
    invoke) package=toolwright-invoke-bench ;;
    *) echo "unknown bench $bench: dispatch or invoke" >&2; exit 2 ;;
esac
layouts=${LAYOUTS:-1}
for count in "$processes" "$layouts"; do
    case $count in
        '' | *[!0-9]* | 0) echo "processes and LAYOUTS must be whole numbers from 1, not '$count'" >&2; exit 2 ;;
    esac
done
built() { # extra rustc arguments... -> the path of the bench binary built with them, if it built
    cargo rustc -q --profile bench -p "$package" --bench "$bench" --message-format=json -- "$@" \
        2> /dev/null | grep -o '"executable":"[^"]*"' | tail -1 | cut -d'"' -f4 || true
}
bins=()
if [ "$layouts" = 1 ]; then
    bins+=("$(built)")
else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    for seed in $(seq "$layouts"); do
        bin=$(built -C "link-arg=-Wl,--shuffle-sections=*=$seed")
        [ -x "$bin" ] && cp "$bin" "$dir/$seed" && bins+=("$dir/$seed")
    done
fi
[ "${#bins[@]}" = "$layouts" ] && [ -x "${bins[0]}" ] || { echo "could not build the $bench bench" >&2; exit 1; }
export ROUNDS=${ROUNDS:-21}
echo "$bench: $processes processes of $ROUNDS interleaved rounds each, over $layouts code layout(s)"
printf '%-28s %8s %18s\n' ratio median "range (processes)"
for i in $(seq 0 $((processes - 1))); do
    bin=${bins[$((i % layouts))]}
    # `zzz` matches no criterion benchmark: only the interleaved rounds run.
    "$bin" --bench zzz 2> /dev/null | grep '^ratio ' || { echo "a run of $bin failed" >&2; exit 1; }
done | sort -k2,2 -k3,3g | awk '
    { values[$2] = values[$2] " " $3 }
    END {
        for (name in values) {
            n = split(substr(values[name], 2), v, " ")
            median = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
            printf "%-28s %7.2fx %9.2f-%.2f (%d)\n", name, median, v[1], v[n], n
        }
    }' | sort
