//! RX parse: Ethernet/IPv4/TCP header record and payload realignment, on
//! `rx_fifo`'s output.
//!
//! Frames arrive whole (store-and-forward) with the `rx_check` verdict as
//! `in_tag` (see rx_check.rs), so every check is already done:
//! * `TAG_BAD_*`: the frame is consumed at one beat per clock and counted
//!   (`cnt_bad_len`, `cnt_bad_ip_csum`, `cnt_bad_tcp_csum`);
//! * `TAG_EXC_*` (ARP, other EtherTypes, IPv4 fragments, not TCP): the frame
//!   goes whole on `raw_*` to the exception queue, committed on its last beat
//!   with reason `NoMatch` (0) and no connection;
//! * `TAG_OK`: a TCP segment. Its header fields are extracted into the
//!   header record (`eth_*` .. `hdr_len`); `tuple_valid` rises when the
//!   4-tuple is known (beat `tb` with TCP at byte 2, else `tb+1`; `tb` = the
//!   beat where TCP starts) and
//!   `hdr_valid` when seq/ack/flags/window/lengths are (beat `tb+2`). The
//!   decision comes back from `rx_split` (`dec_*`): fast path (the payload,
//!   realigned to byte 0, leaves on `pay_*`) or exception (the frame goes to
//!   `raw_*` and is committed with `dec_reason`/`dec_conn`). `done` pulses
//!   when the segment is finished (its last payload beat taken); the record
//!   and the decision must stay put until then.
//!
//! # Field positions
//! Every header starts at an even offset 14 + 4k, so the TCP header starts
//! at byte 2 or 6 of beat `tb` and the payload at byte 2 or 6 of beat `pb`.
//! Fields are read from the window `{current beat, previous beat}` (16 bytes;
//! `win` holds its bytes 2..14, so `win` byte `n` is window byte `n + 2`) at
//! one of two byte positions each. Fields are captured from the beat on
//! offer (`in_valid`), whether or not it is taken, so a segment whose header
//! ends in its last beat (a pure ACK) can be decided before that beat is
//! consumed.
//!
//! # Flow
//! One beat per clock, except: a beat that emits payload, and the last beat
//! of a TCP segment, wait for the decision (bubbles only when the payload
//! starts within 2 beats after the header, i.e. segments without TCP
//! options: see docs/rtl.md for measured numbers); a fast-path payload whose
//! end lies past the realignment point of the last beat needs one more
//! output beat (`tail`), during which no input is taken. Payload beyond
//! the IPv4 total length (Ethernet padding) is never emitted. A segment with
//! no payload is one beat `last = 1, keep = 0` on `pay_*`.

// Tag values: `crate::receive::rx_check::TAG_*` (written as literals in `update`: hdl_gen
// cannot see Rust constants).
use rust_hdl::prelude::*;

/// `ExceptionReason::NoMatch` (rnic_wire::abi::context).
pub const REASON_NO_MATCH: u64 = 0;
/// `EXC_CONN` value for "no connection" (rnic_wire::abi::context::port).
pub const CONN_NONE: u64 = 0xFFFF_FFFF;

#[derive(LogicBlock, Default)]
pub struct RxParse {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // frames from rx_fifo
    pub in_data: Signal<In, Bits<64>>,
    pub in_keep: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_tag: Signal<In, Bits<4>>,
    pub in_ready: Signal<Out, Bit>,
    // header record (network-order values; MACs as 48-bit big-endian)
    pub eth_dst: Signal<Out, Bits<48>>,
    pub eth_src: Signal<Out, Bits<48>>,
    pub ip_src: Signal<Out, Bits<32>>,
    pub ip_dst: Signal<Out, Bits<32>>,
    pub sport: Signal<Out, Bits<16>>,
    pub dport: Signal<Out, Bits<16>>,
    pub seq: Signal<Out, Bits<32>>,
    pub ack: Signal<Out, Bits<32>>,
    /// TCP flags byte (CWR ECE URG ACK PSH RST SYN FIN).
    pub flags: Signal<Out, Bits<8>>,
    pub window: Signal<Out, Bits<16>>,
    /// TCP payload octets (IPv4 total length - IPv4 header - TCP header).
    pub pay_len: Signal<Out, Bits<16>>,
    /// Frame offset of the payload (Ethernet + IPv4 + TCP headers).
    pub hdr_len: Signal<Out, Bits<8>>,
    pub tuple_valid: Signal<Out, Bit>,
    pub hdr_valid: Signal<Out, Bit>,
    pub done: Signal<Out, Bit>,
    // decision from rx_split
    pub dec_valid: Signal<In, Bit>,
    pub dec_fast: Signal<In, Bit>,
    pub dec_reason: Signal<In, Bits<8>>,
    pub dec_conn: Signal<In, Bits<32>>,
    // realigned payload of fast-path segments
    pub pay_data: Signal<Out, Bits<64>>,
    pub pay_keep: Signal<Out, Bits<4>>,
    pub pay_last: Signal<Out, Bit>,
    pub pay_valid: Signal<Out, Bit>,
    pub pay_ready: Signal<In, Bit>,
    // whole frames to the exception queue (no backpressure)
    pub raw_data: Signal<Out, Bits<64>>,
    pub raw_keep: Signal<Out, Bits<4>>,
    pub raw_last: Signal<Out, Bit>,
    pub raw_valid: Signal<Out, Bit>,
    pub raw_commit: Signal<Out, Bit>,
    pub raw_reason: Signal<Out, Bits<8>>,
    pub raw_conn: Signal<Out, Bits<32>>,
    pub cnt_bad_len: Signal<Out, Bits<32>>,
    pub cnt_bad_ip_csum: Signal<Out, Bits<32>>,
    pub cnt_bad_tcp_csum: Signal<Out, Bits<32>>,
    // state
    bc: DFF<Bits<8>>,
    prev: DFF<Bits<64>>,
    ihl: DFF<Bits<4>>,
    tot_len: DFF<Bits<16>>,
    /// Beat where TCP starts, and whether at byte 6 (else 2).
    tb: DFF<Bits<8>>,
    tcp_hi: DFF<Bit>,
    /// Beat where the payload starts, and whether at byte 6 (else 2).
    pb: DFF<Bits<8>>,
    pay_hi: DFF<Bit>,
    /// Payload octets not yet emitted.
    prem: DFF<Bits<16>>,
    r_eth_dst: DFF<Bits<48>>,
    r_eth_src: DFF<Bits<48>>,
    r_ip_src: DFF<Bits<32>>,
    r_ip_dst: DFF<Bits<32>>,
    r_sport: DFF<Bits<16>>,
    r_dport: DFF<Bits<16>>,
    r_seq: DFF<Bits<32>>,
    r_ack: DFF<Bits<32>>,
    r_flags: DFF<Bits<8>>,
    r_window: DFF<Bits<16>>,
    r_pay_len: DFF<Bits<16>>,
    r_hdr_len: DFF<Bits<8>>,
    tv: DFF<Bit>,
    hv: DFF<Bit>,
    tail_pend: DFF<Bit>,
    tail_data: DFF<Bits<64>>,
    tail_keep: DFF<Bits<4>>,
    c_bad_len: DFF<Bits<32>>,
    c_bad_ip: DFF<Bits<32>>,
    c_bad_tcp: DFF<Bits<32>>,
    // temporaries
    /// Bytes 2..14 of {current beat, previous beat}: all the bytes any field
    /// is read from (bytes 0, 1, 14, 15 never are).
    win: Signal<Local, Bits<96>>,
    is_tcp: Signal<Local, Bit>,
    peek: Signal<Local, Bit>,
    ihl_now: Signal<Local, Bits<8>>,
    ihl4: Signal<Local, Bits<8>>,
    tstart: Signal<Local, Bits<8>>,
    tb8: Signal<Local, Bits<8>>,
    doff4: Signal<Local, Bits<8>>,
    doff_now: Signal<Local, Bits<8>>,
    pstart: Signal<Local, Bits<8>>,
    wdata: Signal<Local, Bits<64>>,
    emit: Signal<Local, Bit>,
    emit_empty: Signal<Local, Bit>,
    emit_any: Signal<Local, Bit>,
    need_dec: Signal<Local, Bit>,
    fast: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    rem_after: Signal<Local, Bits<16>>,
    need_tail: Signal<Local, Bit>,
    /// Zero; its complement is `CONN_NONE`.
    zero32: Signal<Local, Bits<32>>,
}

impl Logic for RxParse {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, bc, prev, ihl, tot_len, tb, tcp_hi, pb, pay_hi, prem, r_eth_dst,
            r_eth_src, r_ip_src, r_ip_dst, r_sport, r_dport, r_seq, r_ack, r_flags, r_window,
            r_pay_len, r_hdr_len, tv, hv, tail_pend, tail_data, tail_keep, c_bad_len, c_bad_ip,
            c_bad_tcp
        );
        self.is_tcp.next = self.in_tag.val() == 0; // TAG_OK
        self.win.next = (bit_cast::<96, 48>(self.in_data.val().get_bits::<48>(0)) << 48)
            | bit_cast::<96, 48>(self.prev.q.val().get_bits::<48>(16));
        // A beat on offer whose fields may be captured (not while the previous
        // segment's tail is still going out: its record must stay put).
        self.peek.next = self.in_valid.val() & !self.tail_pend.q.val();

        // ---- header fields
        self.ihl_now.next = bit_cast::<8, 4>(self.in_data.val().get_bits::<4>(48));
        self.ihl4.next = self.ihl_now.val() << 2;
        self.tstart.next = self.ihl4.val() + 14;
        self.doff_now.next = bit_cast::<8, 4>(self.in_data.val().get_bits::<4>(20));
        if !self.tcp_hi.q.val() {
            self.doff_now.next = bit_cast::<8, 4>(self.prev.q.val().get_bits::<4>(52));
        }
        self.tb8.next = self.tb.q.val() << 3;
        self.doff4.next = self.doff_now.val() << 2;
        self.pstart.next = self.tb8.val() + self.doff4.val() + 2;
        if self.tcp_hi.q.val() {
            self.pstart.next = self.tb8.val() + self.doff4.val() + 6;
        }
        if self.peek.val() {
            if self.bc.q.val() == 0 {
                self.r_eth_dst.d.next = (bit_cast::<48, 8>(self.in_data.val().get_bits::<8>(0))
                    << 40)
                    | (bit_cast::<48, 8>(self.in_data.val().get_bits::<8>(8)) << 32)
                    | (bit_cast::<48, 8>(self.in_data.val().get_bits::<8>(16)) << 24)
                    | (bit_cast::<48, 8>(self.in_data.val().get_bits::<8>(24)) << 16)
                    | (bit_cast::<48, 8>(self.in_data.val().get_bits::<8>(32)) << 8)
                    | bit_cast::<48, 8>(self.in_data.val().get_bits::<8>(40));
            }
            if self.bc.q.val() == 1 {
                // source MAC: bytes 6, 7 of beat 0 and 0..3 of beat 1
                self.r_eth_src.d.next = (bit_cast::<48, 8>(self.win.val().get_bits::<8>(32)) << 40)
                    | (bit_cast::<48, 8>(self.win.val().get_bits::<8>(40)) << 32)
                    | (bit_cast::<48, 8>(self.win.val().get_bits::<8>(48)) << 24)
                    | (bit_cast::<48, 8>(self.win.val().get_bits::<8>(56)) << 16)
                    | (bit_cast::<48, 8>(self.win.val().get_bits::<8>(64)) << 8)
                    | bit_cast::<48, 8>(self.win.val().get_bits::<8>(72));
                self.ihl.d.next = self.in_data.val().get_bits::<4>(48);
                self.tb.d.next = self.tstart.val() >> 3;
                self.tcp_hi.d.next = self.tstart.val().get_bit(2);
            }
            if self.bc.q.val() == 2 {
                self.tot_len.d.next = (bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(0)) << 8)
                    | bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(8));
            }
            if self.bc.q.val() == 4 {
                // source address: bytes 26..30 = beat 3 bytes 2..6;
                // destination: bytes 30..34 = beat 3 bytes 6, 7, beat 4 bytes 0, 1
                self.r_ip_src.d.next = (bit_cast::<32, 8>(self.win.val().get_bits::<8>(0)) << 24)
                    | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(8)) << 16)
                    | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(16)) << 8)
                    | bit_cast::<32, 8>(self.win.val().get_bits::<8>(24));
                self.r_ip_dst.d.next = (bit_cast::<32, 8>(self.win.val().get_bits::<8>(32)) << 24)
                    | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(40)) << 16)
                    | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(48)) << 8)
                    | bit_cast::<32, 8>(self.win.val().get_bits::<8>(56));
            }
            // TCP at byte 2 of beat `tb` (IHL 5, no IPv4 options): both ports
            // are in that beat (window bytes 10..14), so the 4-tuple is
            // known, and `rx_split`'s decision comes, a clock earlier than
            // with the sequence number at `tb + 1`. At line rate every clock
            // counts: the wire leaves 2.25 clocks per 1514-octet frame beyond
            // its 190 beats, and the first payload beat waits for the
            // decision.
            if self.is_tcp.val()
                & (self.bc.q.val() >= 4)
                & (self.bc.q.val() == self.tb.q.val())
                & !self.tcp_hi.q.val()
            {
                self.r_sport.d.next = (bit_cast::<16, 8>(self.win.val().get_bits::<8>(64)) << 8)
                    | bit_cast::<16, 8>(self.win.val().get_bits::<8>(72));
                self.r_dport.d.next = (bit_cast::<16, 8>(self.win.val().get_bits::<8>(80)) << 8)
                    | bit_cast::<16, 8>(self.win.val().get_bits::<8>(88));
                self.tv.d.next = true;
            }
            // (TCP starts at beat 4 or later when IHL >= 5: `tb` of a previous
            // frame, or 0 after reset, must not match at beats 0..3)
            if self.is_tcp.val()
                & (self.bc.q.val() >= 4)
                & (self.bc.q.val() == (self.tb.q.val() + 1))
            {
                // TCP bytes 0..8 at window offset 2 (TCP at byte 2) or 6
                if self.tcp_hi.q.val() {
                    self.r_sport.d.next = (bit_cast::<16, 8>(self.win.val().get_bits::<8>(32))
                        << 8)
                        | bit_cast::<16, 8>(self.win.val().get_bits::<8>(40));
                    self.r_dport.d.next = (bit_cast::<16, 8>(self.win.val().get_bits::<8>(48))
                        << 8)
                        | bit_cast::<16, 8>(self.win.val().get_bits::<8>(56));
                    self.r_seq.d.next = (bit_cast::<32, 8>(self.win.val().get_bits::<8>(64)) << 24)
                        | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(72)) << 16)
                        | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(80)) << 8)
                        | bit_cast::<32, 8>(self.win.val().get_bits::<8>(88));
                } else {
                    self.r_sport.d.next = (bit_cast::<16, 8>(self.win.val().get_bits::<8>(0)) << 8)
                        | bit_cast::<16, 8>(self.win.val().get_bits::<8>(8));
                    self.r_dport.d.next = (bit_cast::<16, 8>(self.win.val().get_bits::<8>(16))
                        << 8)
                        | bit_cast::<16, 8>(self.win.val().get_bits::<8>(24));
                    self.r_seq.d.next = (bit_cast::<32, 8>(self.win.val().get_bits::<8>(32)) << 24)
                        | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(40)) << 16)
                        | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(48)) << 8)
                        | bit_cast::<32, 8>(self.win.val().get_bits::<8>(56));
                }
                self.tv.d.next = true;
            }
            if self.is_tcp.val()
                & (self.bc.q.val() >= 4)
                & (self.bc.q.val() == (self.tb.q.val() + 2))
            {
                // TCP bytes 8..16 at window offset 2 (TCP at byte 2) or 6
                if self.tcp_hi.q.val() {
                    self.r_ack.d.next = (bit_cast::<32, 8>(self.win.val().get_bits::<8>(32)) << 24)
                        | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(40)) << 16)
                        | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(48)) << 8)
                        | bit_cast::<32, 8>(self.win.val().get_bits::<8>(56));
                    self.r_flags.d.next = self.win.val().get_bits::<8>(72);
                    self.r_window.d.next = (bit_cast::<16, 8>(self.win.val().get_bits::<8>(80))
                        << 8)
                        | bit_cast::<16, 8>(self.win.val().get_bits::<8>(88));
                } else {
                    self.r_ack.d.next = (bit_cast::<32, 8>(self.win.val().get_bits::<8>(0)) << 24)
                        | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(8)) << 16)
                        | (bit_cast::<32, 8>(self.win.val().get_bits::<8>(16)) << 8)
                        | bit_cast::<32, 8>(self.win.val().get_bits::<8>(24));
                    self.r_flags.d.next = self.win.val().get_bits::<8>(40);
                    self.r_window.d.next = (bit_cast::<16, 8>(self.win.val().get_bits::<8>(48))
                        << 8)
                        | bit_cast::<16, 8>(self.win.val().get_bits::<8>(56));
                }
                self.pb.d.next = self.pstart.val() >> 3;
                self.pay_hi.d.next = self.pstart.val().get_bit(2);
                self.r_hdr_len.d.next = self.pstart.val();
                self.r_pay_len.d.next =
                    self.tot_len.q.val() + 14 - bit_cast::<16, 8>(self.pstart.val());
                self.prem.d.next = self.tot_len.q.val() + 14 - bit_cast::<16, 8>(self.pstart.val());
                self.hv.d.next = true;
            }
        }

        // ---- payload realignment: W bytes 2..10 or 6..14
        if self.pay_hi.q.val() {
            self.wdata.next = (self.prev.q.val() >> 48) | (self.in_data.val() << 16);
        } else {
            self.wdata.next = (self.prev.q.val() >> 16) | (self.in_data.val() << 48);
        }
        self.emit.next = self.is_tcp.val()
            & self.hv.q.val()
            & (self.bc.q.val() > self.pb.q.val())
            & (self.prem.q.val() != 0);
        self.emit_empty.next = self.is_tcp.val()
            & self.hv.q.val()
            & self.in_last.val()
            & (self.r_pay_len.q.val() == 0);
        self.emit_any.next = self.emit.val() | self.emit_empty.val();
        self.need_dec.next = self.is_tcp.val() & (self.emit.val() | self.in_last.val());
        self.fast.next = self.dec_valid.val() & self.dec_fast.val();
        // payload left after this beat (last beat: what the tail must carry)
        self.rem_after.next = 0.into();
        if self.emit.val() {
            if self.prem.q.val() > 8 {
                self.rem_after.next = self.prem.q.val() - 8;
            }
        } else if self.bc.q.val() == self.pb.q.val() {
            self.rem_after.next = self.prem.q.val();
        }
        self.need_tail.next =
            self.is_tcp.val() & self.hv.q.val() & self.in_last.val() & (self.rem_after.val() != 0);

        self.take.next = false;
        if self.in_valid.val() & !self.tail_pend.q.val() {
            if !self.need_dec.val() {
                self.take.next = true;
            } else if self.dec_valid.val() {
                self.take.next = !self.fast.val() | !self.emit_any.val() | self.pay_ready.val();
            }
        }
        self.in_ready.next = self.take.val();

        // ---- payload out
        self.pay_valid.next = false;
        self.pay_data.next = self.wdata.val();
        self.pay_keep.next = 8.into();
        self.pay_last.next = false;
        if self.prem.q.val() <= 8 {
            self.pay_keep.next = self.prem.q.val().get_bits::<4>(0);
            self.pay_last.next = !self.need_tail.val();
        }
        if self.emit_empty.val() {
            self.pay_keep.next = 0.into();
            self.pay_last.next = true;
        }
        if self.tail_pend.q.val() {
            self.pay_valid.next = true;
            self.pay_data.next = self.tail_data.q.val();
            self.pay_keep.next = self.tail_keep.q.val();
            self.pay_last.next = true;
        } else if self.in_valid.val()
            & self.emit_any.val()
            & self.dec_valid.val()
            & self.dec_fast.val()
        {
            self.pay_valid.next = true;
        }

        // ---- raw frame out
        self.raw_data.next = self.in_data.val();
        self.raw_keep.next = self.in_keep.val();
        self.raw_last.next = self.in_last.val();
        self.raw_valid.next = self.take.val();
        self.raw_commit.next = false;
        self.raw_reason.next = 0.into(); // REASON_NO_MATCH
        self.zero32.next = 0.into();
        self.raw_conn.next = !self.zero32.val(); // CONN_NONE
        if self.is_tcp.val() {
            self.raw_commit.next = !self.fast.val();
            self.raw_reason.next = self.dec_reason.val();
            self.raw_conn.next = self.dec_conn.val();
        } else if self.in_tag.val() < 3 {
            // TAG_BAD_LEN
            self.raw_commit.next = true;
        }

        // ---- state updates
        self.done.next = false;
        if self.tail_pend.q.val() & self.pay_ready.val() {
            self.tail_pend.d.next = false;
            self.done.next = true;
            self.tv.d.next = false;
            self.hv.d.next = false;
        }
        if self.take.val() {
            self.prev.d.next = self.in_data.val();
            if self.emit.val() {
                if self.prem.q.val() > 8 {
                    self.prem.d.next = self.prem.q.val() - 8;
                } else {
                    self.prem.d.next = 0.into();
                }
            }
            if self.in_last.val() {
                self.bc.d.next = 0.into();
                if self.is_tcp.val() {
                    if self.fast.val() & self.need_tail.val() {
                        self.tail_pend.d.next = true;
                        if self.pay_hi.q.val() {
                            self.tail_data.d.next = self.in_data.val() >> 48;
                        } else {
                            self.tail_data.d.next = self.in_data.val() >> 16;
                        }
                        self.tail_keep.d.next = self.rem_after.val().get_bits::<4>(0);
                    } else {
                        self.done.next = true;
                        self.tv.d.next = false;
                        self.hv.d.next = false;
                    }
                }
                if self.in_tag.val() == 3 {
                    // TAG_BAD_LEN
                    self.c_bad_len.d.next = self.c_bad_len.q.val() + 1;
                }
                if self.in_tag.val() == 4 {
                    // TAG_BAD_IP_CSUM
                    self.c_bad_ip.d.next = self.c_bad_ip.q.val() + 1;
                }
                if self.in_tag.val() == 5 {
                    // TAG_BAD_TCP_CSUM
                    self.c_bad_tcp.d.next = self.c_bad_tcp.q.val() + 1;
                }
            } else if self.bc.q.val() != 255 {
                self.bc.d.next = self.bc.q.val() + 1;
            }
        }

        self.eth_dst.next = self.r_eth_dst.q.val();
        self.eth_src.next = self.r_eth_src.q.val();
        self.ip_src.next = self.r_ip_src.q.val();
        self.ip_dst.next = self.r_ip_dst.q.val();
        self.sport.next = self.r_sport.q.val();
        self.dport.next = self.r_dport.q.val();
        self.seq.next = self.r_seq.q.val();
        self.ack.next = self.r_ack.q.val();
        self.flags.next = self.r_flags.q.val();
        self.window.next = self.r_window.q.val();
        self.pay_len.next = self.r_pay_len.q.val();
        self.hdr_len.next = self.r_hdr_len.q.val();
        self.tuple_valid.next = self.tv.q.val();
        self.hdr_valid.next = self.hv.q.val();
        self.cnt_bad_len.next = self.c_bad_len.q.val();
        self.cnt_bad_ip_csum.next = self.c_bad_ip.q.val();
        self.cnt_bad_tcp_csum.next = self.c_bad_tcp.q.val();

        if self.reset.val() {
            self.bc.d.next = 0.into();
            self.tv.d.next = false;
            self.hv.d.next = false;
            self.tail_pend.d.next = false;
            self.c_bad_len.d.next = 0.into();
            self.c_bad_ip.d.next = 0.into();
            self.c_bad_tcp.d.next = 0.into();
        }
    }
}
