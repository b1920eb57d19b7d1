//! Tables and JSON as the command line and the demo print them.

use serde_json::Value;
use toolwright::registry::Tools;

/// The tools as a table: name, key, effect and inputs.
pub(crate) fn print_catalog(tools: &Tools) {
    let rows: Vec<Vec<String>> = tools
        .iter()
        .map(|t| {
            let inputs = t.input_schema()["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
                .unwrap_or_default();
            vec![
                t.name().to_owned(),
                t.key().to_owned(),
                t.effect().to_string(),
                inputs,
            ]
        })
        .collect();
    print_table(&["tool", "key", "effect", "inputs"], &rows);
}

/// Prints rows under a header, each column as wide as its widest cell.
pub(crate) fn print_table(header: &[&str], rows: &[Vec<String>]) {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("  {}", padded.join("  ").trim_end());
    };
    line(header.to_vec());
    line(
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect(),
    );
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// Prints JSON objects as a table, one column per key of the first.
pub(crate) fn print_json_table(rows: &[Value]) {
    let Some(first) = rows[0].as_object() else {
        return;
    };
    let header: Vec<&str> = first.keys().map(String::as_str).collect();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            header
                .iter()
                .map(|k| match &row[*k] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .collect();
    print_table(&header, &cells);
}

/// `value` with every object's keys in sorted order, so that what the
/// command line prints does not depend on whether a crate in the build
/// made `serde_json` keep insertion order (its `preserve_order` feature).
pub(crate) fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
