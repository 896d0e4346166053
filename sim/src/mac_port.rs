//! Adapters between a model's MAC stream ports and frames (`Vec<u8>`,
//! Ethernet without FCS), one beat per cycle, per the MAC contract of
//! `docs/rtl.md`: byte 0 in `data[7:0]`, `keep` = byte count, `last`,
//! `valid`; `mac_rx_*` has no `ready` and carries `fcs_bad` on the last beat;
//! `mac_tx_*` has `ready`, which the adapter drives.
//!
//! The adapters see the model only through [`MacRxPins`] / [`MacTxPins`];
//! [`impl_mac_rx_pins!`] and [`impl_mac_tx_pins!`] implement them for a
//! model type from its port accessors (any stream with this shape can be
//! tapped by naming its accessors). Per cycle: `drive` (before `eval`),
//! model `eval`, `sample` (before the clock edge), clock edge.

use std::collections::VecDeque;

use crate::stream::{beats, Assembler, Beat};

/// The shortest Ethernet frame without its FCS: 64 octets on the wire with
/// the 4-octet FCS (IEEE 802.3 §3.2.8, minFrameSize). A MAC transmitting a
/// shorter frame (a 54-octet pure TCP ACK, a 42-octet ARP) pads it with zero
/// octets; the receiver finds the real length in the IP header.
pub const ETH_MIN_FRAME_NO_FCS: usize = 60;

/// Pads `frame` with zero octets to [`ETH_MIN_FRAME_NO_FCS`], as a MAC does.
pub fn pad_to_min(frame: &mut Vec<u8>) {
    if frame.len() < ETH_MIN_FRAME_NO_FCS {
        frame.resize(ETH_MIN_FRAME_NO_FCS, 0);
    }
}

/// A model's MAC receive input (`mac_rx_*`).
pub trait MacRxPins {
    /// Drives `mac_rx_*` for this cycle: `None` = `valid` low.
    fn set_mac_rx(&mut self, beat: Option<Beat>, fcs_bad: bool);
}

/// A model's stream output with `ready` (`mac_tx_*`, or any other).
pub trait MacTxPins {
    /// The beat presented (`None` if `valid` is low).
    fn mac_tx(&self) -> Option<Beat>;
    /// Drives the stream's `ready`.
    fn set_mac_tx_ready(&mut self, ready: bool);
}

/// Implements [`MacRxPins`] for a model type: by default over
/// `set_mac_rx_{data,keep,last,valid,fcs_bad}`, or over the five setters
/// named after `;`.
#[macro_export]
macro_rules! impl_mac_rx_pins {
    ($t:ty) => {
        $crate::impl_mac_rx_pins!($t; set_mac_rx_data, set_mac_rx_keep, set_mac_rx_last,
            set_mac_rx_valid, set_mac_rx_fcs_bad);
    };
    ($t:ty; $data:ident, $keep:ident, $last:ident, $valid:ident, $fcs:ident) => {
        impl $crate::mac_port::MacRxPins for $t {
            #[inline]
            fn set_mac_rx(&mut self, beat: Option<$crate::stream::Beat>, fcs_bad: bool) {
                match beat {
                    Some(b) => {
                        self.$data(b.data);
                        self.$keep(b.keep as u64);
                        self.$last(b.last as u64);
                        self.$valid(1);
                        self.$fcs((b.last && fcs_bad) as u64);
                    }
                    None => {
                        self.$valid(0);
                        self.$fcs(0);
                    }
                }
            }
        }
    };
}

/// Implements [`MacTxPins`] for a model type: by default over
/// `get_mac_tx_{data,keep,last,valid}` and `set_mac_tx_ready`, or over the
/// accessors named after `;` (e.g. the `rx_pay_*` stream of `rnic_core`).
#[macro_export]
macro_rules! impl_mac_tx_pins {
    ($t:ty) => {
        $crate::impl_mac_tx_pins!($t; get_mac_tx_data, get_mac_tx_keep, get_mac_tx_last,
            get_mac_tx_valid, set_mac_tx_ready);
    };
    ($t:ty; $data:ident, $keep:ident, $last:ident, $valid:ident, $ready:ident) => {
        impl $crate::mac_port::MacTxPins for $t {
            #[inline]
            fn mac_tx(&self) -> Option<$crate::stream::Beat> {
                (self.$valid() != 0).then(|| $crate::stream::Beat {
                    data: self.$data(),
                    keep: self.$keep() as u8,
                    last: self.$last() != 0,
                })
            }
            #[inline]
            fn set_mac_tx_ready(&mut self, ready: bool) {
                self.$ready(ready as u64)
            }
        }
    };
}

impl_mac_rx_pins!(verilator_sys::rnic_core::Model);

/// Frames into a model's `mac_rx_*`, one beat per cycle (the MAC cannot be
/// stalled), with `gap` idle cycles between frames.
#[derive(Debug, Default)]
pub struct MacRxPort {
    queue: VecDeque<(Vec<u8>, bool)>,
    cur: VecDeque<Beat>,
    cur_bad: bool,
    idle_left: u64,
    /// Idle cycles between frames (0: back to back).
    pub gap: u64,
    /// Frames fully sent into the model.
    pub frames_sent: u64,
}

impl MacRxPort {
    pub fn new(gap: u64) -> Self {
        MacRxPort {
            gap,
            ..Self::default()
        }
    }

    /// Queues a frame; `fcs_bad` marks it as failing the MAC's FCS check.
    pub fn push(&mut self, frame: Vec<u8>, fcs_bad: bool) {
        self.queue.push_back((frame, fcs_bad));
    }

    /// Frames not yet fully sent.
    pub fn pending(&self) -> usize {
        self.queue.len() + usize::from(!self.cur.is_empty())
    }

    /// Drives this cycle's beat (or idle) and advances; the model takes
    /// every valid beat at the next edge.
    pub fn drive<P: MacRxPins + ?Sized>(&mut self, pins: &mut P) {
        if self.cur.is_empty() && self.idle_left == 0 {
            if let Some((f, bad)) = self.queue.pop_front() {
                self.cur = beats(&f).into();
                self.cur_bad = bad;
            }
        }
        match self.cur.pop_front() {
            Some(b) => {
                pins.set_mac_rx(Some(b), self.cur_bad);
                if b.last {
                    self.frames_sent += 1;
                    self.idle_left = self.gap;
                }
            }
            None => {
                pins.set_mac_rx(None, false);
                self.idle_left = self.idle_left.saturating_sub(1);
            }
        }
    }
}

/// Frames out of a model's stream (`mac_tx_*`), honoring `ready`.
#[derive(Debug, Default)]
pub struct MacTxPort {
    asm: Assembler,
    ready: bool,
    mid_frame: bool,
    /// Cycles sampled since the current frame's first beat.
    cur_cycles: u64,
    last_frame_cycles: u64,
    /// Frames shorter than the Ethernet minimum are not padded (a tap on a
    /// stream that is not a MAC's).
    raw: bool,
    /// Frames received.
    pub frames: u64,
}

impl MacTxPort {
    /// The MAC on a model's `mac_tx_*`: frames come out padded to
    /// [`ETH_MIN_FRAME_NO_FCS`], as they leave on the wire.
    pub fn new() -> Self {
        Self::default()
    }

    /// A tap on any stream of that shape: packets come out as the model
    /// sent them, however short.
    pub fn tap() -> Self {
        Self {
            raw: true,
            ..Self::default()
        }
    }

    /// Drives `ready` for this cycle: high unless `hold` (e.g. the link's
    /// transmitter is busy), which takes effect only between frames — a MAC
    /// does not stall a frame it has started.
    pub fn drive<P: MacTxPins + ?Sized>(&mut self, pins: &mut P, hold: bool) {
        self.ready = self.mid_frame || !hold;
        pins.set_mac_tx_ready(self.ready);
    }

    /// Drives `ready` as given, even mid-frame (for tests of `ready`
    /// handling, or a sink that is not a MAC).
    pub fn drive_ready<P: MacTxPins + ?Sized>(&mut self, pins: &mut P, ready: bool) {
        self.ready = ready;
        pins.set_mac_tx_ready(ready);
    }

    /// Takes this cycle's beat if `valid && ready`; returns a frame on its
    /// last beat, padded to [`ETH_MIN_FRAME_NO_FCS`] as the MAC sends it
    /// (not by a [`MacTxPort::tap`]).
    /// Malformed beats (`keep` > 8, or < 8 before the last) drop the frame
    /// and count in [`MacTxPort::errors`].
    pub fn sample<P: MacTxPins + ?Sized>(&mut self, pins: &P) -> Option<Vec<u8>> {
        if self.mid_frame {
            self.cur_cycles += 1;
        }
        if !self.ready {
            return None;
        }
        let b = pins.mac_tx()?;
        if !self.mid_frame {
            self.cur_cycles = 1;
        }
        self.mid_frame = !b.last;
        match self.asm.push(b) {
            Ok(Some(mut f)) => {
                self.frames += 1;
                self.last_frame_cycles = self.cur_cycles;
                if !self.raw {
                    pad_to_min(&mut f);
                }
                Some(f)
            }
            Ok(None) => None,
            Err(_) => {
                self.mid_frame = false;
                None
            }
        }
    }

    /// Cycles from the first to the last beat of the frame last returned by
    /// `sample`, both included (1 for a one-beat frame): the frame started
    /// `frame_cycles() - 1` cycles before the one it was returned in.
    pub fn frame_cycles(&self) -> u64 {
        self.last_frame_cycles
    }

    /// Beats refused as malformed.
    pub fn errors(&self) -> u64 {
        self.asm.errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that presents one frame, then nothing.
    struct OneFrame(VecDeque<Beat>);

    impl MacTxPins for OneFrame {
        fn mac_tx(&self) -> Option<Beat> {
            self.0.front().copied()
        }
        fn set_mac_tx_ready(&mut self, _: bool) {}
    }

    fn out(mut port: MacTxPort, frame: &[u8]) -> Vec<u8> {
        let mut pins = OneFrame(beats(frame).into_iter().collect());
        loop {
            port.drive_ready(&mut pins, true);
            let f = port.sample(&pins);
            pins.0.pop_front();
            if let Some(f) = f {
                return f;
            }
            assert!(!pins.0.is_empty(), "frame never completed");
        }
    }

    /// A 54-octet pure ACK and a 42-octet ARP leave the MAC as 60 octets,
    /// zero-padded; a minimum-size or longer frame is unchanged; a tap
    /// passes short packets as they are.
    #[test]
    fn mac_pads_short_frames_to_the_ethernet_minimum() {
        for len in [1usize, 42, 54, 59] {
            let f: Vec<u8> = (1..=len as u8).collect();
            let got = out(MacTxPort::new(), &f);
            assert_eq!(got.len(), ETH_MIN_FRAME_NO_FCS, "{len}-octet frame");
            assert_eq!(&got[..len], &f[..]);
            assert!(got[len..].iter().all(|&b| b == 0), "pad is zero");
            assert_eq!(out(MacTxPort::tap(), &f), f, "tap: {len} octets");
        }
        for len in [60usize, 61, 1514] {
            let f: Vec<u8> = (0..len).map(|i| i as u8).collect();
            assert_eq!(out(MacTxPort::new(), &f), f, "{len}-octet frame");
        }
    }
}
