//! The target API: lanesim's own components seen from outside only (no
//! lane lifecycle, no drain account, no counters, no table) are decided
//! where they can be (L5 on lanes inferred from the router's tasks), raise no false alarm there, and still have their
//! planted bugs caught by the contracts decided from outside.

use lanesim_sims::run::sweep::{sweep, Plan, Shard, Unwatched};
use lanesim_sims::scenario::{Contract, Scenario, SeedRange};
use lanesim_sims::targets::Subject;
use support::{shipped, sweep_whole};

mod support;

/// Seen from outside, every shipped scenario runs, what needs a report is
/// not decided (S2 and S4 without the drain's account; L5 is decided on the
/// lanes the world infers from the router's tasks), and everything else
/// passes on the same seeds lanesim's own components pass.
#[test]
fn outside_lanesim_passes_what_it_decides_on_every_shipped_scenario() {
    let scenarios = shipped();
    // Eight seeds in a release build (CI's planted-bug step runs every test
    // so), two in a debug one (the README's `cargo test`, where eight were
    // 38 s of the suite).
    let seeds = if cfg!(debug_assertions) { 2 } else { 8 };
    let report = sweep_whole(
        &scenarios,
        SeedRange::new(0, seeds - 1).unwrap(),
        Subject::default().outside(),
    );
    let mut undecided = std::collections::BTreeSet::new();
    for tally in &report.scenarios {
        assert_eq!(tally.refused, None, "{}", tally.scenario);
        for not in &tally.undecided {
            undecided.insert(not.what);
        }
        if let Some(failure) = tally.failures.first() {
            panic!(
                "{} seed {} ({:?}): {:?}",
                failure.scenario,
                failure.seed,
                failure.verdict,
                failure.violations.first()
            );
        }
        assert_eq!(tally.verdicts.pass, seeds, "{}", tally.scenario);
    }
    assert_eq!(
        undecided.into_iter().collect::<Vec<_>>(),
        [Contract::S2, Contract::S4]
    );
}

/// Seen from outside, each planted bug is still caught by a contract of
/// its catalogue entry, except where every such contract needs a report
/// the view lacks: then the bug must still fail runs some other way (the
/// missing write deadline stalls the drain: liveness).
#[cfg(feature = "planted-bugs")]
#[test]
fn outside_lanesim_still_has_its_planted_bugs_caught() {
    use lanesim::planted::Planted;
    use lanesim_sims::run::selftest::{catalogue_contracts, TURMOIL_LAYER};
    use lanesim_sims::run::{execute, Verdict};

    let scenarios = shipped();
    let mut lines = Vec::new();
    // #17 only lengthens a write's stall, to under twice its deadline: only
    // the drain's account can time it (S2), and from outside nothing else
    // fails.
    let invisible = [lanesim::planted::PlantedBug::DeadlineRestartsAfterLock];
    for bug in TURMOIL_LAYER
        .into_iter()
        .filter(|bug| !invisible.contains(bug))
    {
        let subject = Subject::lanesim(Planted::select(bug).unwrap()).outside();
        let contracts = catalogue_contracts(bug);
        let (mut caught, mut other, mut runs, mut decided) = (0, 0, 0, false);
        for scenario in scenarios
            .iter()
            .filter(|s| contracts.iter().any(|c| c.world() == s.file.world))
        {
            let decidable = subject.decidable(scenario);
            decided |= contracts
                .iter()
                .any(|&c| scenario.file.checks.contains(&c) && decidable.decides(c));
            for seed in 0..4 {
                runs += 1;
                let result = execute(scenario, seed, &subject);
                if result.verdict == Verdict::Violated
                    && result
                        .violations
                        .iter()
                        .any(|v| contracts.contains(&v.contract))
                {
                    caught += 1;
                } else if result.verdict != Verdict::Pass {
                    other += 1;
                }
            }
        }
        lines.push(format!(
            "{}: caught {caught}, failed otherwise {other}, of {runs} runs (decided: {decided})",
            bug.name()
        ));
        if decided {
            assert!(caught > 0, "{}", lines.last().unwrap());
        } else {
            assert!(other > 0, "{}", lines.last().unwrap());
        }
    }
    println!("{}", lines.join("\n"));
}

/// A target whose code draws from OS entropy (std's `RandomState`, seeded
/// per instance) does not replay: `audit` finds the first event where two
/// runs of one seed differ, and it is the route the draw decided (or the
/// lane that route made, which is logged first).
#[test]
fn audit_names_the_first_event_a_target_that_is_not_replayable_changes() {
    use std::hash::BuildHasher;
    use std::sync::Arc;

    use lanesim_sims::event::Event;
    use lanesim_sims::run::audit;
    use lanesim_sims::targets::lanesim::lanes::LanesimLanes;
    use lanesim_target::lanes::{Item, Lanes, LanesCapabilities, LanesSetup, LanesTarget};
    use lanesim_target::Targets;

    struct Flaky(Box<dyn Lanes>);
    impl Lanes for Flaky {
        fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item> {
            // wall-clock: ok (OS entropy on purpose: the nondeterministic target audit must catch)
            let coin = std::collections::hash_map::RandomState::new().hash_one(item.seq);
            if coin % 5 == 0 {
                return Err(item);
            }
            self.0.route(item, capacity)
        }
    }
    struct Coin;
    impl LanesTarget for Coin {
        fn capabilities(&self) -> LanesCapabilities {
            LanesimLanes::default().capabilities()
        }
        fn build(&self, setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
            Ok(Box::new(Flaky(LanesimLanes::default().build(setup)?)))
        }
    }
    struct CoinTargets;
    impl Targets for CoinTargets {
        fn name(&self) -> &str {
            "coin"
        }
        fn lanes(&self) -> Option<&dyn LanesTarget> {
            Some(&Coin)
        }
    }

    let subject = Subject::user(Arc::new(CoinTargets));
    let scenario = shipped()
        .into_iter()
        .find(|s| s.name == "lanes_order")
        .unwrap();
    let divergences = audit(&scenario, SeedRange::new(0, 3).unwrap(), &subject);
    assert!(!divergences.is_empty());
    for d in &divergences {
        let first = d.first.as_ref().expect("both runs logged that far");
        assert!(
            matches!(
                first.event,
                Event::Routed { .. } | Event::LaneCreated { .. }
            ),
            "seed {}: {first}",
            d.seed
        );
        // audit names OS entropy among the likely sources, and once two
        // fresh processes differ too, alone or after a map's order.
        use lanesim_sims::run::diverge::{likely, Source};
        let hints = likely(d.first.as_ref(), d.second.as_ref(), false, None);
        assert!(
            hints.iter().any(|h| h.source == Source::Entropy),
            "seed {}: {hints:?}",
            d.seed
        );
        let fresh = likely(d.first.as_ref(), d.second.as_ref(), false, Some(false));
        assert!(
            fresh.iter().all(|h| h.source != Source::Static)
                && fresh.iter().any(|h| h.source == Source::Entropy),
            "seed {}: {fresh:?}",
            d.seed
        );
    }
    // lanesim's own components replay.
    assert!(audit(
        &scenario,
        SeedRange::new(0, 3).unwrap(),
        &Subject::default()
    )
    .is_empty());
}

/// A sender alone (the shape of beamr's: one drain over two lanes, each
/// write bounded by the deadline) runs over lanesim's connection layer as
/// the node, and keeps the sender contracts it is held to.
#[test]
fn a_sender_alone_runs_over_lanesims_connection_layer() {
    use std::sync::Arc;

    use lanesim_target::layer::{LayerConn, Sender, SenderCapabilities, SenderSetup, SenderTarget};
    use lanesim_target::node::{ControlOutcome, DataOutcome, DownReason, Runtime};
    use lanesim_target::probe::Sites;
    use lanesim_target::Targets;
    use tokio::sync::mpsc;

    type Data = (String, Arc<[u8]>);
    type Control = (LayerConn, Arc<[u8]>);

    struct Drain {
        data: mpsc::Sender<Data>,
        control: mpsc::Sender<Control>,
        task: tokio::task::JoinHandle<()>,
    }

    impl Sender for Drain {
        fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
            match self.data.try_send((node.to_string(), frame)) {
                Ok(()) => DataOutcome::Queued,
                Err(mpsc::error::TrySendError::Full(_)) => DataOutcome::DroppedFull,
                Err(mpsc::error::TrySendError::Closed(_)) => DataOutcome::DroppedClosed,
            }
        }
        fn enqueue_control(&self, pinned: &LayerConn, frame: Arc<[u8]>) -> ControlOutcome {
            match self.control.try_send((Arc::clone(pinned), frame)) {
                Ok(()) => ControlOutcome::Queued,
                Err(mpsc::error::TrySendError::Full((pinned, _))) => {
                    pinned.mark_down(DownReason::ControlOverflow);
                    ControlOutcome::Overflow
                }
                Err(mpsc::error::TrySendError::Closed(_)) => ControlOutcome::Closed,
            }
        }
        fn shutdown(&self) {
            self.task.abort();
        }
    }

    struct OneDrain;
    impl SenderTarget for OneDrain {
        fn capabilities(&self) -> SenderCapabilities {
            SenderCapabilities {
                hazards: &[],
                drain: false,
                stats: false,
                fixed: lanesim_target::node::NodeFixed::default(),
                sites: Sites::default(),
            }
        }
        fn start(&self, setup: SenderSetup) -> Result<Box<dyn Sender>, String> {
            let (data, mut data_rx) = mpsc::channel::<Data>(setup.data_capacity);
            let (control, mut control_rx) = mpsc::channel::<Control>(setup.control_capacity);
            let (layer, deadline) = (setup.layer, setup.write_timeout);
            let handle = match setup.runtime {
                Runtime::World(handle) | Runtime::Own { world: handle, .. } => handle,
            };
            let task = handle.spawn(async move {
                loop {
                    let (to, frame) = tokio::select! {
                        biased;
                        Some((pinned, frame)) = control_rx.recv() => {
                            if pinned.is_down() { continue; }
                            (pinned, frame)
                        }
                        Some((node, frame)) = data_rx.recv() => match layer.get_connection(&node) {
                            Some(to) => (to, frame),
                            None => continue,
                        },
                        else => break,
                    };
                    let write = tokio::time::timeout(deadline, to.write_raw(&frame)).await;
                    if write.is_err() {
                        to.mark_down(DownReason::WriteTimeout);
                    }
                }
            });
            Ok(Box::new(Drain {
                data,
                control,
                task,
            }))
        }
    }
    struct SenderOnly;
    impl Targets for SenderOnly {
        fn name(&self) -> &str {
            "one-drain"
        }
        fn sender(&self) -> Option<&dyn SenderTarget> {
            Some(&OneDrain)
        }
    }

    let subject = Subject::user(Arc::new(SenderOnly));
    let node = subject.node().expect("composed over lanesim's layer");
    assert!(node.capabilities().accepts && !node.capabilities().drain);
    let scenarios: Vec<Scenario> = shipped()
        .into_iter()
        .filter(|s| {
            ["sender_fifo", "sender_wedged_peer", "sender_dead_peer"].contains(&s.name.as_str())
        })
        .collect();
    let report = sweep_whole(&scenarios, SeedRange::new(0, 7).unwrap(), subject);
    for tally in &report.scenarios {
        assert!(
            tally.failures.is_empty(),
            "{}: {:?}",
            tally.scenario,
            tally.failures.first().map(|f| &f.violations)
        );
        assert_eq!(tally.verdicts.pass, 8, "{}", tally.scenario);
        let undecided: Vec<Contract> = tally.undecided.iter().map(|n| n.what).collect();
        assert!(undecided
            .iter()
            .all(|c| [Contract::S2, Contract::S4].contains(c)));
    }
}

/// `audit` of a scenario the target cannot run runs nothing, says why, and
/// is not reported clean: an audit that ran nothing exits 5, and one that
/// ran some counts the rest as not audited.
#[test]
fn an_audit_of_a_scenario_the_target_cannot_run_is_not_clean() {
    use std::sync::Arc;

    use lanesim_sims::report::{Exit, Outcome};
    use lanesim_sims::run::audit_scenario;
    use lanesim_sims::targets::lanesim::lanes::LanesimLanes;
    use lanesim_target::lanes::LanesTarget;
    use lanesim_target::Targets;

    struct LanesOnly(LanesimLanes);
    impl Targets for LanesOnly {
        fn name(&self) -> &str {
            "lanes-only"
        }
        fn lanes(&self) -> Option<&dyn LanesTarget> {
            Some(&self.0)
        }
    }
    let subject = Subject::user(Arc::new(LanesOnly(LanesimLanes::default())));
    let find = |name: &str| shipped().into_iter().find(|s| s.name == name).unwrap();
    let seeds = SeedRange::new(0, 2).unwrap();
    let sender = audit_scenario(&find("sender_fifo"), seeds, &subject);
    assert_eq!(sender.seeds, 0);
    assert!(sender.divergences.is_empty());
    assert_eq!(
        sender.not_run.as_deref(),
        Some("the target has no node"),
        "{sender:?}"
    );
    let lanes = audit_scenario(&find("lanes_order"), seeds, &subject);
    assert!(
        lanes.not_run.is_none() && lanes.seeds == seeds.len() && lanes.divergences.is_empty(),
        "{lanes:?}"
    );
    let exit = |audits| {
        Outcome::Audit {
            audits,
            target: None,
        }
        .exit()
    };
    let sender = || audit_scenario(&find("sender_fifo"), seeds, &subject);
    assert_eq!(exit(vec![sender()]), Exit::NotReached);
    assert_eq!(exit(vec![sender(), lanes]), Exit::Pass);
}

/// A target with constants of its own (a 5 s write deadline, 512-deep
/// lanes: lanesim's components, handed those values whatever the world
/// says) gets no liveness and no missed reach for them: every shipped
/// scenario whose range excludes its value is not decided, with the
/// reason, and every other one runs with the target's value and passes.
#[test]
fn fixed_constants_never_fail_correct_code() {
    use std::sync::Arc;
    use std::time::Duration;

    use lanesim_sims::targets::lanesim::lanes::LanesimLanes;
    use lanesim_sims::targets::lanesim::node::LanesimNode;
    use lanesim_target::lanes::{
        Item, Lanes, LanesCapabilities, LanesFixed, LanesSetup, LanesTarget,
    };
    use lanesim_target::node::{Node, NodeCapabilities, NodeFixed, NodeSetup, NodeTarget};
    use lanesim_target::Targets;

    const DEPTH: usize = 512;
    const DEADLINE: Duration = Duration::from_secs(5);
    struct Deep(Box<dyn Lanes>);
    impl Lanes for Deep {
        fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item> {
            self.0.route(item, capacity.map(|_| DEPTH))
        }
    }
    struct Fixed;
    impl LanesTarget for Fixed {
        fn capabilities(&self) -> LanesCapabilities {
            LanesCapabilities {
                fixed: LanesFixed {
                    capacity: Some(DEPTH),
                    ..LanesFixed::default()
                },
                ..LanesimLanes::default().capabilities()
            }
        }
        fn build(&self, setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
            Ok(Box::new(Deep(LanesimLanes::default().build(setup)?)))
        }
    }
    impl NodeTarget for Fixed {
        fn capabilities(&self) -> NodeCapabilities {
            NodeCapabilities {
                fixed: NodeFixed {
                    write_timeout: Some(DEADLINE),
                    ..NodeFixed::default()
                },
                ..LanesimNode::default().capabilities()
            }
        }
        fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String> {
            LanesimNode::default().start(NodeSetup {
                write_timeout: DEADLINE,
                ..setup
            })
        }
    }
    impl Targets for Fixed {
        fn name(&self) -> &str {
            "fixed"
        }
        fn lanes(&self) -> Option<&dyn LanesTarget> {
            Some(self)
        }
        fn node(&self) -> Option<&dyn NodeTarget> {
            Some(self)
        }
    }
    let scenarios: Vec<Scenario> = shipped()
        .into_iter()
        .filter(|s| s.file.mesh.is_none())
        .collect();
    let plan = Plan {
        scenarios: &scenarios,
        seeds: Some(SeedRange::new(0, 3).unwrap()),
        shard: Shard::ALL,
        wall: None,
        jobs: 2,
        subject: Subject::user(Arc::new(Fixed)),
        accept_undecided: false,
    };
    let report = sweep(&plan, &mut Unwatched);
    // On these few seeds a share may fall short for lanesim's own
    // components too: only a shortfall they do not have is the constant's.
    let own = sweep(
        &Plan {
            subject: Subject::default(),
            ..plan
        },
        &mut Unwatched,
    )
    .reaches();
    let (mut ran, mut refused) = (0, 0);
    for ((tally, reach), own) in report.scenarios.iter().zip(report.reaches()).zip(own) {
        if let Some(why) = &tally.refused {
            refused += 1;
            assert!(why.contains("fixed at"), "{}: {why}", tally.scenario);
            continue;
        }
        ran += 1;
        assert_eq!(
            tally.verdicts.pass,
            tally.ran(),
            "{}: {:?}",
            tally.scenario,
            tally.failures.first().map(|f| (&f.verdict, &f.violations))
        );
        assert!(
            !reach.fell_short() || own.fell_short(),
            "{}: {reach:?}",
            tally.scenario
        );
    }
    // Both kinds happen: the constants decide, not a blanket refusal.
    assert!(ran >= 5 && refused >= 5, "{ran} ran, {refused} refused");
}

/// A target that keeps its own link table (`NodeCapabilities::links`) is
/// judged on its table's deliveries: lanesim's node with every
/// `noconnection` report swallowed loses death signals (M2) in the mesh,
/// while the same node declaring no table passes, the world keeping the
/// links over its up and down reports (and its table's roles are then not
/// decided, never missed).
#[test]
fn the_mesh_judges_m2_on_a_targets_own_link_table() {
    use std::sync::Arc;

    use lanesim_sims::targets::lanesim::node::LanesimNode;
    use lanesim_target::node::{
        Down, Generation, Link, Node, NodeCapabilities, NodeEvents, NodeReports, NodeSetup,
        NodeTarget, Up,
    };
    use lanesim_target::Targets;

    /// Up, down and frame reports, and no `noconnection` (nor the
    /// drain's account: the target declares none).
    struct Deaf(NodeReports);
    impl NodeEvents for Deaf {
        fn up(&self, up: Up<'_>) {
            self.0.up(up);
        }
        fn down(&self, down: Down<'_>) {
            self.0.down(down);
        }
        fn frame(&self, from: Generation<'_>, control: &[u8], payload: &[u8]) {
            self.0.frame(from, control, payload);
        }
        fn noconnection(&self, _: &str, _: Link) {}
    }
    struct Swallowing {
        table: bool,
    }
    impl NodeTarget for Swallowing {
        fn capabilities(&self) -> NodeCapabilities {
            NodeCapabilities {
                links: self.table,
                drain: false,
                stats: false,
                ..LanesimNode::default().capabilities()
            }
        }
        fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String> {
            let reports = NodeReports::new(Arc::new(Deaf(setup.reports.clone())));
            LanesimNode::default().start(NodeSetup { reports, ..setup })
        }
    }
    impl Targets for Swallowing {
        fn name(&self) -> &str {
            "swallowing"
        }
        fn node(&self) -> Option<&dyn NodeTarget> {
            Some(self)
        }
    }
    let scenarios: Vec<Scenario> = shipped()
        .into_iter()
        .filter(|s| s.name == "mesh_chaos")
        .collect();
    assert_eq!(scenarios.len(), 1);
    let run = |table| {
        sweep(
            &Plan {
                scenarios: &scenarios,
                seeds: Some(SeedRange::new(0, 7).unwrap()),
                shard: Shard::ALL,
                wall: None,
                jobs: 2,
                subject: Subject::user(Arc::new(Swallowing { table })),
                accept_undecided: true,
            },
            &mut Unwatched,
        )
    };
    let judged = run(true);
    let tally = &judged.scenarios[0];
    assert!(
        tally.failures.iter().any(|failure| failure
            .violations
            .iter()
            .any(|v| v.contract == Contract::M2)),
        "no run lost a death signal: {:?}",
        tally.verdicts
    );
    let modelled = run(false);
    let tally = &modelled.scenarios[0];
    assert!(tally.failures.is_empty(), "{:?}", tally.failures.first());
    assert_eq!(tally.verdicts.pass, 8);
    // Its table's roles are not missed but not decided: the world kept its
    // links, so its table never ran.
    let reach = &modelled.reaches()[0];
    assert!(reach.missed().is_empty(), "{:?}", reach.missed());
    let undecided: Vec<String> = reach
        .undecided
        .iter()
        .filter(|not| not.why.contains("NodeCapabilities::links"))
        .map(|not| not.what.to_string())
        .collect();
    assert_eq!(
        undecided,
        ["role:link_broken_by_down", "role:link_made_over_down"]
    );
}

/// The flood world holds any node to a deadline on each step of its
/// handshake: lanesim's node started with a connect timeout a thousand
/// times the world's (so neither its hello nor its proof wait ends within
/// the flood) lets a flood's streams, silent after their hello, hold
/// their places until the flood gives up: M7, citing the flooder's
/// record. The same node given the world's timeout passes.
#[test]
fn the_flood_world_holds_a_node_to_its_handshake_deadlines() {
    use std::sync::Arc;

    use lanesim_sims::event::Event;
    use lanesim_sims::run::execute;
    use lanesim_sims::targets::lanesim::node::LanesimNode;
    use lanesim_target::node::{Node, NodeCapabilities, NodeSetup, NodeTarget};
    use lanesim_target::Targets;

    struct Patient(u32);
    impl NodeTarget for Patient {
        fn capabilities(&self) -> NodeCapabilities {
            LanesimNode::default().capabilities()
        }
        fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String> {
            let connect_timeout = setup.connect_timeout * self.0;
            LanesimNode::default().start(NodeSetup {
                connect_timeout,
                ..setup
            })
        }
    }
    impl Targets for Patient {
        fn name(&self) -> &str {
            "patient"
        }
        fn node(&self) -> Option<&dyn NodeTarget> {
            Some(self)
        }
    }
    let scenario = shipped()
        .into_iter()
        .find(|s| s.name == "mesh_flood_hello")
        .expect("shipped");
    let patient = execute(&scenario, 0, &Subject::user(Arc::new(Patient(1_000))));
    let held: Vec<_> = patient
        .violations
        .iter()
        .filter(|v| {
            v.contract == Contract::M7
                && v.evidence
                    .iter()
                    .any(|r| matches!(r.event, Event::MeshFloodHeld { hello: true, .. }))
        })
        .collect();
    assert!(!held.is_empty(), "{:?}", patient.violations);
    let prompt = execute(&scenario, 0, &Subject::user(Arc::new(Patient(1))));
    assert!(prompt.violations.is_empty(), "{:?}", prompt.violations);
}

/// The mesh world keeps each node's descriptors: lanesim's node told a
/// limit 64 above the one the network keeps fits its caps to the wrong
/// limit and runs out under `mesh_flood_tight_descriptors`'s flood (M7,
/// citing the world's record); told the true limit, it passes.
#[test]
fn the_network_holds_a_node_to_the_descriptor_limit_it_tells() {
    use std::sync::Arc;

    use lanesim_sims::event::Event;
    use lanesim_sims::run::execute;
    use lanesim_sims::targets::lanesim::node::LanesimNode;
    use lanesim_target::net::{BoxFuture, Connected, Listener, Transport};
    use lanesim_target::node::{Node, NodeCapabilities, NodeSetup, NodeTarget};
    use lanesim_target::Targets;

    /// A transport that tells its node `more` descriptors than it keeps.
    struct Overstated {
        inner: Arc<dyn Transport>,
        more: u64,
    }
    impl Transport for Overstated {
        fn connect<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, std::io::Result<Connected>> {
            self.inner.connect(addr)
        }
        fn bind<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, std::io::Result<Box<dyn Listener>>> {
            self.inner.bind(addr)
        }
        fn descriptor_limit(&self) -> Option<u64> {
            self.inner.descriptor_limit().map(|limit| limit + self.more)
        }
    }
    struct Misled(u64);
    impl NodeTarget for Misled {
        fn capabilities(&self) -> NodeCapabilities {
            LanesimNode::default().capabilities()
        }
        fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String> {
            let transport = Arc::new(Overstated {
                inner: setup.transport.clone(),
                more: self.0,
            });
            LanesimNode::default().start(NodeSetup { transport, ..setup })
        }
    }
    impl Targets for Misled {
        fn name(&self) -> &str {
            "misled"
        }
        fn node(&self) -> Option<&dyn NodeTarget> {
            Some(self)
        }
    }
    let scenario = shipped()
        .into_iter()
        .find(|s| s.name == "mesh_flood_tight_descriptors")
        .expect("shipped");
    let misled = execute(&scenario, 0, &Subject::user(Arc::new(Misled(64))));
    let ran_out = misled.violations.iter().any(|v| {
        v.contract == Contract::M7
            && v.evidence
                .iter()
                .any(|r| matches!(r.event, Event::MeshDescriptorsOut { .. }))
    });
    assert!(ran_out, "{:?}", misled.violations);
    let told = execute(&scenario, 0, &Subject::user(Arc::new(Misled(0))));
    assert!(told.violations.is_empty(), "{:?}", told.violations);
}
