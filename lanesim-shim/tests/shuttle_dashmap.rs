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
