//! Layer 3, plan (stage 3): where a batch of apps without a group goes: the new apps of a render (the whole project
//! on a first render), the adopted apps `import` consolidates, the apps `plan --apply`
//! moves out of the groups it empties, and those it separates.
//!
//! Each app still goes to the lowest-numbered group with room that it may join; what is
//! chosen is the order the batch is placed in. Name order where that reaches the lower
//! bound (groups then hold runs of names); else the most constrained first (first-fit
//! decreasing): the apps that may share a group with the fewest others (overlapping paths,
//! isolation), then those that take the largest share of a group by their tightest limit.
//! When that ends above the lower bound, an exact search ([`search`]) looks for a placement
//! in one group fewer, and the placement it finds becomes the order (group by group, each
//! app then lands in the group found or a lower one), until the bound is reached, the
//! search proves there is none, or its budget is spent. The budget counts questions, not
//! time, so the result is the same on every machine: the same input gives the same groups.
//!
//! Apps already in a group (locked, pinned) are where they are before the batch comes, and
//! the batch fills around them: when a few apps are new, only they are placed, into the
//! room the groups in use have, and nothing in use moves.

mod batch;
mod demands;
mod search;

pub(crate) use batch::*;
