//! `Arena<T>` and `Handle<T>`: typed indices instead of pointers (naga style).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

/// A typed index into an [`Arena<T>`].
pub struct Handle<T> {
    index: u32,
    marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// A handle from a raw index (only meaningful for the arena it came from).
    pub const fn from_index(index: u32) -> Handle<T> {
        Handle {
            index,
            marker: PhantomData,
        }
    }

    /// The position in the arena.
    pub const fn index(self) -> usize {
        self.index as usize
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}
impl<T> Hash for Handle<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.index.hash(state);
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.index)
    }
}

/// A growable vector addressed by [`Handle<T>`].
#[derive(Clone, Debug)]
pub struct Arena<T> {
    items: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}

impl<T> Arena<T> {
    /// An empty arena.
    pub fn new() -> Arena<T> {
        Arena::default()
    }

    /// Add an item and return its handle.
    pub fn append(&mut self, item: T) -> Handle<T> {
        let index = u32::try_from(self.items.len()).unwrap_or(u32::MAX);
        self.items.push(item);
        Handle::from_index(index)
    }

    /// The item behind `h`.
    ///
    /// Handles are only created by [`Arena::append`] on the same arena, so they
    /// are always in range; a foreign handle is a compiler bug and panics.
    pub fn get(&self, h: Handle<T>) -> &T {
        &self.items[h.index()]
    }

    /// Mutable access to the item behind `h`.
    pub fn get_mut(&mut self, h: Handle<T>) -> &mut T {
        &mut self.items[h.index()]
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// No items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Handles and items in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.items
            .iter()
            .enumerate()
            .map(|(i, t)| (Handle::from_index(i as u32), t))
    }
}

impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, h: Handle<T>) -> &T {
        self.get(h)
    }
}

impl<T> std::ops::IndexMut<Handle<T>> for Arena<T> {
    fn index_mut(&mut self, h: Handle<T>) -> &mut T {
        self.get_mut(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_and_get() {
        let mut a = Arena::new();
        let x = a.append("x");
        let y = a.append("y");
        assert_eq!(a[x], "x");
        assert_eq!(a[y], "y");
        assert_ne!(x, y);
        assert_eq!(a.len(), 2);
        let all: Vec<_> = a.iter().map(|(h, s)| (h.index(), *s)).collect();
        assert_eq!(all, vec![(0, "x"), (1, "y")]);
    }
}
