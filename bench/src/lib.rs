//! Benchmarks live in `benches/`; see `BENCHMARKS.md` at the workspace root.
