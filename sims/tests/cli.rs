//! The runner as a person uses it: help, list, run, replay, audit, exit
//! codes, and the one repro line a failure prints, replayed.

use std::process::{Command, Output};

fn lanesim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lanesim"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .env_remove("RUST_LOG")
        .output()
        .expect("runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_names_the_commands() {
    let out = lanesim(&["--help"]);
    assert!(out.status.success());
    for command in ["list", "run", "replay", "audit"] {
        assert!(
            stdout(&out).contains(command),
            "{command} missing from --help"
        );
    }
}

/// `--help` lists every exit code the one `Exit` type has, by number.
#[test]
fn help_lists_every_exit_code() {
    use lanesim_sims::cli::Exit;
    let out = lanesim(&["--help"]);
    let text = stdout(&out);
    let listed: Vec<u8> = text
        .split("Exit codes:")
        .nth(1)
        .expect("an exit-code section")
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    let codes: Vec<u8> = Exit::ALL.iter().map(|e| *e as u8).collect();
    assert_eq!(listed, codes, "{text}");
}

#[test]
fn list_shows_every_scenario_with_its_contracts() {
    let out = lanesim(&["list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("lanes_reap_race") && text.contains("[L1, L2, L3, L4, L5]"),
        "{text}"
    );
}

#[test]
fn a_passing_run_prints_its_seed_and_parameters_first_and_exits_0() {
    let out = lanesim(&["run", "scenarios/lanes_order.toml", "--seed", "3"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let seed_line = text.find("seed 3: keys=").expect("parameters printed");
    let summary = text
        .find("summary: 1 runs: 1 pass")
        .expect("summary printed");
    assert!(seed_line < summary);
}

/// `--format json`: stdout is exactly one JSON document (the announcements
/// go to stderr), and it says how the sweep ended.
#[test]
fn json_stdout_is_exactly_one_document() {
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seeds",
        "0..2",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let value: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("the whole of stdout is one JSON document");
    assert_eq!(value["summary"]["runs"], 2);
    assert_eq!(value["summary"]["exit"], 0);
    assert_eq!(value["scenarios"][0]["verdicts"]["pass"], 2);
}

/// A scenario every seed of which runs out of its virtual-time budget (a
/// failure without a planted bug): 1 ms handlers, 5 ms to do 20+ items.
fn stuck_scenario() -> Scratch {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lanes_order.toml"),
    )
    .unwrap()
    .replacen(
        "world = \"lanes\"",
        "world = \"lanes\"\nbudget = \"5ms\"",
        1,
    )
    .replacen("handler = [\"0ms\", \"1ms\"]", "handler = \"1ms\"", 1);
    scratch_scenario("stuck", &text)
}

/// `--format jsonl`: one JSON object per run on stdout, as runs finish, in
/// seed order, each failure's repro as an argv list and a line and its
/// parameters as an object; then one summary record (`{"summary": ...}`,
/// with the exit code); the human summary on stderr.
#[test]
fn jsonl_streams_one_object_per_run_then_a_summary_record() {
    let stuck = stuck_scenario();
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        stuck.to_str().unwrap(),
        "--seeds",
        "0..3",
        "--format",
        "jsonl",
        "--jobs",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is one JSON object"))
        .collect();
    assert_eq!(lines.len(), 7);
    let summary = &lines[6]["summary"];
    assert_eq!(summary["runs"], 6);
    assert_eq!(summary["liveness"], 3);
    assert_eq!(summary["exit"], 3);
    assert!(summary["wall_s"].as_f64().is_some(), "{summary}");
    let lines = &lines[..6];
    let seen: Vec<(String, u64, String)> = lines
        .iter()
        .map(|l| {
            (
                l["scenario"].as_str().unwrap().to_string(),
                l["seed"].as_u64().unwrap(),
                l["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // Files run in path order: the scratch directory sorts first.
    assert_eq!(seen[0], ("stuck".into(), 0, "liveness".into()));
    assert_eq!(seen[2], ("stuck".into(), 2, "liveness".into()));
    assert_eq!(seen[5], ("lanes_order".into(), 2, "pass".into()));
    let repro = &lines[1]["repro"];
    assert!(repro["display"].as_str().unwrap().ends_with("--seed 1"));
    assert_eq!(repro["argv"][1], "replay");
    assert_eq!(repro["argv"].as_array().unwrap().last().unwrap(), "1");
    assert_eq!(lines[1]["params"]["world"], "lanes");
    assert!(lines[1]["params"]["lanes"].is_object(), "{}", lines[1]);
    assert!(lines[3]["repro"].is_null());
    assert!(stderr(&out).contains("summary: 6 runs: 3 pass, 0 violated, 3 liveness"));
    // Redirected, so no progress bar and no colour: no escape codes, no
    // carriage returns.
    assert!(
        !stderr(&out).contains('\u{1b}') && !stderr(&out).contains('\r'),
        "{:?}",
        stderr(&out)
    );
}

/// `--junit FILE`: a test case per scenario and one per failed seed, the
/// latter carrying its repro line, each scenario's with the time its runs
/// took; read back with the JUnit crate.
#[test]
fn junit_has_a_case_per_scenario_and_a_failure_per_failed_seed() {
    let stuck = stuck_scenario();
    let xml = stuck.with_extension("xml");
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        stuck.to_str().unwrap(),
        "--seeds",
        "0..2",
        "--junit",
        xml.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let report = quick_junit::Report::deserialize_from_str(&std::fs::read_to_string(&xml).unwrap())
        .expect("valid JUnit XML");
    let cases: Vec<(String, bool, String)> = report.test_suites[0]
        .test_cases
        .iter()
        .map(|case| {
            let (failed, message) = match &case.status {
                quick_junit::TestCaseStatus::Success { .. } => (false, String::new()),
                quick_junit::TestCaseStatus::NonSuccess { message, .. } => (
                    true,
                    message
                        .as_ref()
                        .map(|m| m.as_str().to_string())
                        .unwrap_or_default(),
                ),
                quick_junit::TestCaseStatus::Skipped { .. } => (true, "skipped".into()),
            };
            (case.name.as_str().to_string(), failed, message)
        })
        .collect();
    let names: Vec<&str> = cases.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(
        names,
        ["stuck", "stuck seed 0", "stuck seed 1", "lanes_order"]
    );
    assert!(cases[0].1 && cases[1].1 && cases[2].1 && !cases[3].1);
    assert!(
        cases[2].2.contains(" replay ") && cases[2].2.ends_with("--seed 1"),
        "{:?}",
        cases[2]
    );
    // Times are written to the millisecond: a run of a few items may
    // round to 0, so what is pinned is that each is there.
    let suite = &report.test_suites[0];
    assert!(suite.time.is_some(), "the suite's time");
    for index in [0, 3] {
        let case = &suite.test_cases[index];
        assert!(case.time.is_some(), "{:?} has no time", case.name);
    }
}

/// `--shard I/N` and `merge`: the shards' JSON reports merge into exactly
/// the unsharded report, exit code included; a missing or repeated shard
/// is refused.
#[test]
fn shards_merge_into_the_unsharded_report_and_its_exit_code() {
    let stuck = stuck_scenario();
    let files = ["scenarios/lanes_order.toml", stuck.to_str().unwrap()];
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "run", files[0], files[1], "--seeds", "0..5", "--format", "json",
        ];
        args.extend_from_slice(extra);
        lanesim(&args)
    };
    let whole = sweep(&[]);
    assert_eq!(whole.status.code(), Some(3));
    let mut paths = Vec::new();
    for shard in ["0/3", "1/3", "2/3"] {
        let out = sweep(&["--shard", shard]);
        let path = stuck.with_file_name(format!("shard-{}.json", &shard[..1]));
        std::fs::write(&path, &out.stdout).unwrap();
        paths.push(path.to_str().unwrap().to_string());
    }
    let merged = lanesim(&["merge", &paths[0], &paths[1], &paths[2], "--format", "json"]);
    assert_eq!(merged.status.code(), Some(3), "{}", stderr(&merged));
    let value =
        |out: &Output| -> serde_json::Value { serde_json::from_slice(&out.stdout).unwrap() };
    assert_eq!(value(&merged), value(&whole));
    let human = lanesim(&["merge", &paths[2], &paths[0], &paths[1]]);
    assert_eq!(human.status.code(), Some(3));
    assert!(stdout(&human).contains("summary: 10 runs: 5 pass, 0 violated, 5 liveness"));

    let missing = lanesim(&["merge", &paths[0], &paths[1]]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("one of 3 shard(s), but 2 report(s)"),
        "{}",
        stderr(&missing)
    );
    let twice = lanesim(&["merge", &paths[0], &paths[1], &paths[1]]);
    assert_eq!(twice.status.code(), Some(2));
    assert!(
        stderr(&twice).contains("was given twice"),
        "{}",
        stderr(&twice)
    );
    let garbage = lanesim(&["merge", "scenarios/lanes_order.toml"]);
    assert_eq!(garbage.status.code(), Some(2));
    assert!(
        stderr(&garbage).contains("lanes_order.toml:1:"),
        "{}",
        stderr(&garbage)
    );
}

/// A hundred million seeds with a wall budget: runs lazily, stops on time,
/// says how far it got, and judges what it ran.
#[test]
fn a_sweep_of_a_hundred_million_seeds_stops_at_its_wall_budget() {
    let started = std::time::Instant::now(); // wall-clock: ok (the test bounds the sweep's wall time)
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seeds",
        "0..100000000",
        "--for",
        "1s",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("stopped by --for: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.ends_with(" of 100000000 runs done"), "{line}");
}

#[test]
fn bad_input_and_usage_exit_2_with_the_file_line_and_key() {
    let out = lanesim(&["run", "sims/tests/bad/unknown_world.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("sims/tests/bad/unknown_world.toml:2:9: world: unknown variant `mars`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(lanesim(&["run", "no/such/dir"]).status.code(), Some(2));
    assert_eq!(lanesim(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        lanesim(&["run", "scenarios", "--seeds", "5..1"])
            .status
            .code(),
        Some(2)
    );
}

#[cfg(not(feature = "planted-bugs"))]
#[test]
fn selecting_a_planted_bug_needs_the_feature() {
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seed",
        "1",
        "--bug",
        "no-exit-guard",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("this build has no planted bugs"),
        "{}",
        stderr(&out)
    );
}

/// The repro is the binary that ran (argv for machines, one line for
/// people) and, apart, the cargo command that rebuilds it first.
#[test]
fn the_repro_names_the_binary_that_ran_as_argv_and_as_a_line() {
    let repro = lanesim_sims::run::Repro::replay(
        "scenarios/lanes_order.toml",
        7121,
        &lanesim_sims::targets::Subject::default(),
    );
    let exe = std::env::current_exe().unwrap();
    assert!(
        exe.ends_with(&repro.argv[0]),
        "{:?} is not {exe:?}",
        repro.argv[0]
    );
    assert_eq!(
        repro.argv[1..],
        ["replay", "scenarios/lanes_order.toml", "--seed", "7121"]
    );
    assert_eq!(repro.display, repro.argv.join(" "));
    // With the profile this binary was built with (`cargo test` or
    // `cargo test --release`).
    let profile = match lanesim_sims::run::Profile::running() {
        Some(lanesim_sims::run::Profile::Release) => " --release",
        _ => "",
    };
    assert_eq!(
        repro.cargo,
        format!("cargo run{profile} -- replay scenarios/lanes_order.toml --seed 7121")
    );
}

#[test]
fn audit_finds_no_divergence() {
    // Three seeds in a release build (CI's planted-bug step runs every test
    // so; its own audit step runs 32), one in a debug one (the README's
    // `cargo test`, where three were 55 s of the suite).
    let seeds = if cfg!(debug_assertions) {
        "0..1"
    } else {
        "0..3"
    };
    let out = lanesim(&["audit", "scenarios", "--seeds", seeds]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("audit: 0 divergence(s)"));
}

/// A failing run's repro line, executed as printed (its program is the
/// binary that ran), reproduces the same violations; `--format json` gives
/// the same command as an argv list.
#[cfg(feature = "planted-bugs")]
#[test]
fn a_failure_prints_one_repro_line_that_replays_the_same_failure() {
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seed",
        "5",
        "--bug",
        "pending-decremented-at-dequeue",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    let repros: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("repro: "))
        .collect();
    assert_eq!(repros.len(), 1, "{text}");
    let words: Vec<&str> = repros[0].split_whitespace().collect();
    assert_eq!(
        words[1..],
        [
            "replay",
            "scenarios/lanes_order.toml",
            "--seed",
            "5",
            "--bug",
            "pending-decremented-at-dequeue"
        ]
    );
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let replay = Command::new(std::path::Path::new(root).join(words[0]))
        .args(&words[1..])
        .current_dir(root)
        .output()
        .unwrap();
    assert_eq!(replay.status.code(), Some(1));
    let json = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seed",
        "5",
        "--bug",
        "pending-decremented-at-dequeue",
        "--format",
        "json",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let failure = &doc["scenarios"][0]["failures"][0];
    assert_eq!(failure["repro"]["display"], repros[0]);
    assert_eq!(
        failure["repro"]["argv"].as_array().unwrap().len(),
        words.len()
    );
    assert_eq!(failure["params"]["world"], "lanes");
    assert!(failure["params"]["lanes"]["keys"].is_number(), "{failure}");
    let violations = |t: &str| {
        t.lines()
            .filter(|l| l.contains("violated:"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert!(!violations(&text).is_empty());
    assert_eq!(
        violations(&stdout(&replay)),
        violations(&text),
        "the replay found something else"
    );
}

#[test]
fn audit_detects_the_first_diverging_event() {
    use lanesim_sims::event::{Event, Record};
    use lanesim_sims::run::first_divergence;
    let record = |item| Record {
        at: std::time::Duration::from_millis(item),
        host: "lanes".into(),
        event: Event::Routed {
            key: 0,
            item,
            capacity: None,
            depth: Some(0),
        },
    };
    let a = vec![record(1), record(2), record(3)];
    let mut b = a.clone();
    assert_eq!(first_divergence(&a, &b), None);
    b[2] = record(4);
    assert_eq!(first_divergence(&a, &b), Some(2));
    assert_eq!(
        first_divergence(&a, &a[..2]),
        Some(2),
        "a shorter log diverges where it ends"
    );
}

/// A scenario file in a fresh directory, for tests that need their own.
/// A scenario file in a temporary directory that is removed when this is
/// dropped (keep it alive for the test).
struct Scratch {
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
}

impl std::ops::Deref for Scratch {
    type Target = std::path::PathBuf;
    fn deref(&self) -> &Self::Target {
        &self.path
    }
}

fn scratch_scenario(name: &str, text: &str) -> Scratch {
    let dir = tempfile::Builder::new()
        .prefix("lanesim-cli-")
        .tempdir()
        .unwrap();
    let path = dir.path().join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    Scratch { _dir: dir, path }
}

/// `lanes_order` requiring a declined reap, which it never makes (no TTL),
/// as a file named `unreached`.
fn unreached() -> Scratch {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lanes_order.toml"),
    )
    .unwrap();
    let text = text.replacen(
        "reaches = [",
        "reaches = [\n    \"reap_declined >= 25%\",",
        1,
    );
    scratch_scenario("unreached", &text)
}

/// `lanes_order` never reaps (no TTL), so a sweep that requires a declined
/// reap misses it: its own verdict and exit code 5, naming the scenario,
/// the mark and the seed count; one seed alone is not judged.
#[test]
fn a_sweep_that_misses_a_required_mark_exits_5_and_names_it() {
    let path = unreached();
    let path = path.to_str().unwrap();
    let out = lanesim(&["run", path, "--seeds", "0..4"]);
    assert_eq!(out.status.code(), Some(5), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(
            "NOT REACHED: unreached reached `reap_declined` in 0 of 4 seeds; it requires 1 (reap_declined >= 25%)"
        ),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("reap_declined"),
        "the mark table shows it"
    );
    let one = lanesim(&["run", path, "--seed", "0"]);
    assert_eq!(one.status.code(), Some(0), "{}", stdout(&one));

    let json = lanesim(&["run", path, "--seeds", "0..4", "--format", "json"]);
    assert_eq!(json.status.code(), Some(5));
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("stdout is JSON");
    let reaches = &value["scenarios"][0]["reaches"];
    let missed: Vec<&serde_json::Value> = reaches
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["reached"] == false)
        .collect();
    assert_eq!(missed.len(), 1, "{reaches}");
    assert_eq!(missed[0]["mark"], "reap_declined");
    assert_eq!(value["scenarios"][0]["marks"]["lane_created"], 4);
}

/// `run --reach` prints each required mark of each scenario with the seeds
/// that reached it, as the JSON report of the same sweep counts them, and
/// `MISSED` on exactly the requirement the sweep missed: the figures behind
/// a `reaches` line come from the run, not from a hand-kept table.
#[test]
fn run_reach_prints_each_required_marks_count_as_the_json_counts_it() {
    let path = unreached();
    let path = path.to_str().unwrap();
    let human = lanesim(&["run", path, "--seeds", "0..6", "--reach"]);
    assert_eq!(human.status.code(), Some(5), "{}", stdout(&human));
    let printed = stdout(&human);
    let json = lanesim(&["run", path, "--seeds", "0..6", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("stdout is JSON");
    let reaches = value["scenarios"][0]["reaches"].as_array().unwrap().clone();
    assert!(reaches.len() >= 2, "{reaches:?}");
    let section = printed
        .split("reach: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no reach section: {printed}"));
    assert!(section.contains("unreached (6 seeds)"), "{section}");
    for reach in &reaches {
        let mark = reach["mark"].as_str().unwrap();
        let line = section
            .lines()
            .find(|l| l.split_whitespace().next() == Some(mark))
            .unwrap_or_else(|| panic!("no line for {mark}: {section}"));
        let count = format!("{}/6", reach["seeds_hit"]);
        assert!(
            line.split_whitespace().nth(1) == Some(count.as_str()),
            "{mark}: {line} vs {count}"
        );
        assert_eq!(
            line.ends_with("MISSED"),
            reach["reached"] == false,
            "{line}"
        );
    }
    assert_eq!(section.matches("MISSED").count(), 1, "{section}");
}

#[test]
fn list_names_every_coverage_mark_and_replay_prints_a_runs_marks() {
    let out = lanesim(&["list"]);
    let text = stdout(&out);
    for mark in [
        "reap_declined",
        "late_down_of_old_generation",
        "fault_applied_disconnect",
        "preempted:lane.idle_before_reap",
    ] {
        assert!(text.contains(mark), "{mark} missing from list");
    }
    let replay = lanesim(&["replay", "scenarios/lanes_reap_race.toml", "--seed", "1"]);
    assert_eq!(replay.status.code(), Some(0), "{}", stderr(&replay));
    assert!(
        stdout(&replay)
            .lines()
            .any(|l| l.starts_with("marks:") && l.contains("reap_won=")),
        "{}",
        stdout(&replay)
    );
}

#[cfg(feature = "planted-bugs")]
#[test]
fn selftest_prints_detection_rates_and_exits_7_when_an_expected_bug_escapes() {
    let out = lanesim(&[
        "selftest",
        "scenarios/lanes_capacity_flood.toml",
        "--seeds",
        "0..4",
    ]);
    assert_eq!(out.status.code(), Some(7), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "| #5b capacity-shared-across-keys | L4, L6 | lanes_capacity_flood | 4 / 4 |"
        ),
        "{text}"
    );
    assert!(text.contains("ESCAPED"), "{text}");
    let json = lanesim(&[
        "selftest",
        "scenarios/lanes_capacity_flood.toml",
        "--seeds",
        "0..2",
        "--format",
        "json",
    ]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).expect("stdout is JSON");
    let bug = value["bugs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["bug"] == "capacity-shared-across-keys")
        .unwrap();
    assert_eq!(bug["caught"], true);
    assert_eq!(bug["scenarios"][0]["seeds_caught"], 2);
}

/// A contract listed by a scenario whose sweep never gave it a chance to
/// fail (S3 with nothing ever going down) is reported, like a missed mark.
#[test]
fn a_contract_that_could_not_have_failed_in_a_sweep_is_not_reached() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/sender_fifo.toml"),
    )
    .unwrap();
    let text = text.replacen("\"S2\", ", "\"S2\", \"S3\", ", 1);
    let path = scratch_scenario("vacuous", &text);
    let out = lanesim(&["run", path.to_str().unwrap(), "--seeds", "0..3"]);
    assert_eq!(out.status.code(), Some(5), "{}", stdout(&out));
    assert!(
        stdout(&out).contains(
            "NOT REACHED: vacuous lists S3 but none of its 3 seeds took a generation down"
        ),
        "{}",
        stdout(&out)
    );
}

/// Every count and duration a hunt takes has a bound; nonsense is exit 2.
#[test]
fn hunt_refuses_budgets_it_cannot_honour_with_exit_2() {
    for args in [
        ["hunt", "--for", "0s"],
        ["hunt", "--for", "8d"],
        ["hunt", "--for", "9h9"],
        ["hunt", "--for", "200h"],
        ["hunt", "--cases", "0"],
        ["hunt", "--jobs", "0"],
        ["hunt", "--jobs", "257"],
        ["hunt", "--world", "nowhere"],
    ] {
        let out = lanesim(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        assert!(!stderr(&out).is_empty(), "{args:?}: no message");
    }
    for args in [
        &["run", "scenarios", "--jobs", "0"][..],
        &["run", "scenarios", "--shard", "3/3"],
        &["run", "scenarios", "--shard", "0/0"],
        &["run", "scenarios", "--for", "0s"],
        &["run", "scenarios", "--seeds", "0..=18446744073709551615"],
        &["merge", "no/such/shard.json"],
    ] {
        let out = lanesim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        assert!(!stderr(&out).is_empty(), "{args:?}: no message");
    }
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seeds",
        "0..2000000000000000",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("at most 1000000000000000 seeds"),
        "{}",
        stderr(&out)
    );
}

/// A hunt says what it will do (its seed first), then how many cases it
/// ran, what marks they reached and a digest of its runs; the same seed
/// prints the same digest.
#[test]
fn a_hunt_prints_its_seed_first_then_cases_marks_and_digest() {
    let scratch = tempfile::tempdir().unwrap();
    let regressions = scratch.path().join("hunt.txt");
    // A regressions file named on the command line must exist.
    std::fs::write(&regressions, "").unwrap();
    let run = || {
        lanesim(&[
            "hunt",
            "--cases",
            "24",
            "--seed",
            "3",
            "--world",
            "lanes",
            "--regressions",
            regressions.to_str().unwrap(),
        ])
    };
    let (first, second) = (run(), run());
    assert_eq!(first.status.code(), Some(0), "{}", stdout(&first));
    let text = stdout(&first);
    assert!(
        text.starts_with("hunt --seed 3 --world lanes: 24 cases"),
        "{text}"
    );
    assert!(text.contains("hunt: 24 cases"), "{text}");
    assert!(text.contains("marks reached: "), "{text}");
    let digest = |text: &str| {
        text.lines()
            .find(|l| l.contains("digest"))
            .map(str::to_owned)
    };
    assert!(digest(&text).is_some(), "{text}");
    assert_eq!(digest(&text), digest(&stdout(&second)));
}

/// `shrink` on a passing seed has nothing to do: a clear error, exit 2.
#[test]
fn shrinking_a_passing_seed_is_refused() {
    let out = lanesim(&["shrink", "scenarios/lanes_order.toml", "--seed", "3"]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("nothing to shrink"),
        "{}",
        stderr(&out)
    );
}

/// `shrink` writes a smaller exact scenario that `run` and the printed
/// repro line (`replay`) both fail the same way.
#[cfg(feature = "planted-bugs")]
#[test]
fn a_shrunk_file_round_trips_through_run_and_replay() {
    let scratch = tempfile::tempdir().unwrap();
    let out_dir = scratch.path().join("shrink");
    let out = lanesim(&[
        "shrink",
        "scenarios/lanes_order.toml",
        "--seed",
        "5",
        "--bug",
        "pending-decremented-at-dequeue",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(text.contains("L4 (capacity) violated"), "{text}");
    let note = text
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("repro: "))
        .expect("a repro line");
    // The program that ran, then its arguments.
    let args: Vec<&str> = note.split_whitespace().skip(1).collect();
    assert_eq!(args[0], "replay");
    let path = args[1];
    assert!(path.ends_with("L4-5.toml"), "{path}");
    let replay = lanesim(&args);
    assert_eq!(replay.status.code(), Some(1), "{}", stdout(&replay));
    assert!(stdout(&replay).contains("L4 (capacity) violated"));
    let run = lanesim(&["run", path, "--bug", "pending-decremented-at-dequeue"]);
    assert_eq!(run.status.code(), Some(1), "{}", stdout(&run));
    assert!(stdout(&run).contains("L4 (capacity) violated"));
    // A second shrink of the same seed never overwrites the first's file:
    // it takes the next free name.
    let first = std::fs::read_to_string(path).unwrap();
    let again = lanesim(&[
        "shrink",
        "scenarios/lanes_order.toml",
        "--seed",
        "5",
        "--bug",
        "pending-decremented-at-dequeue",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(1), "{}", stdout(&again));
    assert!(stdout(&again).contains("L4-5-2.toml"), "{}", stdout(&again));
    assert_eq!(std::fs::read_to_string(path).unwrap(), first);
    assert!(out_dir.join("L4-5-2.toml").exists());
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// A failure a hunt finds is kept in proptest's regression file, and the
/// next hunt replays it before it draws anything new.
#[cfg(feature = "planted-bugs")]
#[test]
fn a_hunts_failure_is_saved_and_replayed_first_by_the_next_hunt() {
    let scratch = tempfile::tempdir().unwrap();
    let regressions = scratch.path().join("regressions.txt");
    // Named on the command line, it must exist: empty, to start one.
    std::fs::write(&regressions, "").unwrap();
    let hunt = |seed: &str| {
        lanesim(&[
            "hunt",
            "--world",
            "lanes",
            "--cases",
            "200",
            "--seed",
            seed,
            "--no-shrink",
            "--bug",
            "no-exit-guard",
            "--regressions",
            regressions.to_str().unwrap(),
        ])
    };
    let first = hunt("1");
    assert_eq!(first.status.code(), Some(1), "{}", stdout(&first));
    let saved = std::fs::read_to_string(&regressions).expect("the regression file");
    assert!(saved.lines().any(|l| l.starts_with("cc ")), "{saved}");
    let second = hunt("2");
    assert_eq!(second.status.code(), Some(1), "{}", stdout(&second));
    assert!(
        stdout(&second).contains("FAIL case 0 (replayed from the regression file"),
        "{}",
        stdout(&second)
    );
    let _ = std::fs::remove_file(&regressions);
}

/// `u64::MAX` is a seed like any other: `--seed` runs exactly it (a
/// half-open range once ran nothing and exited 0), and `A..=B` names a
/// range ending there.
#[test]
fn the_last_seed_runs_exactly_once() {
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seed",
        "18446744073709551615",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("seed 18446744073709551615:"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("summary: 1 runs"), "{}", stdout(&out));
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seeds",
        "18446744073709551614..=18446744073709551615",
    ]);
    assert!(stdout(&out).contains("summary: 2 runs"), "{}", stdout(&out));
}

/// A log written to a file or pipe carries no colour codes (colour is for
/// a terminal, and `NO_COLOR` turns it off there too).
#[test]
fn a_redirected_replay_log_has_no_colour_codes() {
    let out = lanesim(&["replay", "scenarios/lanes_order.toml", "--seed", "1", "-vv"]);
    assert_eq!(out.status.code(), Some(0));
    let log = stderr(&out);
    assert!(log.contains("Routed"), "no events logged: {log}");
    assert!(!log.contains('\u{1b}'), "escape codes in a redirected log");
}

/// Paths are named when they hold nothing to run or cannot be read; a
/// directory reached twice (a symlink to itself) runs its files once.
#[cfg(unix)]
#[test]
fn empty_directories_symlink_loops_and_repeats_are_named_or_run_once() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().to_path_buf();
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    std::fs::create_dir_all(dir.join("one")).unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/lanes_order.toml"),
        dir.join("one/lanes_order.toml"),
    )
    .unwrap();
    std::os::unix::fs::symlink(dir.join("one"), dir.join("one/again")).unwrap();
    std::os::unix::fs::symlink(dir.join("loop_b"), dir.join("loop_a")).unwrap();
    std::os::unix::fs::symlink(dir.join("loop_a"), dir.join("loop_b")).unwrap();
    let path = |p: &str| dir.join(p).to_str().unwrap().to_string();

    let out = lanesim(&["run", &path("empty")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("{}: no scenario files (*.toml)", path("empty"))),
        "{}",
        stderr(&out)
    );
    let out = lanesim(&["run", &path("loop_a")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("symbolic links"), "{}", stderr(&out));
    let out = lanesim(&[
        "run",
        &path("one"),
        &path("one/lanes_order.toml"),
        "--seed",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("summary: 1 runs: 1 pass"),
        "{}",
        stdout(&out)
    );
}

/// `replay --trace`: a trace-event file (Chrome / Perfetto JSON) stamped in
/// virtual time: in a wedged-peer run the write deadline's down lands
/// `write_timeout` (5 s) after the wedged write began; processes and tracks
/// are named; the fault is an instant; every span begun is ended (a
/// generation at its down or at the run's end), on every track; the replay
/// says where it wrote. A failure prints the trace command next to its
/// repro line.
#[test]
fn a_trace_is_trace_event_json_in_virtual_time() {
    let scratch = tempfile::tempdir().unwrap();
    let path = scratch.path().join("trace.json");
    let out = lanesim(&[
        "replay",
        "scenarios/sender_wedged_peer.toml",
        "--seed",
        "0",
        "--trace",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("wrote {}", path.display())),
        "{}",
        stdout(&out)
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).expect("JSON");
    let events = doc["traceEvents"].as_array().expect("a traceEvents array");
    assert_spans_balanced(events);
    for event in events {
        let ph = event["ph"].as_str().expect("every event has a phase");
        assert!(["B", "E", "i", "M"].contains(&ph), "{event}");
        assert!(event["pid"].is_u64() && event["tid"].is_u64(), "{event}");
        assert!(ph == "M" || event["ts"].is_u64(), "{event}");
    }
    let named = |what: &str, name: &str| {
        events
            .iter()
            .any(|e| e["ph"] == "M" && e["name"] == what && e["args"]["name"] == name)
    };
    assert!(named("process_name", "local") && named("process_name", "peer0"));
    assert!(named("thread_name", "to 0 gen 1 writes"));
    assert!(events
        .iter()
        .any(|e| e["ph"] == "i" && e["name"].as_str().unwrap_or("").starts_with("fault: Wedge")));
    let down = events
        .iter()
        .find(|e| e["ph"] == "i" && e["name"] == "down: WriteTimeout")
        .expect("the wedged generation's deadline down");
    let (peer, generation) = (&down["args"]["peer"], &down["args"]["generation"]);
    let began = events
        .iter()
        .filter(|e| {
            e["ph"] == "B"
                && e["args"]["event"] == "write_started"
                && &e["args"]["peer"] == peer
                && &e["args"]["generation"] == generation
                && e["ts"].as_u64() <= down["ts"].as_u64()
        })
        .filter_map(|e| e["ts"].as_u64())
        .max()
        .expect("the wedged write");
    let after = down["ts"].as_u64().unwrap() - began;
    // write_timeout = 5s; the deadline fires on the tick (50 ms) it falls in.
    assert!(
        (5_000_000..=5_050_000).contains(&after),
        "down {after} us after the write began"
    );

    // A mesh run: hundreds of generations, some still live at the end.
    let mesh = scratch.path().join("mesh.json");
    let out = lanesim(&[
        "replay",
        "scenarios/mesh_chaos.toml",
        "--seed",
        "1",
        "--trace",
        mesh.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mesh).unwrap()).expect("JSON");
    assert_spans_balanced(doc["traceEvents"].as_array().unwrap());

    let stuck = stuck_scenario();
    let out = lanesim(&["run", stuck.to_str().unwrap(), "--seed", "0"]);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let repro = lines
        .iter()
        .position(|l| l.starts_with("repro: "))
        .expect("a repro line");
    assert!(
        lines[repro + 1].starts_with("trace: ")
            && lines[repro + 1].contains(" replay ")
            && lines[repro + 1].contains("--seed 0 --trace trace.json"),
        "{text}"
    );
}

/// Every `B` of a trace has its `E` on the same track, never before it.
fn assert_spans_balanced(events: &[serde_json::Value]) {
    let mut open: std::collections::BTreeMap<(u64, u64), i64> = Default::default();
    for event in events {
        let track = (
            event["pid"].as_u64().unwrap(),
            event["tid"].as_u64().unwrap(),
        );
        match event["ph"].as_str() {
            Some("B") => *open.entry(track).or_default() += 1,
            Some("E") => {
                let depth = open.entry(track).or_default();
                *depth -= 1;
                assert!(*depth >= 0, "an E with no B open on {track:?}: {event}");
            }
            _ => {}
        }
    }
    let unclosed: Vec<_> = open.iter().filter(|(_, d)| **d != 0).collect();
    assert!(unclosed.is_empty(), "spans never ended: {unclosed:?}");
}

/// `audit --processes`: the same sweep in two processes streams the same
/// runs; the comparison names the first run that differs, or the point
/// where one stream ends early.
#[test]
fn audit_across_processes_finds_identical_runs_and_detects_the_first_difference() {
    let out = lanesim(&[
        "audit",
        "scenarios/lanes_order.toml",
        "scenarios/sender_fifo.toml",
        "--seeds",
        "0..3",
        "--processes",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("audit across processes: 6 runs, identical in both"),
        "{}",
        stdout(&out)
    );
    use lanesim_sims::run::first_line_difference;
    let lines = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    let a = lines(&["x", "y", "z"]);
    assert_eq!(first_line_difference(&a, &a), None);
    assert_eq!(
        first_line_difference(&a, &lines(&["x", "Y", "z"])),
        Some((1, "y".into(), "Y".into()))
    );
    assert_eq!(
        first_line_difference(&a, &lines(&["x", "y"])),
        Some((2, "z".into(), String::new()))
    );
}

/// `hunt --format json`: one JSON document on stdout (the announcement on
/// stderr): counts, why it stopped, the marks reached, the failures.
#[test]
fn hunt_json_is_one_document_on_stdout() {
    let scratch = tempfile::tempdir().unwrap();
    let regressions = scratch.path().join("regressions.txt");
    std::fs::write(&regressions, "").unwrap();
    let out = lanesim(&[
        "hunt",
        "--world",
        "lanes",
        "--cases",
        "20",
        "--format",
        "json",
        "--regressions",
        regressions.to_str().unwrap(),
        "--out",
        scratch.path().join("shrunk").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("the whole of stdout is one JSON document");
    assert_eq!(doc["world"], "lanes");
    assert_eq!(doc["cases"], 20);
    assert_eq!(doc["stop"], "cases");
    assert_eq!(doc["failures"], 0);
    assert_eq!(doc["found"], serde_json::json!([]));
    assert!(doc["marks"]["lane_created"].as_u64().unwrap() > 0, "{doc}");
    assert!(stderr(&out).contains("hunt --seed 0 --world lanes"));
}
