//! The directory the user invoked the runner from, which is not always the
//! process's: user-given relative paths are resolved against it, and paths
//! are shown relative to it.
//!
//! Model. `cargo test` runs a test binary with the *package's* directory as
//! its working directory, so `cargo test --test lanesim -- run
//! my/scenarios` typed in a workspace root would look for the scenarios in
//! the package. Cargo says nothing of where it was invoked, but it sets the
//! process's directory without touching `PWD`, which the shell set to its
//! own directory and every child inherits (checked on cargo 1.9x: a test
//! run from `ws/sub` has `PWD=ws/sub`, cwd and `CARGO_MANIFEST_DIR` the
//! package). So the invoking directory is `PWD` when all of this holds:
//!
//! - cargo ran the binary: `CARGO` and `CARGO_MANIFEST_DIR` are set;
//! - cargo moved it: the working directory is `CARGO_MANIFEST_DIR`;
//! - `PWD` is an absolute directory other than the working directory.
//!
//! Otherwise (lanesim's binary, `cargo run`, which keeps the shell's
//! directory, a test binary run by hand, a shell that sets no `PWD`) it is
//! unknown and paths are the working directory's, as always. Pinned by
//! `the_invoking_directory_is_pwd_only_where_cargo_moved_the_process`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::scenario::shipped;

/// Where cargo was invoked from, when cargo moved the process elsewhere
/// (see the module's model).
#[must_use]
pub fn invoked_from() -> Option<&'static Path> {
    static FROM: OnceLock<Option<PathBuf>> = OnceLock::new();
    FROM.get_or_init(|| {
        let var = |name: &str| std::env::var_os(name).map(PathBuf::from);
        std::env::var_os("CARGO")?;
        let cwd = std::env::current_dir().ok()?;
        decide(
            &cwd,
            var("PWD").as_deref(),
            var("CARGO_MANIFEST_DIR").as_deref(),
        )
    })
    .as_deref()
}

/// The invoking directory, given the working directory, `PWD` and
/// `CARGO_MANIFEST_DIR`.
fn decide(cwd: &Path, pwd: Option<&Path>, manifest: Option<&Path>) -> Option<PathBuf> {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let (pwd, manifest) = (pwd?, manifest?);
    if !same(cwd, manifest) || !pwd.is_absolute() || !pwd.is_dir() || same(pwd, cwd) {
        return None;
    }
    Some(pwd.to_path_buf())
}

/// A user-given path, resolved: a relative one against the invoking
/// directory where it is known, else as it is (the working directory's);
/// `@shipped` paths as they are.
#[must_use]
pub fn resolve(path: &Path) -> PathBuf {
    resolve_from(invoked_from(), path)
}

fn resolve_from(from: Option<&Path>, path: &Path) -> PathBuf {
    match from {
        Some(from) if path.is_relative() && !path.starts_with(shipped::PREFIX) => from.join(path),
        _ => path.to_path_buf(),
    }
}

/// A path as the user's shell names it: relative to the invoking
/// directory when it lies under it, else as it is.
#[must_use]
pub fn shown(path: &str) -> String {
    shown_from(invoked_from(), path)
}

fn shown_from(from: Option<&Path>, path: &str) -> String {
    from.and_then(|from| Path::new(path).strip_prefix(from).ok())
        .map_or_else(|| path.to_string(), |rest| rest.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo test` from a workspace root: the process is in the package,
    /// `PWD` is the root, and the root is where the user is. Anywhere else
    /// (not moved by cargo, no `PWD`, `PWD` the working directory or no
    /// directory) it is unknown.
    #[test]
    fn the_invoking_directory_is_pwd_only_where_cargo_moved_the_process() {
        let root = tempfile::tempdir().unwrap();
        let ws = root.path();
        let package = ws.join("pkg");
        std::fs::create_dir(&package).unwrap();
        assert_eq!(
            decide(&package, Some(ws), Some(&package)),
            Some(ws.to_path_buf())
        );
        // `cargo run` keeps the shell's directory: not moved.
        assert_eq!(decide(ws, Some(ws), Some(&package)), None);
        // Run from the package itself.
        assert_eq!(decide(&package, Some(&package), Some(&package)), None);
        // No PWD, no manifest, a PWD that is not a directory or relative.
        assert_eq!(decide(&package, None, Some(&package)), None);
        assert_eq!(decide(&package, Some(ws), None), None);
        assert_eq!(
            decide(&package, Some(&ws.join("gone")), Some(&package)),
            None
        );
        assert_eq!(
            decide(&package, Some(Path::new("rel")), Some(&package)),
            None
        );
    }

    /// Relative paths join the invoking directory, absolute and `@shipped`
    /// ones stay; a path under it is shown relative to it.
    #[test]
    fn relative_paths_resolve_against_the_invoking_directory() {
        let from = Path::new("/ws");
        assert_eq!(
            resolve_from(Some(from), Path::new("pkg/scenarios")),
            Path::new("/ws/pkg/scenarios")
        );
        assert_eq!(
            resolve_from(Some(from), Path::new("/abs/a.toml")),
            Path::new("/abs/a.toml")
        );
        assert_eq!(
            resolve_from(Some(from), Path::new("@shipped/lanes_order.toml")),
            Path::new("@shipped/lanes_order.toml")
        );
        assert_eq!(
            resolve_from(None, Path::new("scenarios")),
            Path::new("scenarios")
        );
        assert_eq!(shown_from(Some(from), "/ws/pkg/a.toml"), "pkg/a.toml");
        assert_eq!(shown_from(Some(from), "/else/a.toml"), "/else/a.toml");
        assert_eq!(shown_from(None, "/ws/pkg/a.toml"), "/ws/pkg/a.toml");
    }
}
