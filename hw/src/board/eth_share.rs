//! One Ethernet port shared by the core and the UDP host bridge (the
//! ECPIX-5 top, `ecpix5_top.rs`), in the core clock:
//!
//! * [`RxSplit`]: the port's receive stream (after its CDC FIFO) → the
//!   bridge's `rx_*` or the core's `mac_rx_*`, a whole frame to one of
//!   them. To the bridge go (a) IPv4 (version 4, IHL 5) UDP datagrams to
//!   `rnic_wire::abi::bridge::BRIDGE_PORT` (0x5242) and (b) ARP requests
//!   (operation 1) whose target protocol address is `board_ip`, the
//!   bridge's address; everything else goes to the core (its firmware
//!   answers ARP for the RDMA address, and gets the replies to its own ARP
//!   requests even when the RDMA address is the bridge's). The bridge then
//!   applies its own checks (MAC, IPv4 address and checksum, lengths,
//!   magic) and drops what is not for it, as on a port of its own.
//!   The decision needs the first six beats (octets 0..47: the UDP
//!   destination port is octets 36-37, the ARP target address 38-41), so
//!   beats wait in a 32-beat FIFO until their frame's decision is made
//!   (at its sixth beat, or at its end if shorter); a frame leaves at one
//!   beat per clock. The input has no `ready` (a MAC receiver cannot be
//!   stalled) and beats arrive at most one per 4 core clocks on average at
//!   1 Gb/s, so the FIFO holds one frame's first beats and rarely more; if
//!   it fills, `overflow` (sticky until reset) is raised and beats are lost.
//! * [`TxArb`]: the core's `mac_tx_*` and the bridge's `tx_*` streams into
//!   the port's one transmitter, frame by frame (a frame's beats are never
//!   interleaved with another's): when idle, the next frame is taken from
//!   the requester that was not served last if both wait (round robin),
//!   and the grant holds until that frame's `last` beat is accepted. The
//!   bridge's frames leave its FIFO only when whole and the transmit CDC is
//!   store-and-forward, so neither source holds the port with a half frame
//!   for long; a bridge answer waits at most for one core frame (≤ 1518
//!   octets, ~12 µs at 1 Gb/s).
//!
//! Streams are the core's convention (`docs/rtl.md`): `data[63:0]` with
//! octet 0 in bits 7:0, `keep` = octet count of a `last` beat.

use crate::fifo::Fifo;
use rust_hdl::prelude::*;

/// Receive split (module doc).
#[derive(LogicBlock, Default)]
pub struct RxSplit {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The bridge's IPv4 address (first octet in bits 31:24).
    pub board_ip: Signal<In, Bits<32>>,
    pub in_data: Signal<In, Bits<64>>,
    pub in_keep: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_fcs_bad: Signal<In, Bit>,
    /// To the core (`mac_rx_*`).
    pub core_data: Signal<Out, Bits<64>>,
    pub core_keep: Signal<Out, Bits<4>>,
    pub core_last: Signal<Out, Bit>,
    pub core_valid: Signal<Out, Bit>,
    pub core_fcs_bad: Signal<Out, Bit>,
    /// To the bridge (`rx_*`).
    pub br_data: Signal<Out, Bits<64>>,
    pub br_keep: Signal<Out, Bits<4>>,
    pub br_last: Signal<Out, Bit>,
    pub br_valid: Signal<Out, Bit>,
    pub br_fcs_bad: Signal<Out, Bit>,
    /// Sticky: a beat was lost because the FIFO was full.
    pub overflow: Signal<Out, Bit>,
    /// {fcs_bad, last, keep, data}.
    beats: Fifo<Bits<70>, 5, 6>,
    /// One decision per frame, in frame order: 1 = bridge. As deep as
    /// `beats` (a frame has at least one beat there while its decision
    /// waits), so it fills only when `beats` does.
    dec: Fifo<Bits<1>, 5, 6>,
    /// Beat index in the current input frame (saturates at 6).
    bi: DFF<Bits<3>>,
    /// Header matches so far: IPv4 with IHL 5 / ARP (beat 1), UDP / ARP
    /// request (beat 2), UDP port / first half of the ARP target (beat 4).
    m_ip: DFF<Bit>,
    m_arp: DFF<Bit>,
    m_udp: DFF<Bit>,
    m_req: DFF<Bit>,
    m_port: DFF<Bit>,
    m_tpa: DFF<Bit>,
    ovf: DFF<Bit>,
    o_data: DFF<Bits<64>>,
    o_keep: DFF<Bits<4>>,
    o_last: DFF<Bit>,
    o_fcs_bad: DFF<Bit>,
    o_core: DFF<Bit>,
    o_br: DFF<Bit>,
    to_bridge: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
}

impl Logic for RxSplit {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, beats, dec);
        dff_setup!(
            self, clock, bi, m_ip, m_arp, m_udp, m_req, m_port, m_tpa, ovf, o_data, o_keep, o_last,
            o_fcs_bad, o_core, o_br
        );
        self.beats.reset.next = self.reset.val();
        self.dec.reset.next = self.reset.val();

        // Write side: every beat into the FIFO, the header checks on the
        // way (octet k of the frame is beat k / 8, bits 8 (k % 8) + 7..).
        self.beats.data_in.next = bit_cast::<70, 64>(self.in_data.val())
            | (bit_cast::<70, 4>(self.in_keep.val()) << 64)
            | (bit_cast::<70, 1>(self.in_last.val().into()) << 68)
            | (bit_cast::<70, 1>(self.in_fcs_bad.val().into()) << 69);
        self.beats.write.next = self.in_valid.val();
        if self.in_valid.val() & (self.beats.full.val() | self.dec.full.val()) {
            self.ovf.d.next = true;
        }
        // Octets 40-41 (beat 5, lanes 0-1): the ARP target's second half.
        self.to_bridge.next = (self.m_ip.q.val() & self.m_udp.q.val() & self.m_port.q.val())
            | (self.m_arp.q.val()
                & self.m_req.q.val()
                & self.m_tpa.q.val()
                & (self.in_data.val().get_bits::<8>(0) == self.board_ip.val().get_bits::<8>(8))
                & (self.in_data.val().get_bits::<8>(8) == self.board_ip.val().get_bits::<8>(0)));
        self.dec.data_in.next = bit_cast::<1, 1>(self.to_bridge.val().into());
        self.dec.write.next = false;
        if self.in_valid.val() {
            if self.bi.q.val() == 5 {
                self.dec.write.next = true;
            } else if self.in_last.val() & (self.bi.q.val() < 5) {
                // Shorter than six beats: neither a bridge datagram nor an
                // ARP request (the core counts and drops runts).
                self.dec.write.next = true;
                self.dec.data_in.next = 0.into();
            }
            if self.bi.q.val() == 1 {
                // EtherType (octets 12-13), version/IHL (octet 14).
                self.m_ip.d.next = (self.in_data.val().get_bits::<16>(32) == 0x0008)
                    & (self.in_data.val().get_bits::<8>(48) == 0x45);
                self.m_arp.d.next = self.in_data.val().get_bits::<16>(32) == 0x0608;
            }
            if self.bi.q.val() == 2 {
                // IPv4 protocol (octet 23); ARP operation (octets 20-21).
                self.m_udp.d.next = self.in_data.val().get_bits::<8>(56) == 17;
                self.m_req.d.next = self.in_data.val().get_bits::<16>(32) == 0x0100;
            }
            if self.bi.q.val() == 4 {
                // UDP destination port (octets 36-37), BRIDGE_PORT 0x5242;
                // ARP target address, first half (octets 38-39).
                self.m_port.d.next = self.in_data.val().get_bits::<16>(32) == 0x4252;
                self.m_tpa.d.next = (self.in_data.val().get_bits::<8>(48)
                    == self.board_ip.val().get_bits::<8>(24))
                    & (self.in_data.val().get_bits::<8>(56)
                        == self.board_ip.val().get_bits::<8>(16));
            }
            if self.bi.q.val() != 6 {
                self.bi.d.next = self.bi.q.val() + 1;
            }
            if self.in_last.val() {
                self.bi.d.next = 0.into();
            }
        }

        // Read side: the head frame's beats, once its decision is known,
        // one per clock to the side it chose (registered outputs).
        self.take.next = !self.beats.empty.val() & !self.dec.empty.val();
        self.beats.read.next = self.take.val();
        self.dec.read.next = self.take.val() & self.beats.data_out.val().get_bit(68);
        self.o_data.d.next = self.beats.data_out.val().get_bits::<64>(0);
        self.o_keep.d.next = self.beats.data_out.val().get_bits::<4>(64);
        self.o_last.d.next = self.beats.data_out.val().get_bit(68);
        self.o_fcs_bad.d.next = self.beats.data_out.val().get_bit(69);
        self.o_br.d.next = self.take.val() & self.dec.data_out.val().any();
        self.o_core.d.next = self.take.val() & !self.dec.data_out.val().any();
        self.core_data.next = self.o_data.q.val();
        self.core_keep.next = self.o_keep.q.val();
        self.core_last.next = self.o_last.q.val();
        self.core_fcs_bad.next = self.o_fcs_bad.q.val();
        self.core_valid.next = self.o_core.q.val();
        self.br_data.next = self.o_data.q.val();
        self.br_keep.next = self.o_keep.q.val();
        self.br_last.next = self.o_last.q.val();
        self.br_fcs_bad.next = self.o_fcs_bad.q.val();
        self.br_valid.next = self.o_br.q.val();
        self.overflow.next = self.ovf.q.val();

        if self.reset.val() {
            self.bi.d.next = 0.into();
            self.ovf.d.next = false;
            self.o_core.d.next = false;
            self.o_br.d.next = false;
        }
    }
}

/// Frame-level round-robin transmit arbiter (module doc).
#[derive(LogicBlock, Default)]
pub struct TxArb {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Requester 0: the core's `mac_tx_*`.
    pub a_data: Signal<In, Bits<64>>,
    pub a_keep: Signal<In, Bits<4>>,
    pub a_last: Signal<In, Bit>,
    pub a_valid: Signal<In, Bit>,
    pub a_ready: Signal<Out, Bit>,
    /// Requester 1: the bridge's `tx_*`.
    pub b_data: Signal<In, Bits<64>>,
    pub b_keep: Signal<In, Bits<4>>,
    pub b_last: Signal<In, Bit>,
    pub b_valid: Signal<In, Bit>,
    pub b_ready: Signal<Out, Bit>,
    pub out_data: Signal<Out, Bits<64>>,
    pub out_keep: Signal<Out, Bits<4>>,
    pub out_last: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// A frame is under way (its first beat was accepted, not its last).
    busy: DFF<Bit>,
    /// The owner of the frame under way (1 = b).
    owner: DFF<Bit>,
    /// The requester served last (1 = b).
    served: DFF<Bit>,
    sel: Signal<Local, Bit>,
}

impl Logic for TxArb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, owner, served);
        // Idle: b if only b waits, or both wait and a was served last.
        self.sel.next = self.owner.q.val();
        if !self.busy.q.val() {
            self.sel.next = self.b_valid.val() & (!self.a_valid.val() | !self.served.q.val());
        }
        if self.sel.val() {
            self.out_data.next = self.b_data.val();
            self.out_keep.next = self.b_keep.val();
            self.out_last.next = self.b_last.val();
            self.out_valid.next = self.b_valid.val();
        } else {
            self.out_data.next = self.a_data.val();
            self.out_keep.next = self.a_keep.val();
            self.out_last.next = self.a_last.val();
            self.out_valid.next = self.a_valid.val();
        }
        self.a_ready.next = self.out_ready.val() & !self.sel.val();
        self.b_ready.next = self.out_ready.val() & self.sel.val();
        if self.out_valid.val() & self.out_ready.val() {
            if self.out_last.val() {
                self.busy.d.next = false;
                self.served.d.next = self.sel.val();
            } else {
                self.busy.d.next = true;
                self.owner.d.next = self.sel.val();
            }
        }
        if self.reset.val() {
            self.busy.d.next = false;
            self.owner.d.next = false;
            self.served.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tick;

    /// Two sources offering frames at once: the output carries whole
    /// frames, alternating between them, each beat exactly once.
    #[test]
    fn arbiter_alternates_whole_frames() {
        let mut uut = TxArb::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.a_data.connect();
        uut.b_data.connect();
        uut.a_keep.connect();
        uut.a_last.connect();
        uut.a_valid.connect();
        uut.b_keep.connect();
        uut.b_last.connect();
        uut.b_valid.connect();
        uut.out_ready.connect();
        uut.connect_all();
        // Frames of 3 beats; beat value = source << 8 | frame << 4 | beat.
        let mut next = [(0u64, 0u64); 2];
        let mut out: Vec<u64> = Vec::new();
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        for cyc in 0..200u64 {
            for (s, (f, b)) in next.iter().enumerate() {
                let v = ((s as u64) << 8) | (f << 4) | b;
                let more = *f < 4;
                if s == 0 {
                    uut.a_data.next = v.into();
                    uut.a_last.next = *b == 2;
                    uut.a_valid.next = more;
                } else {
                    uut.b_data.next = v.into();
                    uut.b_last.next = *b == 2;
                    uut.b_valid.next = more;
                }
            }
            // Stall the output now and then.
            uut.out_ready.next = cyc % 5 != 3;
            uut.clock.next = false.into();
            assert!(simulate(&mut uut, 1000), "did not settle");
            let (av, ar) = (uut.a_valid.val(), uut.a_ready.val());
            let (bv, br) = (uut.b_valid.val(), uut.b_ready.val());
            if uut.out_valid.val() & uut.out_ready.val() {
                out.push(uut.out_data.val().to_u64());
            }
            for (s, fire) in [(0, av & ar), (1, bv & br)] {
                if fire {
                    let (f, b) = &mut next[s];
                    *b += 1;
                    if *b == 3 {
                        *b = 0;
                        *f += 1;
                    }
                }
            }
            tick!(uut);
        }
        assert_eq!(out.len(), 24, "every beat once: {out:x?}");
        for (i, frame) in out.chunks(3).enumerate() {
            let src = (frame[0] >> 8) as usize;
            // After reset `served` says the core (a) went last, so the
            // bridge (b) goes first; then they alternate.
            assert_eq!(src, (i + 1) % 2, "round robin: {out:x?}");
            for (b, &v) in frame.iter().enumerate() {
                assert_eq!(v, ((src as u64) << 8) | (((i / 2) as u64) << 4) | b as u64);
            }
        }
    }
}
