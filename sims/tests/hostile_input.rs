//! The runner against inputs that used to crash it, hang it, or print a
//! green that misleads: each case exits 2 (bad input) or with a non-zero
//! verdict, and says why. The hostile files are made here from the shipped
//! scenarios, one defect each.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn lanesim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lanesim"))
        .args(args)
        .current_dir(ROOT)
        .env_remove("RUST_LOG")
        .output()
        .expect("runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Exits `code` and says `why` somewhere in its output; never a panic.
fn refused(out: &Output, code: i32, why: &str) {
    let all = text(out);
    assert_eq!(out.status.code(), Some(code), "{all}");
    assert!(all.contains(why), "expected {why:?} in:\n{all}");
    assert!(!all.contains("panicked"), "{all}");
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Self(
            tempfile::Builder::new()
                .prefix("lanesim-hostile-")
                .tempdir()
                .unwrap(),
        )
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    /// A shipped scenario with `edit` applied to its text, written as
    /// `name.toml`.
    fn edited(&self, shipped: &str, name: &str, edit: impl Fn(String) -> String) -> String {
        let original =
            std::fs::read_to_string(Path::new(ROOT).join("scenarios").join(shipped)).unwrap();
        let edited = edit(original.clone());
        assert_ne!(edited, original, "the edit of {shipped} changed nothing");
        let path = self.path(&format!("{name}.toml"));
        std::fs::write(&path, edited).unwrap();
        path.display().to_string()
    }

    fn fifo(&self, name: &str) -> String {
        let path = self.path(name);
        let made = Command::new("mkfifo").arg(&path).status().unwrap();
        assert!(made.success());
        path.display().to_string()
    }
}

fn replace<'a>(from: &'a str, to: &'a str) -> impl Fn(String) -> String + 'a {
    move |text| text.replacen(from, to, 1)
}

#[test]
fn special_files_are_refused_before_they_are_read() {
    let dir = Dir::new();
    let fifo = dir.fifo("waiting.toml");
    refused(&lanesim(&["run", &fifo]), 2, "a FIFO, not a scenario file");
    // Inside a scanned directory, too.
    let scanned = dir.0.path().display().to_string();
    refused(&lanesim(&["run", &scanned]), 2, "a FIFO");
    refused(
        &lanesim(&["merge", "/dev/zero"]),
        2,
        "a device, not a shard report",
    );
    refused(
        &lanesim(&["hunt", "--cases", "1", "--regressions", &fifo]),
        2,
        "a FIFO, not a regressions file",
    );
    refused(
        &lanesim(&["hunt", "--cases", "1", "--regressions", "/dev/zero"]),
        2,
        "a device",
    );
}

#[test]
fn a_regressions_path_that_cannot_be_read_is_refused() {
    let dir = Dir::new();
    let missing = dir.path("missing.txt").display().to_string();
    refused(
        &lanesim(&["hunt", "--cases", "1", "--regressions", &missing]),
        2,
        "no such file",
    );
    let scanned = dir.0.path().display().to_string();
    refused(
        &lanesim(&["hunt", "--cases", "1", "--regressions", &scanned]),
        2,
        "a directory",
    );
    let garbage = dir.path("garbage.txt");
    std::fs::write(&garbage, "# a comment\ncc 00ff\n").unwrap();
    let garbage = garbage.display().to_string();
    refused(
        &lanesim(&["hunt", "--cases", "1", "--regressions", &garbage]),
        2,
        "garbage.txt:2: not a saved case",
    );
}

#[test]
fn a_name_that_could_forge_a_report_line_is_refused() {
    let dir = Dir::new();
    for (label, name) in [
        (
            "newline",
            "name = \"ok\\nlanes_order: seeds 0..32: 32/32 pass\"\n",
        ),
        ("escape", "name = \"\\u001b[32mgreen\"\n"),
    ] {
        let path = dir.edited("lanes_order.toml", label, |text| format!("{name}{text}"));
        refused(&lanesim(&["run", &path]), 2, "the scenario's name holds");
    }
}

#[test]
fn a_closed_stdout_ends_the_run_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lanesim"))
        // `-v`: a line per run, so the run still writes after the reader left.
        .args([
            "run",
            "scenarios/lanes_order.toml",
            "--seeds",
            "0..2000",
            "-v",
        ])
        .current_dir(ROOT)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The reader leaves, as `| head -1` does.
    let out = child.wait_with_output().unwrap();
    refused(&out, 141, "");
    assert!(!first.is_empty());
}

/// A stdout that cannot be written (a full disk) is not the testbed
/// crashing: its own code, 8, and the reason on stderr.
#[test]
fn a_failed_write_to_stdout_has_its_own_exit_code() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        // No /dev/full on this platform: nothing to write into.
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_lanesim"))
        .args(["run", "scenarios/lanes_order.toml", "--seeds", "0..1"])
        .current_dir(ROOT)
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    refused(&out, 8, "cannot write to stdout");
}

/// A shard that holds none of the sweep's runs decided nothing: it says
/// so and falls short (5), never `0/0 pass` with 0.
#[test]
fn an_empty_shard_says_it_ran_nothing_and_falls_short() {
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seeds",
        "0..2",
        "--shard",
        "3/4",
    ]);
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("NOTHING RAN"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let ran = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seeds",
        "0..2",
        "--shard",
        "1/4",
    ]);
    assert_eq!(ran.status.code(), Some(0), "a shard with a run passes");
}

#[test]
fn a_time_boxed_sweep_gives_every_scenario_seeds() {
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "scenarios/sender_chaos.toml",
        "--seeds",
        "0..100000000",
        "--for",
        "3s",
        "--jobs",
        "2",
    ]);
    let all = text(&out);
    // How far each gets depends on the machine's speed, so the verdict may
    // too (a seed far out may fail): what is pinned is that both ran.
    assert_ne!(out.status.code(), Some(5), "{all}");
    for scenario in ["lanes_order", "sender_chaos"] {
        let line = all
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(scenario) && l.contains(" pass"))
            .unwrap_or_else(|| panic!("{all}"));
        assert!(!line.contains(" 0/0 pass"), "{line}");
    }
}

#[test]
fn real_mode_that_decides_nothing_is_not_a_pass() {
    refused(
        &lanesim(&["run", "--real", "scenarios/mesh_restart.toml"]),
        5,
        "no run was made for real",
    );
    refused(
        &lanesim(&["fidelity", "scenarios/mesh_restart.toml", "--seeds", "0..1"]),
        5,
        "no seed compared",
    );
    // Skipped for a reason that holds as root too.
    let out = lanesim(&["run", "--real", "scenarios/sender_partition_heal.toml"]);
    refused(&out, 5, "real mode cannot make a partition");
    assert!(!text(&out).contains("without root"), "{}", text(&out));
}

/// `fidelity` with no paths compares every shipped scenario real mode can
/// run and lists the others as not compared, without failing for them; a
/// scenario named on the command line that it cannot compare still falls
/// short (above).
#[test]
fn fidelity_with_no_paths_lists_what_real_mode_cannot_run_without_failing() {
    let dir = Dir::new();
    let shipped = dir.path("scenarios");
    std::fs::create_dir(&shipped).unwrap();
    for name in ["lanes_order.toml", "mesh_restart.toml"] {
        std::fs::copy(
            Path::new(ROOT).join("scenarios").join(name),
            shipped.join(name),
        )
        .unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_lanesim"))
        .args(["fidelity", "--seeds", "0..1"])
        .current_dir(dir.path(""))
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("lanes_order: verdicts agree on 1/1"), "{all}");
    assert!(
        all.contains(
            "not compared (real mode cannot run them; name one to make it count): mesh_restart"
        ),
        "{all}"
    );
    assert!(all.contains("simulated and real verdicts agree"), "{all}");
}

#[test]
fn real_mode_refuses_a_segment_size_the_kernel_would() {
    let dir = Dir::new();
    let path = dir.edited(
        "sender_fifo.toml",
        "tiny_mss",
        replace("mss = [536, 1460]", "mss = 40"),
    );
    refused(
        &lanesim(&["run", "--real", &path]),
        2,
        "TCP_MAXSEG, which takes 88..=32767",
    );
    // The simulated world takes it.
    assert_eq!(
        lanesim(&["run", &path, "--seeds", "0..1"]).status.code(),
        Some(0)
    );
}

#[test]
fn merge_checks_every_count_against_the_shards_plan() {
    let dir = Dir::new();
    let out = lanesim(&[
        "run",
        "scenarios/lanes_order.toml",
        "--seeds",
        "0..6",
        "--shard",
        "0/2",
        "--format",
        "json",
    ]);
    let shard: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let write = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut value = shard.clone();
        edit(&mut value);
        let path = dir.path(name);
        std::fs::write(&path, serde_json::to_string(&value).unwrap()).unwrap();
        path.display().to_string()
    };
    let index = write("index.json", &|v| v["shard"]["index"] = 5.into());
    refused(
        &lanesim(&["merge", &index, &index]),
        2,
        "a shard's index is below its count",
    );
    let huge = write("huge.json", &|v| {
        v["scenarios"][0]["verdicts"]["pass"] = u64::MAX.into();
    });
    let other = write("other.json", &|v| v["shard"]["index"] = 1.into());
    refused(
        &lanesim(&["merge", &huge, &other]),
        2,
        "claims more runs than",
    );
    let inflated = write("inflated.json", &|v| {
        v["scenarios"][0]["planned"] = 1000.into();
        v["scenarios"][0]["verdicts"]["pass"] = 1000.into();
    });
    refused(
        &lanesim(&["merge", &inflated, &other]),
        2,
        "plans 1000 run(s)",
    );
}

#[test]
fn memory_a_sweep_may_take_is_bounded_at_validation() {
    let dir = Dir::new();
    let path = dir.edited(
        "sender_fifo.toml",
        "big_frames",
        replace("frame_bytes = [0, 4096]", "frame_bytes = 16777216"),
    );
    refused(
        &lanesim(&["run", &path]),
        2,
        "MiB of frames in one run; at most 1024 MiB",
    );
    // Inside the bound alone, but not eight at a time.
    let path = dir.edited("sender_fifo.toml", "many_jobs", |text| {
        text.replacen("data_frames = [50, 300]", "data_frames = 64", 1)
            .replacen("frame_bytes = [0, 4096]", "frame_bytes = 16777216", 1)
    });
    refused(
        &lanesim(&["run", &path, "--jobs", "8"]),
        2,
        "--jobs 8 x up to 1024 MiB of frames a run",
    );
}

/// A mark required twice (a duplicate, or two shares that contradict each
/// other) is refused at the second entry's key path; a `chaos_kinds` list
/// past its bound is refused, though a kind may repeat to weigh it.
#[test]
fn duplicate_reaches_and_a_flood_of_chaos_kinds_are_refused_with_their_key() {
    let dir = Dir::new();
    let twice = dir.edited(
        "lanes_order.toml",
        "twice",
        replace(
            "reaches = [",
            "reaches = [\"role:lane_created >= 10%\", \"role:lane_created >= 99%\", ",
        ),
    );
    refused(
        &lanesim(&["run", &twice]),
        2,
        "reaches[1]: `role:lane_created` is already required by reaches[0]",
    );
    let flood = format!("chaos_kinds = [{}]", vec!["\"wedge\""; 100_000].join(", "));
    let many = dir.edited(
        "sender_down_at_registration.toml",
        "many_kinds",
        replace("chaos_kinds = [\"disconnect\"]", &flood),
    );
    refused(&lanesim(&["run", &many]), 2, "at most 64 entries");
    let weighed = dir.edited(
        "sender_down_at_registration.toml",
        "weighed",
        replace(
            "chaos_kinds = [\"disconnect\"]",
            "chaos_kinds = [\"disconnect\", \"disconnect\", \"wedge\"]",
        ),
    );
    let out = lanesim(&["run", &weighed, "--seeds", "0..1"]);
    assert_ne!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn timings_that_can_only_fail_for_the_testbeds_reasons_are_refused() {
    let dir = Dir::new();
    let coarse = dir.edited("mesh_squatter.toml", "coarse_tick", |text| {
        text.replacen("heartbeat = \"1s\"", "heartbeat = \"250ms\"", 1)
            .replacen("tick = \"10ms\"", "tick = \"200ms\"", 1)
    });
    refused(
        &lanesim(&["run", &coarse]),
        2,
        "mesh.tick: at most heartbeat / 8",
    );
    let long_hold = dir.edited(
        "mesh_squatter.toml",
        "long_hold",
        replace("hold = [\"100ms\", \"1s\"]", "hold = [\"100ms\", \"90s\"]"),
    );
    refused(
        &lanesim(&["run", &long_hold]),
        2,
        "every such seed would run out of time",
    );
    let slow_tick = dir.edited(
        "sender_partition_heal.toml",
        "slow_tick",
        replace("tick = \"20ms\"", "tick = \"500ms\""),
    );
    refused(
        &lanesim(&["run", &slow_tick]),
        2,
        "sender.tick: at most the shortest write_timeout",
    );
}
