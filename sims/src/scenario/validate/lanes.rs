//! The `[lanes]` table: counts and their product, durations, chances, the
//! policy's capacity, stuck keys.

use super::common::{
    at_most, chance, count, no_longer, preemption, problem, span, Preemption, Problem,
};
use crate::scenario::limits;
use crate::scenario::position::KeyPath;
use crate::scenario::spec::{LanesSpec, Policy};

/// `lanes.<field>`.
fn key(field: &str) -> KeyPath {
    KeyPath::field("lanes", field)
}

pub(super) fn validate(lanes: &LanesSpec, problems: &mut Vec<Problem>) {
    count(&key("keys"), &lanes.keys, 1, problems);
    count(&key("producers"), &lanes.producers, 1, problems);
    count(
        &key("items_per_producer"),
        &lanes.items_per_producer,
        1,
        problems,
    );
    count(&key("burst"), &lanes.burst, 1, problems);
    at_most(&key("keys"), &lanes.keys, limits::KEYS, problems);
    at_most(
        &key("producers"),
        &lanes.producers,
        limits::PRODUCERS,
        problems,
    );
    at_most(&key("burst"), &lanes.burst, limits::CAPACITY, problems);
    let items = lanes
        .producers
        .bounds()
        .1
        .saturating_mul(lanes.items_per_producer.bounds().1);
    if items > limits::ITEMS {
        problems.push(problem(
            key("items_per_producer"),
            format!(
                "producers x items_per_producer may reach {items}: at most {} items in all",
                limits::ITEMS
            ),
        ));
    }
    for (field, value) in [
        ("gap", Some(&lanes.gap)),
        ("pause", Some(&lanes.pause)),
        ("handler", Some(&lanes.handler)),
        ("idle_ttl", lanes.idle_ttl.as_ref()),
        ("drop_router_at", lanes.drop_router_at.as_ref()),
    ] {
        if let Some(value) = value {
            no_longer(&key(field), value, limits::SPAN, problems);
        }
    }
    if let Some(capacity) = &lanes.capacity {
        at_most(&key("capacity"), capacity, limits::CAPACITY, problems);
    }
    span(&key("gap"), &lanes.gap, false, problems);
    span(&key("pause"), &lanes.pause, false, problems);
    span(&key("handler"), &lanes.handler, false, problems);
    if let Some(ttl) = &lanes.idle_ttl {
        span(&key("idle_ttl"), ttl, true, problems);
    }
    match &lanes.capacity {
        Some(capacity) => count(&key("capacity"), capacity, 1, problems),
        None if lanes.policy != Policy::Raw => {
            problems.push(problem(
                key("policy"),
                "reject and warn need a capacity (the dispatcher's limit)",
            ));
        }
        None => {}
    }
    for (field, value) in [
        ("hot_key", &lanes.hot_key),
        ("panic_chance", &lanes.panic_chance),
        ("sync_panic_chance", &lanes.sync_panic_chance),
        ("buggify", &lanes.buggify),
    ] {
        if let Some(value) = value {
            chance(&key(field), value, problems);
        }
    }
    if let Some(at) = &lanes.drop_router_at {
        span(&key("drop_router_at"), at, false, problems);
    }
    preemption(
        "lanes",
        &Preemption {
            preempt: lanes.preempt.as_ref(),
            preempt_for: lanes.preempt_for.as_ref(),
            shuffle: lanes.shuffle.as_ref(),
            preempt_awaits: lanes.preempt_awaits.as_ref(),
        },
        problems,
    );
    if let Some(stuck) = &lanes.stuck_keys {
        count(&key("stuck_keys"), stuck, 0, problems);
        if stuck.bounds().1 >= lanes.keys.bounds().0 {
            problems.push(problem(
                key("stuck_keys"),
                "must leave at least one key that is not stuck",
            ));
        }
    }
}
