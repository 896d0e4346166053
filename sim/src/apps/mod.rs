//! Well-known RDMA applications written on the driver's verbs API, each
//! playing one side against the real tool (a Linux host on the external
//! port, `make interop`) or a scripted peer (the tests).
//!
//! * [`rping`]: rdma-core's `rping`, server and client;
//! * [`perftest`]: perftest's `ib_write_bw -R` and `ib_read_bw -R`, server
//!   and client.

pub mod perftest;
pub mod rping;
