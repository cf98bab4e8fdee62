//! Where a subcommand writes what it makes: shrunk scenario files
//! (`hunt`, `shrink`), chased repros (`run --real`) and a hunt's
//! regressions file.
//!
//! Model. lanesim's own binary writes shrunk files to
//! `target/lanesim/shrunk` and keeps its hunts' regressions in
//! `proptest-regressions/hunt-WORLD.txt`, committed (CI replays them). A
//! user's runner is a test in their package: writing there litters the
//! package, and every test target of the package would share one
//! regressions file, so one target's hunt would replay another's
//! failures. So a user's runner writes under the target dir, in a
//! directory of its own named after its targets (`Targets::name`):
//! `TARGET/lanesim/NAME/{shrunk,chased,regressions/hunt-WORLD.txt}`. The
//! target dir is `$CARGO_TARGET_DIR` (relative: the invoking directory's,
//! as cargo reads it), else the one the running binary was built in (the
//! ancestor of the binary with cargo's `CACHEDIR.TAG`), else `target`.
//! `--out` and `--regressions` still say otherwise. Pinned by
//! `a_users_hunt_writes_under_the_target_dir_keyed_by_its_targets`.

use std::path::{Path, PathBuf};

use crate::hunt::strategy::HuntWorld;
use crate::targets::Subject;

/// Where lanesim's own binary writes shrunk files.
pub(super) const SHRUNK: &str = "target/lanesim/shrunk";
/// Where lanesim's own binary writes the simulated repros it chased.
const CHASED: &str = "target/lanesim/chased";

/// The directory of a user's runner's output: `TARGET/lanesim/NAME`.
fn own(subject: &Subject) -> PathBuf {
    own_under(&target_dir(), subject.name())
}

fn own_under(target: &Path, name: &str) -> PathBuf {
    // The targets' name as one path component.
    let key: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let key = if key.is_empty() || key.chars().all(|c| c == '.') {
        "_".to_string()
    } else {
        key
    };
    target.join("lanesim").join(key)
}

/// The target dir (see the module's model).
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        return crate::workdir::resolve(Path::new(&dir));
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.ancestors()
                .skip(1)
                .find(|dir| dir.join("CACHEDIR.TAG").is_file())
                .map(Path::to_path_buf)
        })
        .unwrap_or_else(|| PathBuf::from("target"))
}

/// Where `hunt` and `shrink` write shrunk files by default.
pub(super) fn shrunk(subject: &Subject) -> PathBuf {
    if subject.is_builtin() {
        PathBuf::from(SHRUNK)
    } else {
        own(subject).join("shrunk")
    }
}

/// Where `run --real` writes the simulated repros it chased.
pub(super) fn chased(subject: &Subject) -> PathBuf {
    if subject.is_builtin() {
        PathBuf::from(CHASED)
    } else {
        own(subject).join("chased")
    }
}

/// A hunt's default regressions file: lanesim's committed one, or the
/// user's runner's own under the target dir.
pub(super) fn regressions(subject: &Subject, world: HuntWorld) -> PathBuf {
    let file = format!("hunt-{}.txt", world.name());
    if subject.is_builtin() {
        Path::new("proptest-regressions").join(file)
    } else {
        own(subject).join("regressions").join(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two runners' output never meets: each has a directory under the
    /// target dir named after its targets, a name no path can escape.
    #[test]
    fn a_users_hunt_writes_under_the_target_dir_keyed_by_its_targets() {
        let target = Path::new("/ws/target");
        assert_eq!(
            own_under(target, "keyed-queue"),
            Path::new("/ws/target/lanesim/keyed-queue")
        );
        assert_ne!(
            own_under(target, "keyed-queue"),
            own_under(target, "select-lanes")
        );
        assert_eq!(
            own_under(target, "../../etc"),
            Path::new("/ws/target/lanesim/.._.._etc")
        );
        assert_eq!(own_under(target, ".."), Path::new("/ws/target/lanesim/_"));
        // lanesim's own keeps its committed regressions.
        assert_eq!(
            regressions(&Subject::default(), HuntWorld::Sender),
            Path::new("proptest-regressions/hunt-sender.txt")
        );
        assert_eq!(shrunk(&Subject::default()), Path::new(SHRUNK));
        // A user's runner: under the target dir this binary was built in
        // (or $CARGO_TARGET_DIR), in its targets' directory.
        struct Mine;
        impl lanesim_target::Targets for Mine {
            fn name(&self) -> &str {
                "mine"
            }
        }
        let user = Subject::user(std::sync::Arc::new(Mine));
        let file = regressions(&user, HuntWorld::Lanes);
        assert!(
            file.ends_with("lanesim/mine/regressions/hunt-lanes.txt"),
            "{}",
            file.display()
        );
        assert!(file.starts_with(target_dir()), "{}", file.display());
        assert!(shrunk(&user).ends_with("lanesim/mine/shrunk"));
    }
}
