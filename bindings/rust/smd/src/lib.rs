//! Safe Rust API of smd, a collective-communication runtime for distributed
//! training (all-reduce, all-gather, reduce-scatter, broadcast, reduce,
//! all-to-all, barrier and point-to-point messages between the processes of
//! a job), over the C ABI of libsmd (`include/smd.h`, through [`sys`]).
//!
//! ```no_run
//! use smd::{Communicator, Op};
//!
//! fn main() -> smd::Result<()> {
//!     // Rank and size from the launcher: smdrun -n 4 target/debug/my-trainer
//!     let world = Communicator::init()?;
//!     let mut grads = vec![world.rank() as f32; 1024];
//!     world.all_reduce(&mut grads, Op::Avg)?; // in place, on every rank
//!
//!     // Nonblocking: start, overlap, wait. See `scope` for why a scope.
//!     let mut all = vec![0u32; world.size()];
//!     let mine = [world.rank() as u32];
//!     smd::scope(|s| {
//!         let gather = world.iall_gather(s, &mine, &mut all)?;
//!         // ... compute ...
//!         gather.wait()
//!     })?;
//!     Ok(())
//! }
//! ```
//!
//! # What is here
//!
//! - [`Communicator`]: the world ([`Communicator::init`],
//!   [`Communicator::init_with`] and [`InitOptions`]), derived
//!   communicators (`split`, `dup`, `create_group`), rank, size and
//!   placement queries, and every collective over slices of a
//!   [`Datatype`] (`i8`, `u8`, `i32`, `u32`, `i64`, `u64`, [`f16`](struct@f16), [`bf16`],
//!   `f32`, `f64`) with an [`Op`].
//! - Nonblocking forms (`iall_reduce`, ...) started in a [`scope`] and
//!   returning a [`Request`].
//! - [`Groups`]: tensor-, pipeline- and data-parallel rank groups
//!   ([`GroupsConfig`], [`GroupKind`]).
//! - [`Pod`]: your own `#[repr(C)]` plain-old-data types sent, received,
//!   broadcast and gathered as bytes (`send_pod`, `recv_pod`, ...).
//! - [`RankInfo`]: where each rank runs.
//! - [`SharedSlice`] ([`Communicator::shared_slice`]): memory the node's
//!   ranks map, so that collectives' inputs are read in place.
//! - [`Error`]: the library's [`ErrorCode`] and its message
//!   (`smd_last_error()`, read on the failing thread right after the call).
//!
//! # Errors and panics
//!
//! Every fallible call returns [`Result`]. Slice lengths, roots and peers are
//! checked in Rust before calling the library. No Rust code runs on behalf
//! of C (there are no callbacks), so no panic can unwind into libsmd; this
//! crate itself does not panic.
//!
//! # Thread safety
//!
//! [`Communicator`] and [`Groups`] are `Send` and `Sync`, because smd.h lets
//! every function be called from any thread and turns ranks that disagree
//! into errors rather than memory corruption. Collectives on one
//! communicator must still be issued in the same order on every rank; when
//! several threads use one communicator, ordering them is the caller's job
//! (give each thread its own communicator with
//! [`dup`](Communicator::dup)). A [`Request`] is `Send`.
//!
//! # Finding libsmd
//!
//! The `smd-sys` build script links libsmd from `SMD_LIB_DIR`, else
//! `pkg-config smd`, else the Meson build tree of the checkout
//! (`build/src`), and makes `cargo test`/`cargo run` find it at run time.

#![warn(missing_docs)]

mod call;
mod coll;
mod comm;
mod datatype;
mod error;
mod group;
mod groups;
mod half;
mod init;
mod pod;
mod request;
mod shared;
mod topology;
mod vcoll;

pub use smd_sys as sys;

pub use comm::{Communicator, Stats, TransportStats};
pub use datatype::{Datatype, Op};
pub use error::{Error, ErrorCode, Result};
pub use group::Group;
pub use groups::{GroupKind, GroupLayout, Groups, GroupsConfig};
pub use half::{bf16, f16};
pub use init::InitOptions;
pub use pod::{Pod, pod_bytes, pod_bytes_mut};
pub use request::{Request, Scope, scope};
pub use shared::SharedSlice;
pub use topology::{HEADER_VERSION, RankInfo, Version, version};
pub use vcoll::{Source, Status};

#[cfg(test)]
mod tests {
    use super::*;

    fn send_and_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}

    /// The thread-safety promises of the crate documentation, checked.
    #[test]
    fn thread_safety_promises() {
        send_and_sync::<Communicator>();
        send_and_sync::<Groups>();
        send_and_sync::<Scope<'static>>();
        send::<Request<'static>>();
        send_and_sync::<SharedSlice<f32>>();
        send_and_sync::<Error>();
    }
}

/// The Rust code of bindings/rust/README.md, compiled and run as doctests
/// so that the README stays true.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
