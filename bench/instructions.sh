#!/usr/bin/env bash
# Instructions per call of the floor, `Executor::invoke` (of a tool whose
# body has no `.await`, and of one with an `.await`: `awaiting`), the typed
# `Executor::call`, `invoke` of the same tool behind an `authorize` hook,
# `invoke` of a tool that injects one REQUEST value, `invoke` with an
# execution log and one more observer (`observed`: the calling thread's
# share; the observers' threads are not counted), and of `add` over
# `f64`s and over `f32`s (whose range bound costs a walk over the arguments;
# the variants of `bench/invoke/benches/invoke.rs`), counted
# by callgrind. Unlike time, an instruction count does not drift on a
# shared machine; it does not see cache misses or the allocator's speed,
# so read it next to the interleaved time ratios in BENCHMARKS.md.
#
#   bench/instructions.sh          # needs valgrind (apt-get install valgrind)
#   CALLS=100000 bench/instructions.sh
#   bench/instructions.sh dispatch # the MCP call against rmcp's router
#
# With `dispatch`, the variants are those of `bench/benches/dispatch.rs`:
# the floor, the bare `invoke`, toolwright's MCP `call_tool`, and rmcp's
# `ToolRouter::call` for `add` (text) and `add_json` (structured + text).
#
# Each variant runs twice, with 0 and with CALLS calls; the difference
# divided by CALLS is its cost per call, set-up excluded.
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${CALLS:-20000}
command -v valgrind > /dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
case ${1:-invoke} in
    invoke)
        build=(-p toolwright-invoke-bench --bench invoke) env=TOOLWRIGHT_CALLS
        variants=(floor invoke awaiting call hooked fn_hook injected observed f64 f32) ;;
    dispatch)
        build=(-p toolwright-bench --bench dispatch) env=DISPATCH_CALLS
        variants=(floor invoke toolwright_mcp rmcp_text rmcp_json) ;;
    *) echo "unknown bench $1: invoke (the default) or dispatch" >&2; exit 2 ;;
esac
bin=$(cargo bench -q "${build[@]}" --no-run --message-format=json 2> /dev/null \
    | grep -o '"executable":"[^"]*"' | tail -1 | cut -d'"' -f4)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
count() { # variant, calls -> instructions of the calling thread (observers' threads apart)
    env "$env=$1:$2" valgrind --tool=callgrind --separate-threads=yes \
        --callgrind-out-file="$out/$1.$2" "$bin" > /dev/null 2>&1
    sed -n 's/^summary: \([0-9]*\).*/\1/p' "$out/$1.$2-01"
}
floor=
declare -A per_call
printf '%-14s %14s %10s\n' variant "instr./call" "to floor"
for variant in "${variants[@]}"; do
    base=$(count "$variant" 0)
    total=$(count "$variant" "$calls")
    per=$(((total - base) / calls))
    floor=${floor:-$per}
    per_call[$variant]=$per
    printf '%-14s %14d %9.2fx\n' "$variant" "$per" "$(echo "$per / $floor" | bc -l)"
done
if [ "${1:-invoke}" = dispatch ]; then
    printf 'toolwright_mcp / rmcp_json: %.2fx\n' "$(echo "${per_call[toolwright_mcp]} / ${per_call[rmcp_json]}" | bc -l)"
fi
