//! Firmware port: what the firmware sees of the device. `exc_arb` merges
//! the exception records (frames from `rx_parse`, received Terminates,
//! send-queue errors, CQ overruns) into `exc_queue`, which holds them for
//! the firmware, and `fw_port` is the firmware's register port: exception
//! queue, frame transmit and inject, table writes (connections, QPs, TPT,
//! CQs), Terminate requests and the mailbox.

pub mod exc_arb;
pub mod exc_queue;
pub mod fw_port;
