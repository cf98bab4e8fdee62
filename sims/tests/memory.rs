//! A sweep's memory does not grow with its seeds: `run` folds results into
//! per-scenario tallies as they finish (`run::sweep`), so a sweep of a
//! hundred million seeds stopped by `--for` peaks where a sweep of a
//! thousand does. Measured as the process's peak RSS (`VmHWM` in
//! `/proc/PID/status`), read while it runs.

#![cfg(target_os = "linux")]

use std::process::{Command, Stdio};
use std::time::Duration;

/// Runs `lanesim` with `args`; returns its peak RSS in KiB and its stdout.
fn peak_rss_kib(args: &[&str]) -> (u64, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lanesim"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("runs");
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    // VmHWM only grows; the last reading before exit is the peak, give or
    // take what the last few milliseconds added.
    while child.try_wait().expect("waits").is_none() {
        if let Ok(text) = std::fs::read_to_string(&status) {
            if let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kib);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("finishes");
    (peak, String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn a_hundred_million_seed_sweep_peaks_where_a_thousand_seed_one_does() {
    let (small, _) = peak_rss_kib(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seeds",
        "0..1000",
        "--jobs",
        "2",
    ]);
    let (large, text) = peak_rss_kib(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seeds",
        "0..100000000",
        "--for",
        "8s",
        "--jobs",
        "2",
    ]);
    let done: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("stopped by --for: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    // Enough runs that keeping each result would show: a kept result
    // (its event log) costs tens of KiB, so 500 of them pass 8 MB; a job
    // list built up front costs 1.6 GB before the first run. (A debug build
    // on a loaded 2-core machine does ~1,900 runs in 8 s, ~9,000 alone.)
    assert!(done >= 500, "only {done} runs in 8 s");
    assert!(small > 0 && large > 0, "VmHWM not read");
    assert!(large < 100 * 1024, "peak {large} KiB, over 100 MB");
    assert!(
        large < small + 8 * 1024,
        "peak {large} KiB after {done} runs vs {small} KiB for 1,000 seeds"
    );
}
