//! Bounded queries on Ballista's standalone mode (a scheduler and an executor in this
//! process, planning with the project's codecs): the rows a local session gives, and a clear
//! error, naming the node or table, for what a cluster cannot run yet.

mod cluster;
mod round_trip;
mod standalone;
