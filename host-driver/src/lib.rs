//! `rnic-driver`: the verbs-style host driver (DESIGN.md §6, docs/driver.md).
//!
//! ```text
//! Context::open(bus) ─► alloc_pd ─► Pd::reg_mr ─► Mr (lkey/rkey)
//!                   ├─► create_cq ─► Cq::poll / req_notify / wait
//!                   └─► Pd::create_qp(cq, cq) ─► Qp::post_send / post_recv
//!                       listen / get_cm_event / accept / reject, Qp::connect
//! ```
//! The driver contains no `unsafe`: everything that needs it lives behind
//! the [`Bus`] trait.
#![forbid(unsafe_code)]

pub mod bus;
pub mod cm;
pub mod context;
pub mod cq;
pub mod error;
pub mod mailbox;
pub mod mr;
pub mod pd;
pub mod qp;
pub mod ring;
#[cfg(feature = "udp")]
pub mod udp_bus;

pub use bus::{Bus, BusError, DmaMem};
pub use cm::{CmEvent, ConnectParams, Listener, RetxTimer};
pub use context::{Context, DeviceCaps, NetConfig, Options};
pub use cq::{Cq, WorkCompletion};
pub use error::{DeviceError, Error, InputError, Result, WrError};
pub use mr::{AccessFlags, Mr};
pub use pd::Pd;
pub use qp::{Qp, RecvWr, RemoteAddr, SendOp, SendWr};
pub use rnic_wire::abi::cqe::{WcOpcode, WcStatus};
pub use rnic_wire::abi::mailbox::{EventKind, FilterAction, FilterRule, MpaOptions, QpState};
pub use rnic_wire::abi::wqe::Sge;
