//! What the quickstart's command line promises before it serves anything.

use std::process::{Command, Output};

fn quickstart(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quickstart"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn help_documents_the_anonymous_endpoint() {
    let output = quickstart(&["--help"]);
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    assert!(help.contains("--http ADDR --anonymous"), "{help}");
    assert!(help.contains("non-admin `guest`"), "{help}");
}

#[test]
fn an_anonymous_endpoint_is_refused_on_an_address_other_machines_can_reach() {
    let output = quickstart(&["--http", "0.0.0.0:8000", "--anonymous"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr.trim(),
        "--anonymous serves a loopback address only, such as 127.0.0.1:8000"
    );
}
