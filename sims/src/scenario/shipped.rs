//! The scenarios lanesim ships, compiled into the runner: a user's crate
//! runs them with no copy of this repository. The path `@shipped` names
//! them all (`run @shipped`), `@shipped/regressions` the found failures
//! kept as regressions, and `@shipped/<file>` one of them (`replay
//! @shipped/lanes_order.toml --seed 3`). The list is pinned to the
//! directory by `the_shipped_list_is_the_scenarios_directory`.

use std::path::{Path, PathBuf};

/// The prefix that names a shipped scenario.
pub const PREFIX: &str = "@shipped";

macro_rules! shipped {
    ($($file:literal,)*) => {
        &[$(($file, include_str!(concat!("../../../scenarios/", $file))),)*]
    };
}

/// Every shipped file (its path under `scenarios/`) and its text.
pub const FILES: &[(&str, &str)] = shipped![
    "lanes_capacity_flood.toml",
    "lanes_drop_midflight.toml",
    "lanes_flooded_key.toml",
    "lanes_long_handler.toml",
    "lanes_order.toml",
    "lanes_panics.toml",
    "lanes_raw_panics.toml",
    "lanes_reap_race.toml",
    "lanes_select_idle.toml",
    "lanes_stuck_key.toml",
    "mesh_accept_faults.toml",
    "mesh_chaos.toml",
    "mesh_chaos_explored.toml",
    "mesh_claim_own_name.toml",
    "mesh_cross_dial.toml",
    "mesh_flood.toml",
    "mesh_flood_hello.toml",
    "mesh_flood_many.toml",
    "mesh_flood_small_caps.toml",
    "mesh_flood_tight_descriptors.toml",
    "mesh_impostor.toml",
    "mesh_insider.toml",
    "mesh_partition_half_open.toml",
    "mesh_quiet_links.toml",
    "mesh_many_nodes.toml",
    "mesh_misdial.toml",
    "mesh_restart.toml",
    "mesh_spender.toml",
    "mesh_spender_hello.toml",
    "mesh_squatter.toml",
    "mesh_stale_hello.toml",
    "mesh_standby_disconnect.toml",
    "mesh_trickle.toml",
    "mesh_trickle_many.toml",
    "regressions/deadline_below_link_transfer.toml",
    "regressions/fin_into_full_window.toml",
    "regressions/kill_inside_partition.toml",
    "regressions/max_frame_after_close_resets.toml",
    "regressions/max_frame_reset_discards_unread.toml",
    "regressions/mesh_claim_query_metered_as_held.toml",
    "regressions/mesh_claim_racing_a_disconnect.toml",
    "regressions/mesh_cross_dial_under_latency.toml",
    "regressions/mesh_cross_dial_while_crashed.toml",
    "regressions/mesh_flood_across_a_restart.toml",
    "regressions/mesh_flood_under_held_tasks.toml",
    "regressions/mesh_hello_slower_than_the_connect_timeout.toml",
    "regressions/mesh_insider_through_a_half_open_pair.toml",
    "regressions/mesh_squat_after_a_restart.toml",
    "regressions/partition_at_registration.toml",
    "regressions/partition_before_registration.toml",
    "sender_chaos.toml",
    "sender_control_flood_healthy.toml",
    "sender_control_flood_wedged.toml",
    "sender_crash_bounce.toml",
    "sender_dead_peer.toml",
    "sender_explore_contention.toml",
    "sender_down_at_registration.toml",
    "sender_fifo.toml",
    "sender_heartbeat_contention.toml",
    "sender_hostile_peer.toml",
    "sender_keepalive_wedged.toml",
    "sender_late_down.toml",
    "sender_latency_blast_radius.toml",
    "sender_partition_heal.toml",
    "sender_redial_pinning.toml",
    "sender_shutdown_queued.toml",
    "sender_shutdown_race.toml",
    "sender_slow_peer.toml",
    "sender_wedge_blast_radius.toml",
    "sender_wedged_peer.toml",
];

/// The text of the shipped scenario `path` names (`@shipped/<file>`).
#[must_use]
pub fn text(path: &Path) -> Option<&'static str> {
    let file = path.to_str()?.strip_prefix(PREFIX)?.strip_prefix('/')?;
    FILES
        .iter()
        .find(|(name, _)| *name == file)
        .map(|(_, text)| *text)
}

/// The shipped scenarios under `path` (`@shipped` or a folder of it), in
/// path order; `None` when `path` does not start with [`PREFIX`].
#[must_use]
pub fn under(path: &Path) -> Option<Vec<PathBuf>> {
    let rest = path.to_str()?.strip_prefix(PREFIX)?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let folder = rest.trim_start_matches('/').trim_end_matches('/');
    Some(
        FILES
            .iter()
            .filter(|(name, _)| {
                folder.is_empty()
                    || *name == folder
                    || name
                        .strip_prefix(folder)
                        .is_some_and(|tail| tail.starts_with('/'))
            })
            .map(|(name, _)| PathBuf::from(format!("{PREFIX}/{name}")))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                listed(&path, &format!("{prefix}{name}/"), out);
            } else if name.ends_with(".toml") {
                out.push(format!("{prefix}{name}"));
            }
        }
    }

    /// A scenario added to the directory but not to the list (or the
    /// other way round) fails here, not in a user's crate.
    #[test]
    fn the_shipped_list_is_the_scenarios_directory() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let mut on_disk = Vec::new();
        listed(&dir, "", &mut on_disk);
        on_disk.sort();
        let mut shipped: Vec<String> = FILES.iter().map(|(n, _)| n.to_string()).collect();
        shipped.sort();
        assert_eq!(shipped, on_disk);
        for (name, text) in FILES {
            assert_eq!(
                *text,
                std::fs::read_to_string(dir.join(name)).unwrap(),
                "{name}"
            );
        }
    }

    #[test]
    fn shipped_paths_name_files_and_folders() {
        assert_eq!(under(Path::new("@shipped")).unwrap().len(), FILES.len());
        let regressions = under(Path::new("@shipped/regressions")).unwrap();
        assert!(!regressions.is_empty());
        assert!(regressions
            .iter()
            .all(|p| p.starts_with("@shipped/regressions/")));
        assert_eq!(
            under(Path::new("@shipped/lanes_order.toml")).unwrap(),
            [PathBuf::from("@shipped/lanes_order.toml")]
        );
        assert!(text(Path::new("@shipped/lanes_order.toml")).is_some());
        assert!(text(Path::new("@shipped/nope.toml")).is_none());
        assert!(under(Path::new("@shippedx")).is_none());
        assert!(under(Path::new("scenarios")).is_none());
    }
}
