//! Transmit: from a host doorbell to frames on the MAC TX stream.
//! `doorbell` turns the host's send-queue producer writes into a pending
//! bitmap, `tx_sched` picks the next QP, `wqe_fetch` reads and parses its
//! send WQEs, and `tx_seg` cuts each WQE into DDP segments, one descriptor
//! and one payload DMA read each; the Read responder (`rreq_queue`, which
//! takes the Read Requests off `ddp_rx`, and `read_resp`) adds Read
//! Response descriptors. `tx_framer` builds one Ethernet/IPv4/TCP frame per
//! FPDU from a descriptor and its payload, through `tx_ddp_hdr` (MPA length
//! and DDP/RDMAP header), `tx_mpa` (MPA framing, markers, CRC) and
//! `tx_tcp_hdr` (headers and checksums). `tx_log` records every data FPDU
//! and replays a connection's unacknowledged ones (go-back-N), on the
//! firmware's request or `fast_retx`'s (third duplicate ACK); `tx_ack`
//! sends pure ACK frames.

pub mod doorbell;
pub mod fast_retx;
pub mod inline_rd;
pub mod read_resp;
pub mod rreq_queue;
pub mod tx_ack;
pub mod tx_ddp_hdr;
pub mod tx_framer;
pub mod tx_log;
pub mod tx_mpa;
pub mod tx_sched;
pub mod tx_seg;
pub mod tx_tcp_hdr;
pub mod wqe_fetch;
