#!/usr/bin/env bash
# Compile cost of N tools, written three ways, built in the same run:
#   toolwright  N `#[toolwright::tool]` async fns
#   rmcp        one struct with N rmcp `#[tool]` methods under `#[tool_router]`
#   baseline    N argument structs with serde + schemars derives and a
#               hand-written `match` dispatching on the tool name (no tool macro)
# For each: the crate's own clean debug build (dependencies already built, so
# only the tools are measured), the rebuild after a one-body edit of the
# first tool, then after one of the last tool. The two differ because rustc
# type-checks macro-generated code (every derive) again when an edit above
# it shifts its position in the file; in the baseline every body is in the
# `match` at the end, so its edits shift nothing either way.
#
#   bench/compile-time.sh            # 100 and 500 tools
#   bench/compile-time.sh 100        # only 100
#   ROUNDS=5 bench/compile-time.sh   # rounds per size (default 3)
#   COUNT=instructions bench/compile-time.sh 100
#       rustc's instructions for the tools' crate instead of seconds
#       (callgrind around that crate's rustc only: macro expansion
#       included, the link not; needs valgrind). They do not drift the way
#       time does, so one round is the default; 100 tools take about 20
#       minutes.
#   VARIANTS="baseline toolwright" bench/compile-time.sh 100   # a subset
#   HOOKED=1 bench/compile-time.sh 100
#       toolwright's tools behind an `authorize` hook instead of
#       `authorize = public` (the others have no authorization to compare);
#       an `async fn`, or with HOOKED=fn a plain `fn` returning `Verdict`
#   INJECTED=1 bench/compile-time.sh 100
#       toolwright's tools also take an injected parameter (`Inject<Db>`,
#       an APP value): what a scope costs a build (the others inject
#       nothing); combines with HOOKED=1
#
# Each round measures the three variants in rotating order; the report is
# the median of the rounds (seconds, and ratios to the same round's
# baseline), since these shared machines drift between runs.
# Prints seconds and the ratios to the baseline. Generated crates live under
# $TMPDIR/toolwright-compile-time/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# Outside the workspace, so that its .cargo/config.toml (our build
# profiles) does not apply: the crates build as a user's would.
work="${TMPDIR:-/tmp}/toolwright-compile-time"
sizes=("${@:-100 500}")
count=${COUNT:-seconds}
case $count in
    seconds) rounds=${ROUNDS:-3} unit=s what="seconds" ;;
    instructions)
        command -v valgrind > /dev/null || {
            echo "valgrind is not installed (apt-get install valgrind)" >&2
            exit 1
        }
        rounds=${ROUNDS:-1} unit=G what="billions of rustc instructions" ;;
    *) echo "COUNT is seconds or instructions" >&2; exit 1 ;;
esac
# shellcheck disable=SC2206
sizes=(${sizes[*]})
mkdir -p "$work"
# COUNT=instructions's RUSTC_WRAPPER: callgrind around the rustc of crate
# $COUNT_CRATE only; its count goes to the file $COUNT_OUT.
cat > "$work/count-rustc.sh" <<'WRAPPER'
#!/usr/bin/env bash
if [[ " $* " == *" --crate-name $COUNT_CRATE "* ]]; then
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --log-file="$COUNT_OUT.log" "$@"
    rc=$?
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$COUNT_OUT.log" > "$COUNT_OUT"
    exit $rc
fi
exec "$@"
WRAPPER
chmod +x "$work/count-rustc.sh"

manifest() { # name, extra dependencies
    cat <<EOF
[package]
name = "$1"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
serde = { version = "1", features = ["derive"] }
serde_json = "1"
schemars = "1"
tokio = { version = "1", features = ["rt", "macros"] }
$2
EOF
}

gen_toolwright() { # n
    echo "use toolwright::tool;"
    local authorize=public
    if [[ ${HOOKED:-} == fn ]]; then
        authorize=anyone
        echo "fn anyone<A>(_: &(), _: &toolwright::Invocation<'_, A>) -> toolwright::Verdict { toolwright::Verdict::Allow }"
    elif [[ -n ${HOOKED:-} ]]; then
        authorize=anyone
        echo "async fn anyone<A>(_: &(), _: &toolwright::Invocation<'_, A>) -> bool { true }"
    fi
    local inject=
    if [[ -n ${INJECTED:-} ]]; then
        inject=", _db: toolwright::Inject<Db>"
        echo "pub struct Db;"
    fi
    for i in $(seq 1 "$1"); do
        cat <<EOF
/// Tool number $i: adds $i.
#[tool(key = "gen.t$i", effect = read, authorize = $authorize)]
pub async fn t$i(a: i64, b: Option<String>$inject) -> i64 {
    a + b.map_or(0, |s| s.len() as i64) + $i
}
EOF
    done
    echo 'fn main() { println!("{}", toolwright::Catalog::discover().unwrap().len()); }'
}

gen_rmcp() { # n
    cat <<'EOF'
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
EOF
    for i in $(seq 1 "$1"); do
        cat <<EOF
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct A$i { a: i64, b: Option<String> }
EOF
    done
    echo '#[derive(Clone)] pub struct S { tool_router: ToolRouter<Self> }'
    echo '#[tool_router] impl S {'
    echo '    pub fn new() -> Self { S { tool_router: Self::tool_router() } }'
    for i in $(seq 1 "$1"); do
        cat <<EOF
    /// Tool number $i: adds $i.
    #[tool(description = "Tool number $i: adds $i.")]
    async fn t$i(&self, Parameters(A$i { a, b }): Parameters<A$i>) -> String {
        (a + b.map_or(0, |s| s.len() as i64) + $i).to_string()
    }
EOF
    done
    echo '}'
    echo '#[tool_handler(router = self.tool_router)] impl ServerHandler for S {}'
    echo 'fn main() { let s = S::new(); println!("{}", s.tool_router.list_all().len()); }'
}

gen_baseline() { # n
    for i in $(seq 1 "$1"); do
        cat <<EOF
/// Tool number $i.
#[derive(serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct A$i { a: i64, b: Option<String> }
EOF
    done
    echo 'pub fn schemas() -> Vec<serde_json::Value> { vec!['
    for i in $(seq 1 "$1"); do echo "    schemars::schema_for!(A$i).to_value(),"; done
    echo '] }'
    echo 'pub async fn call(name: &str, args: serde_json::Value) -> Result<serde_json::Value, serde_json::Error> {'
    echo '    match name {'
    for i in $(seq 1 "$1"); do
        echo "        \"t$i\" => { let A$i { a, b } = serde_json::from_value(args)?; serde_json::to_value(a + b.map_or(0, |s| s.len() as i64) + $i) }"
    done
    echo '        _ => Ok(serde_json::Value::Null),'
    echo '    }'
    echo '}'
    echo '#[tokio::main(flavor = "current_thread")] async fn main() { println!("{}", schemas().len()); let _ = call("t1", serde_json::json!({"a": 1})).await; }'
}

seconds() { # command...
    local start end
    start=$(date +%s.%N)
    "$@" > /dev/null 2>&1
    end=$(date +%s.%N)
    echo "$end - $start" | bc
}

# What one build of the tools' crate costs: seconds, or billions of
# rustc instructions.
cost() { # crate name
    case $count in
        seconds) seconds cargo build ;;
        instructions)
            RUSTC_WRAPPER="$work/count-rustc.sh" COUNT_CRATE="$1" COUNT_OUT="$work/count" \
                cargo build -q > /dev/null 2>&1
            echo "$(cat "$work/count") / 1000000000" | bc -l ;;
    esac
}

measure() { # variant, n  -> prints "clean first last"
    local variant=$1 n=$2 dir="$work/$1-$2"
    mkdir -p "$dir/src"
    case $variant in
        toolwright) manifest "$variant-$n" "toolwright = { path = \"$root/runtime\" }" > "$dir/Cargo.toml" ;;
        rmcp) manifest "$variant-$n" 'rmcp = { version = "3.11", default-features = false, features = ["server", "macros"] }' > "$dir/Cargo.toml" ;;
        baseline) manifest "$variant-$n" "" > "$dir/Cargo.toml" ;;
    esac
    "gen_$variant" "$n" > "$dir/src/main.rs"
    cp "$root/Cargo.lock" "$dir/Cargo.lock"
    export CARGO_TARGET_DIR="$work/target-$variant"
    # Dependencies first, so the clean build measures only the tools.
    (cd "$dir" && cargo build -q 2>/dev/null)
    (cd "$dir" && cargo clean -q -p "$variant-$n")
    local clean first last crate="${variant}_$n"
    clean=$(cd "$dir" && cost "$crate")
    # A one-body edit of the first tool: tool 1 adds another constant.
    edit "$dir" 1
    first=$(cd "$dir" && cost "$crate")
    # The same edit of the last tool, which no other tool follows.
    edit "$dir" "$n"
    last=$(cd "$dir" && cost "$crate")
    unset CARGO_TARGET_DIR
    echo "$clean $first $last"
}

edit() { # dir, tool number: tool i's body adds another constant
    sed -i "0,/+ $2\$/s//+ $2 + 0/" "$1/src/main.rs"
    sed -i "0,/+ $2)/s//+ $2 + 0)/" "$1/src/main.rs"
    sed -i "0,/+ $2\.to_string/s//+ $2 + 0.to_string/" "$1/src/main.rs"
}

median() { # numbers... -> the middle one (the lower middle of an even count)
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# shellcheck disable=SC2206
variants=(${VARIANTS:-baseline toolwright rmcp})
[[ ${variants[0]} == baseline ]] || { echo "VARIANTS must start with baseline" >&2; exit 1; }
printf '%-6s %-11s %8s %8s %8s %8s %8s %8s\n' tools variant "clean $unit" "first $unit" \
    "last $unit" "clean x" "first x" "last x"
for n in "${sizes[@]}"; do
    declare -A clean=() first=() last=() clean_ratio=() first_ratio=() last_ratio=()
    for round in $(seq 1 "$rounds"); do
        # Rotate the order each round, so that no variant always runs
        # first (or right after the slowest one).
        declare -A c=() f=() l=()
        for k in "${!variants[@]}"; do
            variant=${variants[$(((k + round) % ${#variants[@]}))]}
            read -r "c[$variant]" "f[$variant]" "l[$variant]" < <(measure "$variant" "$n")
        done
        for variant in "${variants[@]}"; do
            clean[$variant]+="${c[$variant]} "
            first[$variant]+="${f[$variant]} "
            last[$variant]+="${l[$variant]} "
            clean_ratio[$variant]+="$(echo "${c[$variant]} / ${c[baseline]}" | bc -l) "
            first_ratio[$variant]+="$(echo "${f[$variant]} / ${f[baseline]}" | bc -l) "
            last_ratio[$variant]+="$(echo "${l[$variant]} / ${l[baseline]}" | bc -l) "
        done
    done
    for variant in "${variants[@]}"; do
        # shellcheck disable=SC2086
        printf '%-6s %-11s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n' "$n" "$variant" \
            "$(median ${clean[$variant]})" "$(median ${first[$variant]})" \
            "$(median ${last[$variant]})" "$(median ${clean_ratio[$variant]})" \
            "$(median ${first_ratio[$variant]})" "$(median ${last_ratio[$variant]})"
    done
done
echo "($what; medians of $rounds rounds;"
echo " ratios (x) are per round, to that round's baseline;"
echo " first / last: rebuild after editing the body of the first / last tool)"
