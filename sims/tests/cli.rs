//! The runner as a person uses it: help, list, and usage errors exit 2.

use std::process::Command;

fn lanesim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lanesim"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("runs")
}

#[test]
fn help_names_the_commands() {
    let out = lanesim(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("list"), "{text}");
}

#[test]
fn list_shows_the_scenarios_directory() {
    let out = lanesim(&["list"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("scenarios ("));
}

#[test]
fn a_missing_path_or_an_unknown_command_exits_2() {
    let out = lanesim(&["list", "no/such/dir"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/dir"));
    assert_eq!(lanesim(&["frobnicate"]).status.code(), Some(2));
}
