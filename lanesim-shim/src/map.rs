//! A sharded concurrent map with a caller-chosen hasher and shard count
//! (lanesim's lane map).
//!
//! The lane reaper's soundness rests on one property, so this API exposes only
//! operations that keep it: [`ShardedMap::with_entry`] and
//! [`ShardedMap::remove_if`] run under the *same* shard write lock. A producer
//! that admits and sends inside `with_entry` can therefore never be observed
//! mid-send by a `remove_if` predicate.
//!
//! The hasher and shard count are parameters because dashmap's defaults
//! (`RandomState`, shards from the core count) make drop order, and so lane
//! wake-up order, differ between runs; simulated runs pass fixed ones.

#[cfg(not(any(loom, shuttle)))]
mod imp {
    use std::hash::{BuildHasher, Hash};

    use dashmap::mapref::entry::Entry;
    use dashmap::DashMap;

    pub struct ShardedMap<K, V, S> {
        inner: DashMap<K, V, S>,
    }

    impl<K: Eq + Hash, V, S: BuildHasher + Clone> ShardedMap<K, V, S> {
        /// `shards` must be a power of two greater than one (checked by the
        /// callers' configuration, which reports it as a config error).
        pub fn new(hasher: S, shards: usize) -> Self {
            Self {
                inner: DashMap::with_capacity_and_hasher_and_shard_amount(0, hasher, shards),
            }
        }

        /// Runs `f` on `key`'s value, inserting `make(&key)` first when absent; both
        /// happen while the key's shard write lock is held.
        pub fn with_entry<R>(
            &self,
            key: K,
            make: impl FnOnce(&K) -> V,
            f: impl FnOnce(&V) -> R,
        ) -> R {
            match self.inner.entry(key) {
                Entry::Occupied(occupied) => f(occupied.get()),
                Entry::Vacant(vacant) => {
                    let value = make(vacant.key());
                    f(vacant.insert(value).value())
                }
            }
        }

        /// Runs `f` on `key`'s value under the shard *read* lock, if present.
        pub fn get_with<R>(&self, key: &K, f: impl FnOnce(&V) -> R) -> Option<R> {
            self.inner.get(key).map(|value| f(value.value()))
        }

        /// Removes `key` when `predicate` holds, deciding under the shard write
        /// lock. Returns whether it removed.
        pub fn remove_if(&self, key: &K, predicate: impl FnOnce(&V) -> bool) -> bool {
            self.inner
                .remove_if(key, |_, value| predicate(value))
                .is_some()
        }

        /// Entries now.
        pub fn len(&self) -> usize {
            self.inner.len()
        }

        /// Whether there are none.
        pub fn is_empty(&self) -> bool {
            self.inner.is_empty()
        }
    }
}

#[cfg(any(loom, shuttle))]
mod imp {
    //! One checker mutex per shard; a key always hashes to one shard, so this is
    //! an exact model of dashmap's per-shard write lock for the lane races.
    use std::collections::HashMap;
    use std::hash::{BuildHasher, Hash};

    use crate::sync::Mutex;

    pub struct ShardedMap<K, V, S> {
        shards: Box<[Mutex<HashMap<K, V>>]>,
        hasher: S,
    }

    impl<K: Eq + Hash, V, S: BuildHasher + Clone> ShardedMap<K, V, S> {
        pub fn new(hasher: S, shards: usize) -> Self {
            Self {
                shards: (0..shards).map(|_| Mutex::new(HashMap::new())).collect(),
                hasher,
            }
        }

        fn shard(&self, key: &K) -> &Mutex<HashMap<K, V>> {
            let index = self.hasher.hash_one(key) as usize % self.shards.len();
            &self.shards[index]
        }

        pub fn with_entry<R>(
            &self,
            key: K,
            make: impl FnOnce(&K) -> V,
            f: impl FnOnce(&V) -> R,
        ) -> R {
            let mut shard = self.shard(&key).lock();
            f(shard.entry(key).or_insert_with_key(make))
        }

        pub fn get_with<R>(&self, key: &K, f: impl FnOnce(&V) -> R) -> Option<R> {
            self.shard(key).lock().get(key).map(f)
        }

        pub fn remove_if(&self, key: &K, predicate: impl FnOnce(&V) -> bool) -> bool {
            let mut shard = self.shard(key).lock();
            match shard.get(key) {
                Some(value) if predicate(value) => shard.remove(key).is_some(),
                _ => false,
            }
        }

        /// Entries now.
        pub fn len(&self) -> usize {
            self.shards.iter().map(|shard| shard.lock().len()).sum()
        }

        /// Whether there are none.
        pub fn is_empty(&self) -> bool {
            self.len() == 0
        }
    }
}

pub use imp::ShardedMap;
