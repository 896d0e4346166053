//! Receive: from the MAC RX stream to placed data. `rx_check` checks the
//! Ethernet/IPv4/TCP headers and checksums on the MAC side, `rx_fifo`
//! stores frames whole and drops bad ones, `rx_parse` extracts the header
//! record and realigns the TCP payload, and `rx_split` looks the segment up
//! in `conn_table` and sends it to the fast path or to the firmware; on the
//! fast path `mpa_rx` (with its output queue `mpa_rx_outq`) deframes MPA
//! FPDUs, `fpdu_buffer` holds each FPDU until its MPA verdict is known,
//! `ddp_rx` decodes and checks the DDP/RDMAP segment and `placement` turns
//! tagged payload into DMA writes. Untagged messages go on to `completion`
//! (Sends) and `transmit` (Read Requests).

pub mod conn_table;
pub mod ddp_rx;
pub mod fpdu_buffer;
pub mod mpa_rx;
pub mod mpa_rx_outq;
pub mod placement;
pub mod rx_check;
pub mod rx_fifo;
pub mod rx_parse;
pub mod rx_split;
