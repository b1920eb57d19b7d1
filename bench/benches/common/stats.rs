//! What the interleaved benches share to read their settings and sum up
//! their rounds. Not every bench uses every item.
#![allow(dead_code)]

/// The median of `values`, and their 10th and 90th percentiles.
pub(crate) fn quantiles(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.1), at(0.9))
}

/// The whole number in the environment variable `name`, or `default`.
pub(crate) fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |value| {
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a whole number, not {value:?}"))
    })
}
