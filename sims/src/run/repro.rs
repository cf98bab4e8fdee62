//! How a failure is reproduced: the replay of its seed by the binary that
//! ran it, as the words a shell passes (`argv`, for machines), the same
//! with the cargo command that rebuilds that binary first (`cargo`,
//! `run::rerun`), and the one line people are shown (`display`): the
//! binary for lanesim's own, the cargo command for a user's runner (a
//! cargo test target's binary is named by a hash, and `cargo clean`
//! removes it). In the cargo command a scenario's path is as the user's
//! shell names it (`workdir::shown`); in `argv` as the run opened it.

use serde::{Deserialize, Serialize};

use super::Profile;
use crate::targets::Subject;

/// A command that reproduces a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repro {
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// The line people are shown: `argv` as one shell line (words quoted
    /// where a shell would split or expand them), or for a user's runner
    /// `cargo`.
    pub display: String,
    /// The same replay through cargo, which rebuilds the binary first.
    pub cargo: String,
}

impl Repro {
    /// Replays seed `seed` of the scenario at `path`, as `subject` ran it.
    #[must_use]
    pub fn replay(path: &str, seed: u64, subject: &Subject) -> Self {
        Self::of(path, seed, subject, &[])
    }

    /// The same replay, writing the run as a trace-event file in virtual
    /// time (`trace.json`, for ui.perfetto.dev).
    #[must_use]
    pub fn trace(path: &str, seed: u64, subject: &Subject) -> Self {
        Self::of(path, seed, subject, &["--trace", "trace.json"])
    }

    fn of(path: &str, seed: u64, subject: &Subject, extra: &[&str]) -> Self {
        let mut args: Vec<String> = vec![
            "replay".into(),
            path.into(),
            "--seed".into(),
            seed.to_string(),
        ];
        if let Some(bug) = subject.planted().selected() {
            args.extend(["--bug".into(), bug.name().into()]);
        }
        args.extend(extra.iter().map(|a| (*a).to_string()));
        let words = |args: &[String]| args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ");
        // The cargo command is typed in the user's shell: the path as it
        // names it (a user's runner resolved it against that directory).
        let mut typed = args.clone();
        typed[1] = crate::workdir::shown(path);
        let rerun = subject.rerun();
        let cargo = format!(
            "{} {}",
            rerun.words(Profile::running().as_ref()).join(" "),
            words(&typed)
        );
        let mut argv = vec![this_program()];
        argv.extend(args);
        Self {
            // A user's runner is a cargo test target whose binary's name
            // is a hash: people are shown the cargo command
            // (`a_user_runners_repro_is_its_cargo_test_command`).
            display: if rerun.shown() {
                cargo.clone()
            } else {
                words(&argv)
            },
            argv,
            cargo,
        }
    }
}

impl std::fmt::Display for Repro {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display)
    }
}

/// The binary running now, as a shell in the working directory names it:
/// relative when it lies under that directory (`target/release/lanesim`).
fn this_program() -> String {
    let Ok(exe) = std::env::current_exe() else {
        return "lanesim".into();
    };
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| exe.strip_prefix(cwd).ok().map(std::path::Path::to_path_buf));
    relative.unwrap_or(exe).display().to_string()
}

/// `word` as a POSIX shell reads it back: bare when it holds nothing a
/// shell would split or expand, else in single quotes.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./@:=+,%".contains(&b));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Rerun;

    struct Mine;

    impl lanesim_target::Targets for Mine {
        fn name(&self) -> &str {
            "mine"
        }
    }

    /// A user's runner shows people the cargo command that rebuilds and
    /// runs it (its binary is named by a hash), with the profile this
    /// binary was built with and the features `main!` carried; machines
    /// still get the binary as argv.
    #[test]
    fn a_user_runners_repro_is_its_cargo_test_command() {
        let subject = Subject::user(std::sync::Arc::new(Mine)).with_rerun(Rerun::cargo_test(
            "my-crate",
            "lanesim",
            "tests/lanesim.rs",
            &["slow"],
        ));
        let repro = Repro::replay("my scenarios/a.toml", 3, &subject);
        let profile = match Profile::running() {
            Some(Profile::Release) => " --release",
            _ => "",
        };
        assert_eq!(
            repro.display,
            format!(
                "cargo test -p my-crate{profile} --test lanesim --features slow -- replay 'my scenarios/a.toml' --seed 3"
            )
        );
        assert_eq!(repro.cargo, repro.display);
        assert_eq!(
            repro.argv[1..],
            ["replay", "my scenarios/a.toml", "--seed", "3"]
        );
        assert!(std::env::current_exe().unwrap().ends_with(&repro.argv[0]));
    }

    #[test]
    fn a_word_a_shell_would_split_or_expand_is_quoted() {
        assert_eq!(
            quote("scenarios/lanes_order.toml"),
            "scenarios/lanes_order.toml"
        );
        assert_eq!(
            quote("@shipped/sender_fifo.toml"),
            "@shipped/sender_fifo.toml"
        );
        assert_eq!(quote("my scenarios/a.toml"), "'my scenarios/a.toml'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$HOME"), "'$HOME'");
        assert_eq!(quote(""), "''");
    }
}
