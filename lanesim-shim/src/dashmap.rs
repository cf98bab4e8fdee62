//! dashmap's `DashMap`, for code ported by its `use` lines: normally the
//! crate's own types, re-exported; under a model checker a map of the same
//! name and methods whose shards are checker mutexes.
//!
//! The model keeps what a race depends on: a key always lives in one shard,
//! and every method on it (a lookup, an `entry`, a `remove_if`) holds that
//! shard's lock, as dashmap's write lock, for as long as dashmap would (a
//! [`Ref`], [`RefMut`] or [`Entry`] holds it until dropped). Keys are
//! spread over a fixed number of shards by a fixed hash, so a schedule
//! replays; the `S` parameter is only carried for the type's sake.
//!
//! Offered (the common subset): `new`, `default`, `insert`, `get`,
//! `get_mut`, `contains_key`, `remove`, `remove_if`, `entry` (with
//! `or_insert`, `or_insert_with`, `or_default`, `and_modify`, `key`, and the
//! `Occupied`/`Vacant` variants), `len`, `is_empty`. Iteration is not
//! offered. Pinned under shuttle by `tests/shuttle_dashmap.rs`.

#[cfg(not(any(loom, shuttle)))]
pub use ::dashmap::mapref::entry::{Entry, OccupiedEntry, VacantEntry};
#[cfg(not(any(loom, shuttle)))]
pub use ::dashmap::mapref::one::{Ref, RefMut};
#[cfg(not(any(loom, shuttle)))]
pub use ::dashmap::DashMap;

#[cfg(any(loom, shuttle))]
pub use model_map::{DashMap, Entry, OccupiedEntry, Ref, RefMut, VacantEntry};

#[cfg(any(loom, shuttle))]
mod model_map {
    use std::borrow::Borrow;
    use std::collections::hash_map::{DefaultHasher, RandomState};
    use std::hash::{Hash, Hasher};
    use std::marker::PhantomData;
    use std::ops::{Deref, DerefMut};

    use crate::sync::{Mutex, MutexGuard};

    /// Shards in every model map: enough that two keys usually take two
    /// locks, as in dashmap, few enough to stay small.
    const SHARDS: usize = 4;

    type Shard<K, V> = Vec<(K, V)>;

    pub struct DashMap<K, V, S = RandomState> {
        shards: Box<[Mutex<Shard<K, V>>]>,
        _hasher: PhantomData<S>,
    }

    /// The shard of a key: a fixed hash (SipHash with zero keys), the same
    /// in every run.
    fn shard_of<Q: Hash + ?Sized>(key: &Q) -> usize {
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        (hasher.finish() % SHARDS as u64) as usize
    }

    impl<K: Eq + Hash, V> DashMap<K, V, RandomState> {
        #[must_use]
        pub fn new() -> Self {
            Self::default()
        }
    }

    impl<K: Eq + Hash, V, S> Default for DashMap<K, V, S> {
        fn default() -> Self {
            Self {
                shards: (0..SHARDS).map(|_| Mutex::new(Vec::new())).collect(),
                _hasher: PhantomData,
            }
        }
    }

    impl<K: Eq + Hash, V, S> DashMap<K, V, S> {
        fn lock<Q: Hash + ?Sized>(&self, key: &Q) -> MutexGuard<'_, Shard<K, V>> {
            self.shards[shard_of(key)].lock()
        }

        fn find<Q>(shard: &Shard<K, V>, key: &Q) -> Option<usize>
        where
            K: Borrow<Q>,
            Q: Eq + ?Sized,
        {
            shard.iter().position(|(k, _)| k.borrow() == key)
        }

        pub fn insert(&self, key: K, value: V) -> Option<V> {
            let mut shard = self.lock(&key);
            match Self::find(&shard, &key) {
                Some(index) => Some(std::mem::replace(&mut shard[index].1, value)),
                None => {
                    shard.push((key, value));
                    None
                }
            }
        }

        pub fn get<Q>(&self, key: &Q) -> Option<Ref<'_, K, V>>
        where
            K: Borrow<Q>,
            Q: Hash + Eq + ?Sized,
        {
            let shard = self.lock(key);
            Self::find(&shard, key).map(|index| Ref { shard, index })
        }

        pub fn get_mut<Q>(&self, key: &Q) -> Option<RefMut<'_, K, V>>
        where
            K: Borrow<Q>,
            Q: Hash + Eq + ?Sized,
        {
            let shard = self.lock(key);
            Self::find(&shard, key).map(|index| RefMut { shard, index })
        }

        pub fn contains_key<Q>(&self, key: &Q) -> bool
        where
            K: Borrow<Q>,
            Q: Hash + Eq + ?Sized,
        {
            Self::find(&self.lock(key), key).is_some()
        }

        pub fn remove<Q>(&self, key: &Q) -> Option<(K, V)>
        where
            K: Borrow<Q>,
            Q: Hash + Eq + ?Sized,
        {
            let mut shard = self.lock(key);
            Self::find(&shard, key).map(|index| shard.remove(index))
        }

        /// Removes the entry if `predicate` holds of it, deciding under the
        /// shard's lock.
        pub fn remove_if<Q>(
            &self,
            key: &Q,
            predicate: impl FnOnce(&K, &V) -> bool,
        ) -> Option<(K, V)>
        where
            K: Borrow<Q>,
            Q: Hash + Eq + ?Sized,
        {
            let mut shard = self.lock(key);
            let index = Self::find(&shard, key)?;
            let (k, v) = &shard[index];
            predicate(k, v).then(|| shard.remove(index))
        }

        pub fn entry(&self, key: K) -> Entry<'_, K, V> {
            let shard = self.lock(&key);
            match Self::find(&shard, &key) {
                Some(index) => Entry::Occupied(OccupiedEntry { shard, index }),
                None => Entry::Vacant(VacantEntry { shard, key }),
            }
        }

        pub fn len(&self) -> usize {
            self.shards.iter().map(|shard| shard.lock().len()).sum()
        }

        pub fn is_empty(&self) -> bool {
            self.len() == 0
        }
    }

    /// A shared reference to an entry; holds its shard's lock.
    pub struct Ref<'a, K, V> {
        shard: MutexGuard<'a, Shard<K, V>>,
        index: usize,
    }

    impl<K, V> Ref<'_, K, V> {
        pub fn key(&self) -> &K {
            &self.shard[self.index].0
        }

        pub fn value(&self) -> &V {
            &self.shard[self.index].1
        }
    }

    impl<K, V> Deref for Ref<'_, K, V> {
        type Target = V;

        fn deref(&self) -> &V {
            self.value()
        }
    }

    /// A unique reference to an entry; holds its shard's lock.
    pub struct RefMut<'a, K, V> {
        shard: MutexGuard<'a, Shard<K, V>>,
        index: usize,
    }

    impl<K, V> RefMut<'_, K, V> {
        pub fn key(&self) -> &K {
            &self.shard[self.index].0
        }

        pub fn value(&self) -> &V {
            &self.shard[self.index].1
        }

        pub fn value_mut(&mut self) -> &mut V {
            &mut self.shard[self.index].1
        }
    }

    impl<K, V> Deref for RefMut<'_, K, V> {
        type Target = V;

        fn deref(&self) -> &V {
            self.value()
        }
    }

    impl<K, V> DerefMut for RefMut<'_, K, V> {
        fn deref_mut(&mut self) -> &mut V {
            self.value_mut()
        }
    }

    /// An entry, found or not, with its shard's lock held.
    pub enum Entry<'a, K, V> {
        Occupied(OccupiedEntry<'a, K, V>),
        Vacant(VacantEntry<'a, K, V>),
    }

    impl<'a, K, V> Entry<'a, K, V> {
        pub fn key(&self) -> &K {
            match self {
                Self::Occupied(entry) => entry.key(),
                Self::Vacant(entry) => entry.key(),
            }
        }

        #[must_use]
        pub fn and_modify(mut self, f: impl FnOnce(&mut V)) -> Self {
            if let Self::Occupied(entry) = &mut self {
                f(entry.get_mut());
            }
            self
        }

        pub fn or_insert(self, value: V) -> RefMut<'a, K, V> {
            self.or_insert_with(|| value)
        }

        pub fn or_insert_with(self, make: impl FnOnce() -> V) -> RefMut<'a, K, V> {
            match self {
                Self::Occupied(entry) => entry.into_ref(),
                Self::Vacant(entry) => entry.insert(make()),
            }
        }

        pub fn or_default(self) -> RefMut<'a, K, V>
        where
            V: Default,
        {
            self.or_insert_with(V::default)
        }
    }

    /// A key that is in the map.
    pub struct OccupiedEntry<'a, K, V> {
        shard: MutexGuard<'a, Shard<K, V>>,
        index: usize,
    }

    impl<'a, K, V> OccupiedEntry<'a, K, V> {
        pub fn key(&self) -> &K {
            &self.shard[self.index].0
        }

        pub fn get(&self) -> &V {
            &self.shard[self.index].1
        }

        pub fn get_mut(&mut self) -> &mut V {
            &mut self.shard[self.index].1
        }

        pub fn insert(&mut self, value: V) -> V {
            std::mem::replace(self.get_mut(), value)
        }

        pub fn remove(self) -> V {
            self.remove_entry().1
        }

        pub fn remove_entry(mut self) -> (K, V) {
            self.shard.remove(self.index)
        }

        pub fn into_ref(self) -> RefMut<'a, K, V> {
            RefMut {
                shard: self.shard,
                index: self.index,
            }
        }
    }

    /// A key that is not in the map.
    pub struct VacantEntry<'a, K, V> {
        shard: MutexGuard<'a, Shard<K, V>>,
        key: K,
    }

    impl<'a, K, V> VacantEntry<'a, K, V> {
        pub fn key(&self) -> &K {
            &self.key
        }

        pub fn into_key(self) -> K {
            self.key
        }

        pub fn insert(mut self, value: V) -> RefMut<'a, K, V> {
            self.shard.push((self.key, value));
            let index = self.shard.len() - 1;
            RefMut {
                shard: self.shard,
                index,
            }
        }
    }
}
