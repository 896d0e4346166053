//! Memory protection: every tagged access (placement of RDMA Writes and
//! Read Responses, Read Request sources, receive and send SGEs, Send with
//! Invalidate) is checked and translated here. `tpt_arb` shares the one
//! check port among its four clients (`ddp_rx`, `rx_send`, `read_resp`,
//! `tx_seg`), and `tpt` holds the Translation and Protection Table and the
//! page lists and runs the check.

pub mod tpt;
pub mod tpt_arb;
