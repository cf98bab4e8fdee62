//! Generated and shrunk cases are scenario files like any other: an exact
//! file pins one run's parameters, and written out and read back it runs
//! the very same run.

use std::path::Path;

use lanesim::planted::Planted;
use lanesim_sims::run::execute;
use lanesim_sims::scenario::Scenario;

fn shipped() -> Vec<Scenario> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    paths.sort();
    paths.iter().map(|p| Scenario::load(p).unwrap()).collect()
}

/// Any run of any scenario, pinned as an exact file, written as TOML and
/// read back, samples to the same parameters under any seed and, on its own
/// seed, replays the same event log.
#[test]
fn an_exact_file_pins_a_runs_parameters_and_replays_the_run() {
    for scenario in shipped() {
        for seed in [0, 5] {
            let params = scenario.sample(seed);
            let file = params.to_file("pinned".into(), seed, scenario.budget());
            let text = toml::to_string(&file).expect("serializes");
            let path = Path::new("pinned.toml");
            let pinned = Scenario::parse(path, &text)
                .unwrap_or_else(|error| panic!("{}: {error}\n{text}", scenario.name));
            assert_eq!(pinned.sample(seed), params, "{} seed {seed}", scenario.name);
            assert_eq!(
                pinned.sample(seed + 1),
                params,
                "{}: exact files ignore the seed",
                scenario.name
            );
            let original = execute(&scenario, seed, Planted::none());
            let replayed = execute(&pinned, seed, Planted::none());
            assert_eq!(
                replayed.hash, original.hash,
                "{} seed {seed}: the pinned run differs",
                scenario.name
            );
        }
    }
}
