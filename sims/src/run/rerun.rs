//! The command that runs this binary again, as a person types it: what a
//! repro line starts with ([`super::Repro`]).
//!
//! Model. A binary knows its own path, but a user's runner is a cargo test
//! target whose binary is `target/release/deps/lanesim-1a2b…`: a name
//! that dies with `cargo clean` and says nothing of the features it was
//! built with. So the runner says how it is run ([`Rerun`]), and the
//! profile is read from where the binary lies ([`Profile`]):
//!
//! - lanesim's own binary: `cargo run [--release] [--features
//!   planted-bugs] --`; people are shown the binary itself
//!   (`target/release/lanesim replay …`, as the README shows);
//! - a cargo test target (`lanesim_sims::main!` in a `harness = false`
//!   test): `cargo test -p PKG [--release] --test NAME [--features …] --`,
//!   and that is what people are shown. What the `main!` expansion knows
//!   at compile time is carried, nothing more: the package
//!   (`CARGO_PKG_NAME`), the test's name (`CARGO_CRATE_NAME`, with the
//!   source file's name when that is the same name with `-` for `_`, since
//!   a crate name has no `-` and `--test` wants the target's), and the
//!   features the user listed in `main!(…, features = ["…"])` that are on
//!   (`cfg!` at the expansion site: no macro can list a crate's features);
//! - a binary target with `main!`: `cargo run -p PKG [--release] --bin
//!   NAME [--features …] --`;
//! - a command the runner was given (`Runner::command`), as given.
//!
//! Pinned by `a_cargo_test_target_reruns_as_cargo_test_with_its_profile_and_features`.

use std::path::Path;

/// How this binary is run again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rerun {
    /// lanesim's own binary, with the planted-bugs feature or without.
    Lanesim {
        /// Built with `--features planted-bugs` (a bug was planted).
        planted: bool,
    },
    /// A cargo test target.
    CargoTest {
        /// Its package.
        package: String,
        /// Its name, as `--test` takes it.
        test: String,
        /// The features listed to `main!` that this build has on.
        features: Vec<String>,
    },
    /// A cargo binary target.
    CargoBin {
        /// Its package.
        package: String,
        /// Its name, as `--bin` takes it.
        bin: String,
        /// The features listed to `main!` that this build has on.
        features: Vec<String>,
    },
    /// A command given as it is (`Runner::command`).
    Given(String),
}

impl Rerun {
    /// A cargo test target of `package`, compiled as crate `crate_name`
    /// from the source file `file` (the `main!` expansion's `file!()`):
    /// its target name is the file's (or, for `tests/NAME/main.rs`, its
    /// directory's) when that is the crate name with `-` for `_`.
    #[must_use]
    pub fn cargo_test(package: &str, crate_name: &str, file: &str, features: &[&str]) -> Self {
        let file = Path::new(file);
        let names = [file.file_stem(), file.parent().and_then(Path::file_name)];
        let test = names
            .into_iter()
            .flatten()
            .filter_map(|name| name.to_str())
            .find(|name| name.replace('-', "_") == crate_name)
            .unwrap_or(crate_name);
        Self::CargoTest {
            package: package.into(),
            test: test.into(),
            features: features.iter().map(|f| (*f).to_string()).collect(),
        }
    }

    /// Whether people are shown this command rather than the binary's
    /// path (everything but lanesim's own binary).
    #[must_use]
    pub fn shown(&self) -> bool {
        !matches!(self, Self::Lanesim { .. })
    }

    /// The words a repro starts with, up to and including `--` (a given
    /// command is one word, as given), for a binary built with `profile`
    /// (unknown: no profile flag). Shell words already: printed unquoted.
    #[must_use]
    pub fn words(&self, profile: Option<&Profile>) -> Vec<String> {
        let profile: Vec<String> = profile.map(Profile::flag).unwrap_or_default();
        let features = |features: &[String]| -> Vec<String> {
            if features.is_empty() {
                Vec::new()
            } else {
                vec!["--features".into(), features.join(",")]
            }
        };
        let mut words: Vec<String> = match self {
            Self::Given(command) => return vec![command.clone()],
            Self::Lanesim { planted } => {
                let mut words = vec!["cargo".into(), "run".into()];
                words.extend(profile);
                if *planted {
                    words.extend(features(&["planted-bugs".into()]));
                }
                words
            }
            Self::CargoTest {
                package,
                test,
                features: listed,
            } => {
                let mut words = vec!["cargo".into(), "test".into(), "-p".into(), package.clone()];
                words.extend(profile);
                words.extend(["--test".into(), test.clone()]);
                words.extend(features(listed));
                words
            }
            Self::CargoBin {
                package,
                bin,
                features: listed,
            } => {
                let mut words = vec!["cargo".into(), "run".into(), "-p".into(), package.clone()];
                words.extend(profile);
                words.extend(["--bin".into(), bin.clone()]);
                words.extend(features(listed));
                words
            }
        };
        words.push("--".into());
        words
    }
}

/// The cargo profile a binary was built with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Profile {
    /// `dev` (and `test`): `target/debug`, no flag.
    Dev,
    /// `release` (and `bench`): `target/release`, `--release`.
    Release,
    /// A custom profile: `target/NAME`, `--profile NAME`.
    Named(String),
}

impl Profile {
    /// The profile of the binary at `exe`, from the directory cargo put it
    /// in (`target/PROFILE/NAME` or `target/PROFILE/deps/NAME-HASH`, under
    /// a target triple or not); `None` for a binary not in a target dir.
    #[must_use]
    pub fn of(exe: &Path) -> Option<Self> {
        let mut dir = exe.parent()?;
        if dir.file_name()? == "deps" {
            dir = dir.parent()?;
        }
        let name = dir.file_name()?.to_str()?;
        // Cargo writes CACHEDIR.TAG at the target dir's root: the profile
        // directory is right under it, or under a target triple under it.
        let root = dir.parent()?;
        if !(root.join("CACHEDIR.TAG").is_file()
            || root
                .parent()
                .is_some_and(|up| up.join("CACHEDIR.TAG").is_file()))
        {
            return None;
        }
        Some(match name {
            "debug" => Self::Dev,
            "release" => Self::Release,
            other => Self::Named(other.to_string()),
        })
    }

    /// The profile of the binary running now.
    #[must_use]
    pub fn running() -> Option<Self> {
        std::env::current_exe().ok().as_deref().and_then(Self::of)
    }

    /// The flag that asks cargo for it.
    #[must_use]
    pub fn flag(&self) -> Vec<String> {
        match self {
            Self::Dev => Vec::new(),
            Self::Release => vec!["--release".into()],
            Self::Named(name) => vec!["--profile".into(), name.clone()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A harness-less test reruns as `cargo test` of its package and
    /// target, with the profile its binary was built with and the listed
    /// features that are on; lanesim's own binary as `cargo run`.
    #[test]
    fn a_cargo_test_target_reruns_as_cargo_test_with_its_profile_and_features() {
        let test = Rerun::cargo_test("my-crate", "lanesim", "tests/lanesim.rs", &["slow"]);
        assert_eq!(
            test.words(Some(&Profile::Release)).join(" "),
            "cargo test -p my-crate --release --test lanesim --features slow --"
        );
        assert_eq!(
            Rerun::cargo_test("my-crate", "lanesim", "tests/lanesim.rs", &[])
                .words(Some(&Profile::Dev))
                .join(" "),
            "cargo test -p my-crate --test lanesim --"
        );
        let lanesim = Rerun::Lanesim { planted: true };
        assert_eq!(
            lanesim.words(Some(&Profile::Release)).join(" "),
            "cargo run --release --features planted-bugs --"
        );
        assert!(test.shown() && !lanesim.shown());
    }

    /// `--test` takes the target's name: a file `my-sim.rs` compiles to the
    /// crate `my_sim`, and `tests/my-sim/main.rs` too.
    #[test]
    fn a_test_named_with_a_dash_reruns_by_its_target_name() {
        for file in ["tests/my-sim.rs", "tests/my-sim/main.rs"] {
            assert_eq!(
                Rerun::cargo_test("p", "my_sim", file, &[]),
                Rerun::CargoTest {
                    package: "p".into(),
                    test: "my-sim".into(),
                    features: Vec::new(),
                },
                "{file}"
            );
        }
        // A file named otherwise: the crate name is all there is.
        assert!(matches!(
            Rerun::cargo_test("p", "sim", "tests/other.rs", &[]),
            Rerun::CargoTest { test, .. } if test == "sim"
        ));
    }

    /// The profile is the directory cargo put the binary in, under the
    /// target dir (marked by its CACHEDIR.TAG), a triple or not.
    #[test]
    fn the_profile_is_read_from_where_cargo_put_the_binary() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("CACHEDIR.TAG"), "").unwrap();
        let at = |rest: &str| Profile::of(&root.path().join(rest));
        assert_eq!(at("release/deps/lanesim-1a2b"), Some(Profile::Release));
        assert_eq!(at("debug/lanesim"), Some(Profile::Dev));
        assert_eq!(
            at("x86_64-unknown-linux-gnu/fast/deps/lanesim-1a2b"),
            Some(Profile::Named("fast".into()))
        );
        assert_eq!(Profile::of(Path::new("/usr/bin/lanesim")), None);
    }
}
