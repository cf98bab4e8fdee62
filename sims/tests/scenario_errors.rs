//! Hostile scenario files: each is refused with one message naming the file,
//! the line and column, and the key, and the runner exits 2, never panics.

use std::path::Path;

use lanesim_sims::scenario::Scenario;

const GOOD: &str = r#"
description = "ok"
world = "lanes"
checks = ["L1"]

[lanes]
keys = [1, 4]
producers = 1
items_per_producer = 10
burst = 1
gap = "0ms"
pause = "1ms"
handler = ["0ms", "1ms"]
capacity = 4
policy = "reject"
"#;

/// The error text for `GOOD` with `from` replaced by `to`.
fn error_for(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    let source = GOOD.replacen(from, to, 1);
    Scenario::parse(Path::new("scenarios/x.toml"), &source)
        .expect_err("must be refused")
        .to_string()
}

#[test]
fn the_good_file_loads() {
    let scenario = Scenario::parse(Path::new("scenarios/x.toml"), GOOD).unwrap();
    assert_eq!(scenario.name, "x");
}

#[test]
fn an_unknown_key_names_file_line_and_key() {
    let error = error_for("capacity = 4", "cpacity = 4");
    assert!(
        error.starts_with("scenarios/x.toml:14:1: lanes.cpacity: unknown field `cpacity`"),
        "{error}"
    );
}

#[test]
fn malformed_toml_names_file_and_line() {
    // The parser notices at the next line; both are within a line of the
    // mistake, and the message says what is missing.
    let error = error_for("keys = [1, 4]", "keys = [1, 4");
    assert!(
        error.starts_with("scenarios/x.toml:8:") && error.contains("expected `,`"),
        "{error}"
    );
}

#[test]
fn a_wrong_type_names_the_key() {
    let error = error_for("producers = 1", "producers = \"one\"");
    assert!(
        error.starts_with("scenarios/x.toml:8:") && error.contains("lanes.producers"),
        "{error}"
    );
    let error = error_for("gap = \"0ms\"", "gap = 5");
    assert!(
        error.contains("lanes.gap") && error.contains("duration"),
        "{error}"
    );
    let error = error_for("producers = 1", "producers = -1");
    assert!(
        error.contains("lanes.producers") && error.contains("-1"),
        "{error}"
    );
}

#[test]
fn impossible_values_are_refused_with_their_line() {
    let error = error_for("capacity = 4", "capacity = 0");
    assert_eq!(
        error,
        "scenarios/x.toml:14:12: lanes.capacity: must be at least 1 (got 0)"
    );
    let error = error_for("keys = [1, 4]", "keys = [4, 1]");
    assert_eq!(
        error,
        "scenarios/x.toml:7:8: lanes.keys: range [4, 1] has min > max"
    );
    let error = error_for(
        "policy = \"reject\"",
        "policy = \"reject\"\nidle_ttl = \"0ms\"",
    );
    assert_eq!(
        error,
        "scenarios/x.toml:16:12: lanes.idle_ttl: must be greater than zero"
    );
    let error = error_for("gap = \"0ms\"", "gap = \"-3ms\"");
    assert!(
        error.contains("lanes.gap") && error.contains("must not be negative"),
        "{error}"
    );
}

#[test]
fn an_unknown_enum_value_is_refused() {
    let error = error_for("policy = \"reject\"", "policy = \"drop\"");
    assert!(
        error.contains("lanes.policy") && error.contains("unknown variant `drop`"),
        "{error}"
    );
}

#[test]
fn a_contract_of_the_other_world_is_refused() {
    let error = error_for("checks = [\"L1\"]", "checks = [\"DC-1\"]");
    assert_eq!(
        error,
        "scenarios/x.toml:4:11: checks[0]: DC-1 is not a contract of the lanes world"
    );
}

const SENDER: &str = r#"
description = "ok"
world = "sender"
checks = ["DC-1"]

[sender]
peers = 2
data_frames = 10
links = 2
frame_bytes = 16
gap = "1ms"

[[sender.fault]]
kind = "wedge"
peer = 1
at = "1s"
"#;

fn sender_error(from: &str, to: &str) -> String {
    let source = SENDER.replacen(from, to, 1);
    Scenario::parse(Path::new("s.toml"), &source)
        .expect_err("must be refused")
        .to_string()
}

#[test]
fn sender_files_refuse_missing_peers_unknown_faults_and_zero_deadlines() {
    assert!(Scenario::parse(Path::new("s.toml"), SENDER).is_ok());
    let error = sender_error("peer = 1", "peer = 2");
    assert_eq!(
        error,
        "s.toml:15:8: sender.fault[0].peer: peer index 2 does not exist: there may be only 2 peers"
    );
    let error = sender_error("peers = 2", "peers = 65");
    assert_eq!(
        error,
        "s.toml:7:9: sender.peers: more peers than the simulated network has addresses (64)"
    );
    let error = sender_error("kind = \"wedge\"", "kind = \"meteor\"");
    assert!(
        error.starts_with("s.toml:14:") && error.contains("unknown variant `meteor`"),
        "{error}"
    );
    let error = sender_error("gap = \"1ms\"", "gap = \"1ms\"\nwrite_timeout = \"0s\"");
    assert_eq!(
        error,
        "s.toml:12:17: sender.write_timeout: must be greater than zero"
    );
    let error = sender_error("kind = \"wedge\"", "kind = \"partition\"");
    assert_eq!(error, "s.toml:14:8: sender.fault[0].kind: this fault needs `for` (how long, or the read interval for slow)");
}

#[test]
fn only_an_oversize_frame_takes_a_split_and_only_a_known_one() {
    let oversize = SENDER.replacen("kind = \"wedge\"", "kind = \"oversize_frame\"", 1);
    for split in ["payload", "control", "both"] {
        let source = oversize.replacen(
            "at = \"1s\"",
            &format!("at = \"1s\"\nsplit = \"{split}\""),
            1,
        );
        assert!(
            Scenario::parse(Path::new("s.toml"), &source).is_ok(),
            "{split}"
        );
    }
    let error = sender_error("at = \"1s\"", "at = \"1s\"\nsplit = \"control\"");
    assert_eq!(
        error,
        "s.toml:17:9: sender.fault[0].split: only an oversize_frame fault takes `split`"
    );
    let source = oversize.replacen("at = \"1s\"", "at = \"1s\"\nsplit = \"sideways\"", 1);
    let error = Scenario::parse(Path::new("s.toml"), &source)
        .expect_err("an unknown split")
        .to_string();
    assert!(
        error.starts_with("s.toml:17:") && error.contains("unknown variant `sideways`"),
        "{error}"
    );
}

#[test]
fn every_hostile_file_in_the_corpus_is_refused_without_a_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let result = std::panic::catch_unwind(|| Scenario::load(&path));
        let error = result
            .expect("loading panicked")
            .expect_err("a hostile file was accepted");
        assert!(
            error.to_string().starts_with(&path.display().to_string()),
            "{error}"
        );
        count += 1;
    }
    assert!(count >= 5, "the hostile corpus is missing");
}

#[test]
fn a_contract_no_simulated_world_can_decide_is_refused_at_its_line() {
    let error = sender_error("checks = [\"DC-1\"]", "checks = [\"DC-1\", \"S1\"]");
    assert!(
        error.starts_with("s.toml:4:19: checks[1]: S1 (enqueue never blocks) is decided by"),
        "{error}"
    );
    let error = sender_error("checks = [\"DC-1\"]", "checks = [\"S5\"]");
    assert!(
        error.starts_with(
            "s.toml:4:11: checks[0]: S5 (safe runtime drop) is decided by the real-mode tests"
        ),
        "{error}"
    );
    let error = sender_error("checks = [\"DC-1\"]", "checks = [\"S8\"]");
    assert_eq!(
        error,
        "s.toml:4:11: checks[0]: S8 (redial liveness) needs sender.redial_after: a world that never redials cannot fail it"
    );
    let redialing = SENDER
        .replacen("checks = [\"DC-1\"]", "checks = [\"S8\"]", 1)
        .replacen("gap = \"1ms\"", "gap = \"1ms\"\nredial_after = \"5ms\"", 1);
    assert!(Scenario::parse(Path::new("s.toml"), &redialing).is_ok());
}

#[test]
fn reaches_name_known_marks_of_the_scenarios_world_with_a_sane_share() {
    let with = |reaches: &str| {
        let source = SENDER.replacen(
            "checks = [\"DC-1\"]",
            &format!("checks = [\"DC-1\"]\nreaches = {reaches}"),
            1,
        );
        Scenario::parse(Path::new("s.toml"), &source)
    };
    let ok =
        with(r#"["redial_ok", "write_deadline_fired >= 25%", "preempted:drain.picked >= 100%"]"#)
            .expect("known marks load");
    assert_eq!(ok.reaches.len(), 3);
    assert_eq!(ok.reaches[1].required(64), 16);
    assert_eq!(ok.reaches[0].required(64), 1);
    let error = with(r#"["reap_decliend"]"#).unwrap_err().to_string();
    assert_eq!(
        error,
        "s.toml:5:12: reaches[0]: unknown coverage mark `reap_decliend` (`lanesim list` prints them all)"
    );
    let error = with(r#"["reap_declined"]"#).unwrap_err().to_string();
    assert!(
        error.ends_with("reaches[0]: `reap_declined` is not a mark the sender world can reach"),
        "{error}"
    );
    for bad in [
        r#"["redial_ok >= 0%"]"#,
        r#"["redial_ok >= 150%"]"#,
        r#"["redial_ok >= lots"]"#,
    ] {
        let error = with(bad).unwrap_err().to_string();
        assert!(error.starts_with("s.toml:5:12: reaches[0]:"), "{error}");
    }
}

/// What a scenario file says survives being written back: every shipped
/// scenario, serialized and parsed again, is the same scenario (the hunt
/// writes the cases it generates and shrinks this way).
#[test]
fn every_shipped_scenario_round_trips_through_toml() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|ext| ext != "toml") {
            continue;
        }
        let scenario = Scenario::load(&path).unwrap();
        let text = toml::to_string(&scenario.file).expect("serializes");
        let back = Scenario::parse(&path, &text).unwrap_or_else(|error| panic!("{error}\n{text}"));
        assert_eq!(back.file, scenario.file, "{}", path.display());
        count += 1;
    }
    assert!(count >= 21);
}

/// Values that once passed validation and then crashed a run or exhausted
/// memory (issue 10's list) are refused at their line, naming the key and
/// the bound.
#[test]
fn values_that_once_crashed_a_run_are_refused_with_their_bound() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    for (file, expected) in [
        (
            "huge_tcp_capacity.toml",
            "sender.tcp_capacity: at most 65536",
        ),
        ("huge_chaos.toml", "sender.chaos: at most 64"),
        ("billions_of_items.toml", "lanes.producers: at most 1000"),
        (
            "frame_over_the_cap.toml",
            "sender.frame_bytes: at most 16777216",
        ),
        ("microsecond_tick.toml", "sender.tick: at least 100us"),
        (
            "fault_after_budget.toml",
            "sender.fault[0].at: 20s is not before the run's budget (10s)",
        ),
        (
            "empty_chaos_kinds.toml",
            "sender.chaos_kinds: name at least one kind",
        ),
        ("mesh_microsecond_tick.toml", "mesh.tick: at least 1ms"),
        (
            "shutdown_after_budget.toml",
            ":12:15: sender.shutdown_at: 500s is not within the run's budget (120s)",
        ),
        (
            "mesh_heartbeat_under_latency.toml",
            ":10:13: mesh.heartbeat: at least 250ms",
        ),
        ("listed_twice.toml", ":3:23: checks[2]: L1 is listed twice"),
        (
            "endless_latency.toml",
            ":16:7: sender.fault[0].for: 5000s is not within the run's budget (120s)",
        ),
    ] {
        let error = Scenario::load(&dir.join(file)).unwrap_err().to_string();
        assert!(error.contains(expected), "{file}: {error}");
    }
}

/// Messages point at the problem: a missing field is named with its table,
/// a non-UTF-8 byte has its line, column and value.
#[test]
fn a_missing_field_and_a_non_utf8_byte_are_named_where_they_are() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let error = Scenario::load(&dir.join("missing_description.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        error.ends_with(":1:1: description: missing field `description`"),
        "{error}"
    );
    let error = Scenario::load(&dir.join("binary.toml"))
        .unwrap_err()
        .to_string();
    assert!(error.contains(":1:2: not UTF-8: byte 0xff"), "{error}");
    let error = sender_error("peers = 2\n", "").to_string();
    assert!(
        error.contains("sender.peers: missing field `peers`"),
        "{error}"
    );
}

/// Positions and keys come from the parser's spans: an error inside the
/// second `[[sender.fault]]` names that entry, a key written twice is
/// named with its table, a table written twice by its name.
#[test]
fn an_entry_of_an_array_of_tables_and_a_duplicate_key_are_named() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let error = Scenario::load(&dir.join("second_fault_bad_value.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(":20:6: sender.fault[1].at: bad duration \"soon\""),
        "{error}"
    );
    let error = Scenario::load(&dir.join("duplicate_key.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        error.ends_with(":9:1: lanes.keys: duplicate key"),
        "{error}"
    );
    let twice = format!("{GOOD}\n[lanes]\nkeys = 1\n");
    let error = Scenario::parse(Path::new("x.toml"), &twice)
        .unwrap_err()
        .to_string();
    assert!(error.ends_with(": lanes: duplicate key"), "{error}");
}

/// Ranged fault ends may draw the same node; the fault must still be
/// between two nodes (seed 8 of `a = b = [0, 2]` once drew a partition of
/// node 2 from itself, which did nothing).
#[test]
fn ranged_mesh_fault_ends_never_draw_the_same_node() {
    use lanesim_sims::scenario::{MeshFaultKind, Params};
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/mesh_partition_half_open.toml"),
    )
    .unwrap();
    assert!(text.contains("a = 1\nb = 2"));
    let text = text
        .replacen("a = 1\nb = 2", "a = [0, 2]\nb = [0, 2]", 1)
        .replacen("nodes = [3, 5]", "nodes = 3", 1);
    let scenario = Scenario::parse(Path::new("m.toml"), &text).unwrap();
    let mut collided = 0;
    for seed in 0..200 {
        let Params::Mesh(params) = scenario.sample(seed) else {
            panic!("a mesh scenario")
        };
        for fault in &params.faults {
            assert!(fault.a < 3 && fault.b < 3);
            if fault.kind != MeshFaultKind::Restart {
                assert_ne!(fault.a, fault.b, "seed {seed}: {fault:?}");
            }
            collided +=
                usize::from(fault.kind == MeshFaultKind::Partition && fault.b == (fault.a + 1) % 3);
        }
    }
    assert!(collided > 0);
}

/// A file far larger than any scenario (a log or a binary named .toml) is
/// refused before it is read into memory.
#[test]
fn a_file_larger_than_any_scenario_is_refused_unread() {
    let scratch = tempfile::tempdir().unwrap();
    let path = scratch.path().join("big.toml");
    std::fs::write(&path, vec![b'#'; 2 << 20]).unwrap();
    let error = Scenario::load(&path).unwrap_err().to_string();
    let _ = std::fs::remove_file(&path);
    assert!(
        error.ends_with(".toml: 2097152 bytes, larger than 1048576: not a scenario file"),
        "{error}"
    );
}

/// A mesh file's frame deadline has a floor (an honest frame's bytes may
/// cross the simulated network apart), and a trickle is held to the
/// deadline the file sets, not to the default.
#[test]
fn a_mesh_frame_deadline_is_bounded_and_holds_its_trickles_and_their_frames() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    for (file, expected) in [
        (
            "mesh_frame_timeout_under_latency.toml",
            ":10:17: mesh.frame_timeout: at least 250ms",
        ),
        (
            "mesh_trickle_under_its_deadline.toml",
            ":16:7: mesh.fault[0].for: a trickle must last more than 5204ms",
        ),
        (
            "mesh_trickle_frame_too_short.toml",
            ":16:9: mesh.fault[0].frame: a trickled frame needs at least 10 bytes",
        ),
        (
            "mesh_node_frame_too_long.toml",
            ":17:9: mesh.fault[0].frame: a trickled frame is at most a node frame's payload, 64 bytes (got 100)",
        ),
        (
            "mesh_descriptors_too_few.toml",
            ":10:15: mesh.descriptors: 72 to 1048576 (got 50)",
        ),
        (
            "mesh_frame_on_a_flood.toml",
            ":16:9: mesh.fault[0].frame: only a trickle fault takes `frame`",
        ),
        (
            "mesh_hello_on_a_spend.toml",
            ":16:9: mesh.fault[0].hello: only a flood fault takes `hello`",
        ),
        (
            "mesh_inbound_caps_without_descriptors.toml",
            ":10:16: mesh.inbound_caps: only with `descriptors`",
        ),
        (
            "mesh_inbound_caps_more_handshakes.toml",
            ":11:16: mesh.inbound_caps: `handshakes` (65) above `connections` (64)",
        ),
        (
            "mesh_inbound_caps_zero.toml",
            ":11:31: mesh.inbound_caps.handshakes: 1 to 1048576 (got 0)",
        ),
    ] {
        let error = Scenario::load(&dir.join(file)).unwrap_err().to_string();
        assert!(error.contains(expected), "{file}: {error}");
    }
}
