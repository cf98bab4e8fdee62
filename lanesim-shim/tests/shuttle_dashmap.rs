//! The model `DashMap` under shuttle: what a key's shard lock promises in
//! dashmap holds in every schedule (an entry's update is never lost, a
//! `remove_if` decides under the lock an entry holds, a reference holds its
//! shard).
//!
//! Run: `RUSTFLAGS="--cfg shuttle" cargo test --release -p lanesim-shim --test shuttle_dashmap`
#![cfg(shuttle)]

use std::sync::{Arc, Mutex};

use lanesim_shim::dashmap::{DashMap, Entry};
use lanesim_shim::task;

/// Three tasks count into one key through `entry`: no increment is lost.
#[test]
fn entry_updates_of_one_key_are_never_lost() {
    shuttle::check_random(
        || {
            let map = Arc::new(DashMap::<u64, u64>::new());
            let tasks: Vec<_> = (0..3)
                .map(|_| {
                    let map = Arc::clone(&map);
                    task::spawn(async move {
                        *map.entry(7).or_insert(0) += 1;
                    })
                })
                .collect();
            shuttle::future::block_on(async {
                for task in tasks {
                    task.await.unwrap();
                }
            });
            assert_eq!(map.get(&7).map(|v| *v), Some(3));
            assert_eq!(map.len(), 1);
        },
        300,
    );
}

/// A reaper's `remove_if(pending == 0)` racing a producer that counts an
/// item in through `entry`: the counted item is never removed with its
/// entry (the reap decides under the lock the producer's entry holds), and
/// in some schedules the reap wins first and the producer makes a new one.
#[test]
fn a_remove_if_never_removes_what_an_entry_just_counted() {
    let tally = Arc::new(Mutex::new([0u32; 2]));
    let seen = Arc::clone(&tally);
    shuttle::check_random(
        move || {
            let map = Arc::new(DashMap::<u64, u64>::new());
            map.insert(1, 0);
            let producer = {
                let map = Arc::clone(&map);
                task::spawn(async move {
                    match map.entry(1) {
                        Entry::Occupied(mut entry) => {
                            *entry.get_mut() += 1;
                            false
                        }
                        Entry::Vacant(entry) => {
                            entry.insert(1);
                            true
                        }
                    }
                })
            };
            let reaped = map.remove_if(&1, |_, pending| *pending == 0).is_some();
            let recreated = shuttle::future::block_on(producer).unwrap();
            assert_eq!(
                map.get(&1).map(|v| *v),
                Some(1),
                "the counted item was lost"
            );
            assert_eq!(reaped, recreated);
            seen.lock().unwrap()[usize::from(reaped)] += 1;
        },
        300,
    );
    let [kept, reaped] = *tally.lock().unwrap();
    assert!(kept > 0 && reaped > 0, "{kept} kept, {reaped} reaped first");
}

/// A `Ref` holds its key's shard: an insert of the same key by another
/// task waits for it to drop, so two reads through one `Ref`, with a point
/// between them where the checker may run the writer, agree.
#[test]
fn a_ref_holds_its_keys_shard() {
    shuttle::check_random(
        || {
            let map = Arc::new(DashMap::<u64, u64>::new());
            map.insert(0, 10);
            let writer = {
                let map = Arc::clone(&map);
                task::spawn(async move {
                    map.insert(0, 20);
                })
            };
            {
                let value = map.get(&0).unwrap();
                let first = *value;
                shuttle::thread::yield_now();
                assert_eq!(first, *value, "the value changed under a Ref");
            }
            shuttle::future::block_on(writer).unwrap();
            assert_eq!(map.get(&0).map(|v| *v), Some(20));
        },
        300,
    );
}

/// Alone, the model map is a map: with 32 keys over its shards, an insert
/// replaces, a new key's entry holds only that key's value, a remove
/// returns the key it was asked for, and `len` counts every shard.
#[test]
fn the_model_map_is_a_map() {
    shuttle::check_random(
        || {
            let map = DashMap::<u64, u64>::new();
            for key in 0..32 {
                assert_eq!(map.insert(key, key * 10), None);
            }
            assert_eq!(map.insert(3, 31), Some(30));
            map.insert(3, 30);
            for key in 0..32 {
                *map.entry(100 + key).or_insert(0) += 1;
            }
            for key in 0..32 {
                assert_eq!(map.get(&key).map(|v| *v), Some(key * 10), "key {key}");
                assert_eq!(
                    map.get(&(100 + key)).map(|v| *v),
                    Some(1),
                    "key {}",
                    100 + key
                );
            }
            assert_eq!(map.len(), 64);
            for key in (0..32).step_by(2) {
                assert_eq!(map.remove(&key), Some((key, key * 10)));
            }
            for key in (1..32).step_by(2) {
                assert_eq!(map.get(&key).map(|v| *v), Some(key * 10), "key {key}");
            }
            assert_eq!(map.len(), 48);
        },
        5,
    );
}

/// A lookup racing removals of other keys of its shard finds its own key:
/// the reference it returns is the entry it found, under the lock it found
/// it with.
#[test]
fn a_get_racing_removals_finds_its_own_key() {
    shuttle::check_random(
        || {
            let map = Arc::new(DashMap::<u64, u64>::new());
            for key in 0..32 {
                map.insert(key, key * 10);
            }
            let remover = {
                let map = Arc::clone(&map);
                task::spawn(async move {
                    for key in (0..32).step_by(2) {
                        map.remove(&key);
                    }
                })
            };
            for key in (1..32).step_by(2) {
                let found = map.get(&key).expect("an odd key is never removed");
                assert_eq!((*found.key(), *found), (key, key * 10));
            }
            shuttle::future::block_on(remover).unwrap();
        },
        300,
    );
}
