//! Pure TCP ACK frames (RFC 9293 §3.10.7.4: "send an acknowledgment") for
//! the connections the RX fast path asks to acknowledge (`ack_req_*`).
//!
//! * Coalescing: a request sets the connection's `queued` bit and, if it was
//!   clear, puts the connection with the time into a FIFO (256 deep: each
//!   connection is in it at most once, so it never overflows). Requests for
//!   a queued connection merge: the ACK carries the connection's ACK number
//!   (rcv_nxt) as it is when the frame is built, so it covers every segment
//!   accepted before.
//! * Delayed ACK with a bound (RFC 9293 §3.8.6.3, RFC 1122 §4.2.3.2: an ACK
//!   for at least every second full-sized segment, and the delay bounded):
//!   the head connection's ACK is *due* once [`ACK_EVERY_SEGS`] (2) requests
//!   merged in it (a second in-order segment with payload arrived) or
//!   [`ACK_DELAY_CLOCKS`] clocks after its first request. Entries behind the
//!   head wait for it (head of line): an ACK is delayed at most
//!   `ACK_DELAY_CLOCKS` times its place in the FIFO, and a due ACK waits
//!   behind at most one ACK that is not due.
//! * Ownership: a due ACK of a connection the device no longer owns
//!   (`ctx_owned` low: the firmware took it back to close it) is dropped,
//!   so nothing leaves behind the firmware's FIN with a lower sequence
//!   number (RFC 9293 §3.6: the FIN is the stream's last octet).
//! * Piggyback: `ctx_acked` is the ACK number of the last frame built for
//!   the connection (data frames included, kept by the core). A due ACK
//!   whose ACK number a frame already carried is not sent (`cnt_piggy`).
//! * Building: the head connection is looked up in the core's per-connection
//!   tables (`rd_valid`/`rd_conn`, data one clock later on `ctx_*`), the
//!   `queued` bit is cleared, the IPv4 and TCP checksums are summed in two
//!   pipeline clocks, and the 54-octet frame (Ethernet II, IPv4 20 octets:
//!   ID 0, DF, TTL 64; TCP 20 octets: flags ACK only, urgent 0) goes out on
//!   `tx_*` in 7 beats — the frame `rnic_wire::model::net::ack_frame` builds.
//! * `seq` is the connection's next sequence number on the wire (`ctx_seq`),
//!   so the ACK is in order with the data frames before it: the core starts
//!   an ACK (`go`) only while no data frame is on the MAC and holds new data
//!   frames while one is pending (`pend`), so none can pass it.
//! * Profile ([`TxAckN`]`<PR>`, `crate::profile`): the per-connection bits
//!   are indexed with the connection ANDed with the profile's mask
//!   ([`crate::receive::conn_table::conn_state_mask`]: all 256 in co-simulation, the
//!   board's 16 connections: `& 0xF`), so the bits of connections beyond
//!   the profile have no reader and synthesis removes them. A request for
//!   a connection beyond the profile is ignored (never aliased onto another
//!   connection's bits); the core cannot make one, as its indices come from
//!   the connection table, which has only the profile's entries.

use crate::common::fifo::Fifo;
use crate::profile::PR_SIM;
use crate::receive::conn_table::conn_state_mask;
use rust_hdl::prelude::*;

/// Octets of a pure ACK frame (14 + 20 + 20).
pub const ACK_FRAME_LEN: usize = 54;
/// An ACK is sent at once for every second in-order segment with payload
/// (RFC 1122 §4.2.3.2: "at least every second full-sized segment"). The
/// block counts to two with one bit per connection, so this is fixed.
pub const ACK_EVERY_SEGS: usize = 2;
/// Longest delay of a lone segment's ACK at the FIFO head, in clocks
/// (2048 clocks = 13.1 us at 156.25 MHz; RFC 9293 §3.8.6.3 allows up to
/// 500 ms, RFC 1122 §4.2.3.2 "MUST be less than 0.5 seconds").
pub const ACK_DELAY_CLOCKS: u64 = 2048;

fn const_frame() -> Bits<432> {
    let mut f = [0u8; ACK_FRAME_LEN];
    // EtherType IPv4; IPv4 version 4, IHL 5, total length 40, DF, TTL 64, TCP.
    f[12..24].copy_from_slice(&[
        0x08, 0x00, 0x45, 0x00, 0x00, 0x28, 0, 0, 0x40, 0x00, 0x40, 0x06,
    ]);
    // TCP data offset 5, flags ACK (RFC 9293 §3.1).
    f[46] = 0x50;
    f[47] = 0x10;
    let mut b = Bits::<432>::default();
    for (i, &o) in f.iter().enumerate() {
        for k in 0..8 {
            if o >> k & 1 == 1 {
                b = b.replace_bit(8 * i + k, true);
            }
        }
    }
    b
}

/// [`TxAckN`] with the co-simulation profile's connections.
pub type TxAck = TxAckN<{ PR_SIM }>;

#[derive(LogicBlock)]
pub struct TxAckN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// ACK request (one-clock pulse from the RX fast path).
    pub req_valid: Signal<In, Bit>,
    pub req_conn: Signal<In, Bits<8>>,
    /// A new ACK may be started (read its fields) this clock: no data frame
    /// is on the MAC, so `ctx_seq` is the sequence number on the wire.
    pub go: Signal<In, Bit>,
    /// An ACK waits or is being built or sent.
    pub pend: Signal<Out, Bit>,
    /// Table read: `rd_conn` is read in a clock with `rd_valid`; `ctx_*` hold
    /// its entry in the next clock.
    pub rd_valid: Signal<Out, Bit>,
    pub rd_conn: Signal<Out, Bits<8>>,
    pub ctx_dst_mac: Signal<In, Bits<48>>,
    pub ctx_src_mac: Signal<In, Bits<48>>,
    pub ctx_src_ip: Signal<In, Bits<32>>,
    pub ctx_dst_ip: Signal<In, Bits<32>>,
    pub ctx_src_port: Signal<In, Bits<16>>,
    pub ctx_dst_port: Signal<In, Bits<16>>,
    pub ctx_window: Signal<In, Bits<16>>,
    pub ctx_seq: Signal<In, Bits<32>>,
    pub ctx_ack: Signal<In, Bits<32>>,
    /// The ACK number of the last frame built for the connection.
    pub ctx_acked: Signal<In, Bits<32>>,
    /// The device owns the connection's stream (RDMA mode). When the
    /// firmware has taken it back (teardown: its FIN follows the device's
    /// last octet), a queued ACK is dropped: its sequence number would be
    /// below what the firmware has sent.
    pub ctx_owned: Signal<In, Bit>,
    /// A pure ACK was built (pulse): the core records `sent_ack` as the
    /// connection's last ACK number (`ctx_acked`).
    pub sent_valid: Signal<Out, Bit>,
    pub sent_conn: Signal<Out, Bits<8>>,
    pub sent_ack: Signal<Out, Bits<32>>,
    /// Due ACKs not sent because a frame already carried their number.
    pub cnt_piggy: Signal<Out, Bits<32>>,
    /// Frame out (54 octets, no FCS).
    pub tx_data: Signal<Out, Bits<64>>,
    pub tx_keep: Signal<Out, Bits<4>>,
    pub tx_last: Signal<Out, Bit>,
    pub tx_valid: Signal<Out, Bit>,
    pub tx_ready: Signal<In, Bit>,
    /// ACK frames sent.
    pub cnt_acks: Signal<Out, Bits<32>>,
    c_frm: Constant<Bits<432>>,
    queued: DFF<Bits<256>>,
    /// A second request merged into the queued ACK (one bit per connection).
    second: DFF<Bits<256>>,
    /// {time of the first request [23:8], connection [7:0]}.
    fifo: Fifo<Bits<24>, 8, 9>,
    now: DFF<Bits<16>>,
    rconn: DFF<Bits<8>>,
    n_piggy: DFF<Bits<32>>,
    c_delay: Constant<Bits<16>>,
    /// The profile's connection mask.
    c_cmask: Constant<Bits<8>>,
    /// `head` / `req_conn` ANDed with the mask (the bit index).
    hidx: Signal<Local, Bits<8>>,
    ridx: Signal<Local, Bits<8>>,
    /// `req_conn` is within the profile.
    r_in: Signal<Local, Bit>,
    snext: Signal<Local, Bits<256>>,
    head: Signal<Local, Bits<8>>,
    due: Signal<Local, Bit>,
    /// Register cut (docs/fpga.md, "Why the core clock is 62.5 MHz"):
    /// `due` one clock late, so `pend` (and the core's MAC merge choice
    /// behind it) starts from a flop, not from the FIFO's block RAM and the
    /// 16-bit age compare.
    due_r: DFF<Bit>,
    /// 0 idle, 1 read, 2 latch, 3 sum, 4 fold, 5 send.
    st: DFF<Bits<3>>,
    beat: DFF<Bits<3>>,
    dmac: DFF<Bits<48>>,
    smac: DFF<Bits<48>>,
    sip: DFF<Bits<32>>,
    dip: DFF<Bits<32>>,
    sport: DFF<Bits<16>>,
    dport: DFF<Bits<16>>,
    win: DFF<Bits<16>>,
    seq: DFF<Bits<32>>,
    ack: DFF<Bits<32>>,
    s_ip: DFF<Bits<24>>,
    s_tcp: DFF<Bits<24>>,
    ipcs: DFF<Bits<16>>,
    tcpcs: DFF<Bits<16>>,
    n_acks: DFF<Bits<32>>,
    one: Signal<Local, Bits<256>>,
    qnext: Signal<Local, Bits<256>>,
    f1: Signal<Local, Bits<24>>,
    f2: Signal<Local, Bits<24>>,
    frm: Signal<Local, Bits<432>>,
}

impl<const PR: usize> Default for TxAckN<PR> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            req_valid: Default::default(),
            req_conn: Default::default(),
            go: Default::default(),
            pend: Default::default(),
            rd_valid: Default::default(),
            rd_conn: Default::default(),
            ctx_dst_mac: Default::default(),
            ctx_src_mac: Default::default(),
            ctx_src_ip: Default::default(),
            ctx_dst_ip: Default::default(),
            ctx_src_port: Default::default(),
            ctx_dst_port: Default::default(),
            ctx_window: Default::default(),
            ctx_seq: Default::default(),
            ctx_ack: Default::default(),
            ctx_acked: Default::default(),
            ctx_owned: Default::default(),
            sent_valid: Default::default(),
            sent_conn: Default::default(),
            sent_ack: Default::default(),
            cnt_piggy: Default::default(),
            tx_data: Default::default(),
            tx_keep: Default::default(),
            tx_last: Default::default(),
            tx_valid: Default::default(),
            tx_ready: Default::default(),
            cnt_acks: Default::default(),
            c_frm: Constant::new(const_frame()),
            queued: Default::default(),
            second: Default::default(),
            fifo: Default::default(),
            now: Default::default(),
            rconn: Default::default(),
            n_piggy: Default::default(),
            c_delay: Constant::new(ACK_DELAY_CLOCKS.into()),
            c_cmask: Constant::new(conn_state_mask(PR).into()),
            hidx: Default::default(),
            ridx: Default::default(),
            r_in: Default::default(),
            snext: Default::default(),
            head: Default::default(),
            due: Default::default(),
            due_r: Default::default(),
            st: Default::default(),
            beat: Default::default(),
            dmac: Default::default(),
            smac: Default::default(),
            sip: Default::default(),
            dip: Default::default(),
            sport: Default::default(),
            dport: Default::default(),
            win: Default::default(),
            seq: Default::default(),
            ack: Default::default(),
            s_ip: Default::default(),
            s_tcp: Default::default(),
            ipcs: Default::default(),
            tcpcs: Default::default(),
            n_acks: Default::default(),
            one: Default::default(),
            qnext: Default::default(),
            f1: Default::default(),
            f2: Default::default(),
            frm: Default::default(),
        }
    }
}

impl<const PR: usize> Logic for TxAckN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, fifo);
        dff_setup!(
            self, clock, queued, st, beat, dmac, smac, sip, dip, sport, dport, win, seq, ack, s_ip,
            s_tcp, ipcs, tcpcs, n_acks, second, now, rconn, n_piggy, due_r
        );
        self.fifo.reset.next = self.reset.val();
        self.one.next = 1.into();
        // Coalescing queue.
        self.now.d.next = self.now.q.val() + 1;
        self.qnext.next = self.queued.q.val();
        self.snext.next = self.second.q.val();
        self.fifo.write.next = false;
        self.fifo.data_in.next =
            (bit_cast::<24, 16>(self.now.q.val()) << 8) | bit_cast::<24, 8>(self.req_conn.val());
        self.fifo.read.next = false;
        self.head.next = self.fifo.data_out.val().get_bits::<8>(0);
        self.rd_valid.next = false;
        self.rd_conn.next = self.head.val();
        self.hidx.next = self.head.val() & self.c_cmask.val();
        self.ridx.next = self.req_conn.val() & self.c_cmask.val();
        self.r_in.next = (self.req_conn.val() & !self.c_cmask.val()) == 0;
        // The head's ACK is due: a second segment merged in, or it waited
        // ACK_DELAY_CLOCKS since its first request (16-bit time, mod 2^16).
        self.due.next = !self.fifo.empty.val()
            & ((self.second.q.val() & (self.one.val() << self.hidx.val())).any()
                | ((self.now.q.val() - self.fifo.data_out.val().get_bits::<16>(8))
                    >= self.c_delay.val()));
        // `due_r` may lag `due` by a clock, never lead it for the head it
        // pops: a head's `due` only rises (the age grows, `second` is only
        // cleared by its pop), and the head changes only by a pop (`st` 0 →
        // 1), after which `st` is not 0 again before `due_r` is the new
        // head's (the FIFO shows the next word the clock after a pop). A pop
        // needs `due_r`, and `pend` includes it, so in the clock the ACK
        // reads its fields the core already holds data frames, as before.
        self.due_r.d.next = self.due.val();
        self.pend.next = self.due_r.q.val() | (self.st.q.val() != 0);
        if (self.st.q.val() == 0) & self.due_r.q.val() & self.go.val() {
            // read the head connection's entry; later requests queue it again
            self.rd_valid.next = true;
            self.fifo.read.next = true;
            self.rconn.d.next = self.head.val();
            self.qnext.next = self.qnext.val() & !(self.one.val() << self.hidx.val());
            self.snext.next = self.snext.val() & !(self.one.val() << self.hidx.val());
            self.st.d.next = 1.into();
        }
        if self.req_valid.val() & self.r_in.val() {
            if (self.qnext.val() & (self.one.val() << self.ridx.val())).any() {
                self.snext.next = self.snext.val() | (self.one.val() << self.ridx.val());
            } else {
                self.fifo.write.next = true;
                self.qnext.next = self.qnext.val() | (self.one.val() << self.ridx.val());
            }
        }
        self.queued.d.next = self.qnext.val();
        self.second.d.next = self.snext.val();
        self.sent_valid.next = false;
        self.sent_conn.next = self.rconn.q.val();
        self.sent_ack.next = self.ctx_ack.val();

        if (self.st.q.val() == 1) & !self.ctx_owned.val() {
            // the firmware sends this connection's segments now
            self.st.d.next = 0.into();
        } else if (self.st.q.val() == 1) & (self.ctx_ack.val() == self.ctx_acked.val()) {
            // a frame already carried this ACK number: nothing to send
            self.st.d.next = 0.into();
            self.n_piggy.d.next = self.n_piggy.q.val() + 1;
        } else if self.st.q.val() == 1 {
            self.sent_valid.next = true;
            self.dmac.d.next = self.ctx_dst_mac.val();
            self.smac.d.next = self.ctx_src_mac.val();
            self.sip.d.next = self.ctx_src_ip.val();
            self.dip.d.next = self.ctx_dst_ip.val();
            self.sport.d.next = self.ctx_src_port.val();
            self.dport.d.next = self.ctx_dst_port.val();
            self.win.d.next = self.ctx_window.val();
            self.seq.d.next = self.ctx_seq.val();
            self.ack.d.next = self.ctx_ack.val();
            self.st.d.next = 2.into();
        }
        // Checksums (RFC 791 §3.1, RFC 9293 §3.1): the one's-complement sum
        // of 16-bit words. IPv4 constant words 0x4500 + 0x0028 + 0x0000 +
        // 0x4000 + 0x4006 = 0xC52E; TCP: protocol 6 + TCP length 20 +
        // 0x5010 (offset, flags) = 0x502A.
        if self.st.q.val() == 2 {
            self.s_ip.d.next = bit_cast::<24, 16>(self.sip.q.val().get_bits::<16>(16))
                + bit_cast::<24, 16>(self.sip.q.val().get_bits::<16>(0))
                + bit_cast::<24, 16>(self.dip.q.val().get_bits::<16>(16))
                + bit_cast::<24, 16>(self.dip.q.val().get_bits::<16>(0))
                + 0xC52E;
            self.s_tcp.d.next = bit_cast::<24, 16>(self.sip.q.val().get_bits::<16>(16))
                + bit_cast::<24, 16>(self.sip.q.val().get_bits::<16>(0))
                + bit_cast::<24, 16>(self.dip.q.val().get_bits::<16>(16))
                + bit_cast::<24, 16>(self.dip.q.val().get_bits::<16>(0))
                + bit_cast::<24, 16>(self.sport.q.val())
                + bit_cast::<24, 16>(self.dport.q.val())
                + bit_cast::<24, 16>(self.seq.q.val().get_bits::<16>(16))
                + bit_cast::<24, 16>(self.seq.q.val().get_bits::<16>(0))
                + bit_cast::<24, 16>(self.ack.q.val().get_bits::<16>(16))
                + bit_cast::<24, 16>(self.ack.q.val().get_bits::<16>(0))
                + bit_cast::<24, 16>(self.win.q.val())
                + 0x502A;
            self.st.d.next = 3.into();
        }
        // Fold twice (a sum of at most 12 words is below 2^20).
        self.f1.next = bit_cast::<24, 16>(self.s_ip.q.val().get_bits::<16>(0))
            + bit_cast::<24, 8>(self.s_ip.q.val().get_bits::<8>(16));
        self.f2.next = bit_cast::<24, 16>(self.s_tcp.q.val().get_bits::<16>(0))
            + bit_cast::<24, 8>(self.s_tcp.q.val().get_bits::<8>(16));
        if self.st.q.val() == 3 {
            self.ipcs.d.next = !(self.f1.val().get_bits::<16>(0)
                + bit_cast::<16, 8>(self.f1.val().get_bits::<8>(16)));
            self.tcpcs.d.next = !(self.f2.val().get_bits::<16>(0)
                + bit_cast::<16, 8>(self.f2.val().get_bits::<8>(16)));
            self.st.d.next = 4.into();
            self.beat.d.next = 0.into();
        }

        // The frame, octet i in bits 8i+7..8i.
        self.frm.next = self.c_frm.val();
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dmac.q.val().get_bits::<8>(40)) << 0);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dmac.q.val().get_bits::<8>(32)) << 8);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dmac.q.val().get_bits::<8>(24)) << 16);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dmac.q.val().get_bits::<8>(16)) << 24);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dmac.q.val().get_bits::<8>(8)) << 32);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dmac.q.val().get_bits::<8>(0)) << 40);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.smac.q.val().get_bits::<8>(40)) << 48);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.smac.q.val().get_bits::<8>(32)) << 56);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.smac.q.val().get_bits::<8>(24)) << 64);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.smac.q.val().get_bits::<8>(16)) << 72);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.smac.q.val().get_bits::<8>(8)) << 80);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.smac.q.val().get_bits::<8>(0)) << 88);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.sip.q.val().get_bits::<8>(24)) << 208);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.sip.q.val().get_bits::<8>(16)) << 216);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.sip.q.val().get_bits::<8>(8)) << 224);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.sip.q.val().get_bits::<8>(0)) << 232);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dip.q.val().get_bits::<8>(24)) << 240);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dip.q.val().get_bits::<8>(16)) << 248);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dip.q.val().get_bits::<8>(8)) << 256);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dip.q.val().get_bits::<8>(0)) << 264);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.sport.q.val().get_bits::<8>(8)) << 272);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.sport.q.val().get_bits::<8>(0)) << 280);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dport.q.val().get_bits::<8>(8)) << 288);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.dport.q.val().get_bits::<8>(0)) << 296);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.seq.q.val().get_bits::<8>(24)) << 304);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.seq.q.val().get_bits::<8>(16)) << 312);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.seq.q.val().get_bits::<8>(8)) << 320);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.seq.q.val().get_bits::<8>(0)) << 328);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.ack.q.val().get_bits::<8>(24)) << 336);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.ack.q.val().get_bits::<8>(16)) << 344);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.ack.q.val().get_bits::<8>(8)) << 352);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.ack.q.val().get_bits::<8>(0)) << 360);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.win.q.val().get_bits::<8>(8)) << 384);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.win.q.val().get_bits::<8>(0)) << 392);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.ipcs.q.val().get_bits::<8>(8)) << 192);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.ipcs.q.val().get_bits::<8>(0)) << 200);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.tcpcs.q.val().get_bits::<8>(8)) << 400);
        self.frm.next =
            self.frm.val() | (bit_cast::<432, 8>(self.tcpcs.q.val().get_bits::<8>(0)) << 408);
        self.tx_valid.next = self.st.q.val() == 4;
        self.tx_keep.next = 8.into();
        self.tx_last.next = false;
        self.tx_data.next = self.frm.val().get_bits::<64>(0);
        if self.beat.q.val() == 1 {
            self.tx_data.next = self.frm.val().get_bits::<64>(64);
        } else if self.beat.q.val() == 2 {
            self.tx_data.next = self.frm.val().get_bits::<64>(128);
        } else if self.beat.q.val() == 3 {
            self.tx_data.next = self.frm.val().get_bits::<64>(192);
        } else if self.beat.q.val() == 4 {
            self.tx_data.next = self.frm.val().get_bits::<64>(256);
        } else if self.beat.q.val() == 5 {
            self.tx_data.next = self.frm.val().get_bits::<64>(320);
        } else if self.beat.q.val() == 6 {
            self.tx_data.next = bit_cast::<64, 48>(self.frm.val().get_bits::<48>(384));
            self.tx_keep.next = 6.into();
            self.tx_last.next = true;
        }
        if self.tx_valid.val() & self.tx_ready.val() {
            self.beat.d.next = self.beat.q.val() + 1;
            if self.tx_last.val() {
                self.st.d.next = 0.into();
                self.n_acks.d.next = self.n_acks.q.val() + 1;
            }
        }
        self.cnt_acks.next = self.n_acks.q.val();
        self.cnt_piggy.next = self.n_piggy.q.val();
        if self.reset.val() {
            self.queued.d.next = 0.into();
            self.second.d.next = 0.into();
            self.n_piggy.d.next = 0.into();
            self.st.d.next = 0.into();
            self.n_acks.d.next = 0.into();
            self.due_r.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use rnic_wire::model::net::{ack_frame, Endpoint};

    fn uut() -> TxAck {
        uut_pr::<{ PR_SIM }>()
    }

    fn uut_pr<const PR: usize>() -> TxAckN<PR> {
        let mut u = TxAckN::<PR>::default();
        u.clock.connect();
        u.reset.connect();
        u.req_valid.connect();
        u.req_conn.connect();
        u.go.connect();
        u.ctx_dst_mac.connect();
        u.ctx_src_mac.connect();
        u.ctx_src_ip.connect();
        u.ctx_dst_ip.connect();
        u.ctx_src_port.connect();
        u.ctx_dst_port.connect();
        u.ctx_window.connect();
        u.ctx_seq.connect();
        u.ctx_ack.connect();
        u.ctx_acked.connect();
        u.ctx_owned.connect();
        u.tx_ready.connect();
        u.connect_all();
        u
    }

    fn ep(rng: &mut Rng) -> Endpoint {
        let b = rng.bytes(12);
        Endpoint {
            mac: b[0..6].try_into().unwrap(),
            ip: b[6..10].try_into().unwrap(),
            port: u16::from_be_bytes([b[10], b[11]]),
        }
    }

    /// Random connections (table model), bursts of requests with repeats,
    /// random `go` and `tx_ready`, data frames that carry a connection's
    /// ACK number at random times: every frame equals `ack_frame` for its
    /// connection with the table's seq/ack at build time; requests for a
    /// queued connection merge; the head is read only when due (a second
    /// request merged, or ACK_DELAY_CLOCKS since the first); an ACK whose
    /// number was already carried is not sent; every request is answered;
    /// once the firmware has taken a connection back (not owned), its
    /// queued ACKs are dropped.
    #[test]
    fn frames_match_ack_frame_and_coalesce() {
        let mut u = uut();
        u.reset.next = true;
        tick!(u);
        tick!(u);
        u.reset.next = false;
        let mut rng = Rng::new(21);
        let mut conns: Vec<(Endpoint, Endpoint, u32, u32)> = (0..8)
            .map(|_| {
                let (a, b) = (ep(&mut rng), ep(&mut rng));
                (a, b, rng.next_u64() as u32, rng.next_u64() as u32)
            })
            .collect();
        let mut acked: Vec<u32> = conns.iter().map(|c| c.3.wrapping_sub(1)).collect();
        // Connection 7 is taken back by the firmware half-way.
        let owned = |k: usize, cycle: u64| k != 7 || cycle < 4000;
        let mut dropped = 0;
        let mut rd: Option<usize> = None;
        let mut cur = Vec::new();
        let (mut frames, mut reqs, mut skips, mut seconds) = (0, 0, 0, 0);
        let mut want: std::collections::VecDeque<Vec<u8>> = Default::default();
        let mut queued = [false; 8];
        let mut second = [false; 8];
        let mut order: std::collections::VecDeque<(usize, u64)> = Default::default();
        let delay = ACK_DELAY_CLOCKS;
        for cycle in 0..12000u64 {
            let req = cycle < 8000 && rng.below(10) == 0;
            let c = rng.below(8);
            u.req_valid.next = req;
            u.req_conn.next = (c as u64).into();
            u.go.next = rng.below(4) != 0;
            u.tx_ready.next = rng.below(3) != 0;
            // Table read data (one clock after rd_valid).
            let k = rd.unwrap_or(0);
            let (s, d, seq, ack) = conns[k];
            let mac = |m: [u8; 6]| m.iter().fold(0u64, |a, &b| a << 8 | b as u64);
            u.ctx_src_mac.next = mac(s.mac).into();
            u.ctx_dst_mac.next = mac(d.mac).into();
            u.ctx_src_ip.next = (u32::from_be_bytes(s.ip) as u64).into();
            u.ctx_dst_ip.next = (u32::from_be_bytes(d.ip) as u64).into();
            u.ctx_src_port.next = (s.port as u64).into();
            u.ctx_dst_port.next = (d.port as u64).into();
            u.ctx_window.next = 65535.into();
            u.ctx_seq.next = (seq as u64).into();
            u.ctx_ack.next = (ack as u64).into();
            u.ctx_acked.next = (acked[k] as u64).into();
            u.ctx_owned.next = owned(k, cycle);
            assert!(simulate(&mut u, 1000));
            if rd.is_some() {
                if !owned(k, cycle) {
                    assert!(!u.sent_valid.val(), "ACK of a connection not owned");
                    dropped += 1;
                } else if acked[k] == ack {
                    assert!(!u.sent_valid.val(), "carried ACK must not be sent");
                    skips += 1;
                } else {
                    assert!(u.sent_valid.val());
                    assert_eq!(u.sent_conn.val().index(), k);
                    assert_eq!(u.sent_ack.val().to_u64() as u32, ack);
                    acked[k] = ack;
                    // rnic_wire::model::net::WINDOW is 65535, as driven here
                    want.push_back(ack_frame(&s, &d, seq, ack));
                }
            } else {
                assert!(!u.sent_valid.val());
            }
            rd = None;
            if u.rd_valid.val() {
                let k = u.rd_conn.val().index();
                let (h, t0) = order.pop_front().expect("a queued connection");
                assert_eq!(h, k, "FIFO order");
                assert!(second[k] || cycle - t0 >= delay, "read before due");
                seconds += second[k] as usize;
                queued[k] = false;
                second[k] = false;
                rd = Some(k);
            }
            if req {
                reqs += 1;
                // the segment advanced rcv_nxt
                conns[c].3 = conns[c].3.wrapping_add(100);
                if queued[c] {
                    second[c] = true;
                } else {
                    queued[c] = true;
                    order.push_back((c, cycle));
                }
            }
            // a data frame carried conn x's current ACK number
            if rng.below(50) == 0 {
                let x = rng.below(8);
                acked[x] = conns[x].3;
            }
            if u.tx_valid.val() && u.tx_ready.val() {
                let n = u.tx_keep.val().index();
                let d = u.tx_data.val().to_u64().to_le_bytes();
                cur.extend_from_slice(&d[..n]);
                if u.tx_last.val() {
                    assert_eq!(Some(std::mem::take(&mut cur)), want.pop_front());
                    frames += 1;
                }
            }
            tick!(u);
        }
        assert!(want.is_empty() && order.is_empty());
        assert!(
            frames > 20 && frames < reqs && skips > 0 && seconds > 0 && dropped > 0,
            "{frames} ACKs, {skips} piggybacked, {seconds} on a second segment, \
             {dropped} not owned, {reqs} requests"
        );
        assert_eq!(u.cnt_acks.val().index(), frames);
        assert_eq!(u.cnt_piggy.val().index(), skips);
    }

    /// Board profile (n = 16 connections): requests of connections n - 1
    /// (15) and 0 interleaved, with requests for connections beyond the
    /// profile (2n - 1, n, 255: n - 1 and 0 modulo n) before and between
    /// them. 15 and 0 are each acknowledged once, in request order, with
    /// their own frames (`ack_frame`); the out-of-profile requests are
    /// ignored: neither read nor merged into 15's or 0's bits (without the
    /// profile mask 31 would be queued and read; with a plain mask it would
    /// alias onto 15). The connections follow `BOARD.conn_log2`.
    #[test]
    fn board_profile_coalesces_16_connections_and_ignores_the_rest() {
        use crate::profile::PR_BOARD;
        let mut u = uut_pr::<{ PR_BOARD }>();
        let n = 1usize << crate::profile::PROFILES[PR_BOARD].conn_log2;
        let (l, nu) = (n - 1, n as u64);
        u.reset.next = true;
        tick!(u);
        tick!(u);
        u.reset.next = false;
        let mut rng = Rng::new(5);
        let eps: Vec<(Endpoint, Endpoint)> = (0..n).map(|_| (ep(&mut rng), ep(&mut rng))).collect();
        // (cycle, connection): 2n - 1 first, then n - 1 / 0 interleaved;
        // the second request of n - 1 makes it due at once, 0 waits
        // ACK_DELAY_CLOCKS.
        let reqs = [
            (0u64, 2 * nu - 1),
            (3, nu - 1),
            (4, nu),
            (5, 0),
            (8, 255),
            (9, nu - 1),
        ];
        let ack_of = |c: usize| 0x1000_0000u32 + c as u32;
        let mut rd: Option<(usize, u64)> = None;
        let mut reads = Vec::new();
        let mut cur = Vec::new();
        let mut frames = Vec::new();
        for cycle in 0..(ACK_DELAY_CLOCKS + 400) {
            let r = reqs.iter().find(|r| r.0 == cycle);
            u.req_valid.next = r.is_some();
            u.req_conn.next = r.map_or(0, |r| r.1).into();
            u.go.next = true;
            u.tx_ready.next = cycle % 3 != 0;
            let k = rd.map_or(0, |r| r.0 % n);
            let (s, d) = eps[k];
            let mac = |m: [u8; 6]| m.iter().fold(0u64, |a, &b| a << 8 | b as u64);
            u.ctx_src_mac.next = mac(s.mac).into();
            u.ctx_dst_mac.next = mac(d.mac).into();
            u.ctx_src_ip.next = (u32::from_be_bytes(s.ip) as u64).into();
            u.ctx_dst_ip.next = (u32::from_be_bytes(d.ip) as u64).into();
            u.ctx_src_port.next = (s.port as u64).into();
            u.ctx_dst_port.next = (d.port as u64).into();
            u.ctx_window.next = 65535.into();
            u.ctx_seq.next = (7 * k as u64).into();
            u.ctx_ack.next = (ack_of(k) as u64).into();
            u.ctx_acked.next = 0.into();
            u.ctx_owned.next = true;
            assert!(simulate(&mut u, 1000));
            if let Some((k, _)) = rd.take() {
                assert!(u.sent_valid.val());
                assert_eq!(u.sent_conn.val().index(), k);
            }
            if u.rd_valid.val() {
                let k = u.rd_conn.val().index();
                reads.push((k, cycle));
                rd = Some((k, cycle));
            }
            if u.tx_valid.val() && u.tx_ready.val() {
                let n = u.tx_keep.val().index();
                cur.extend_from_slice(&u.tx_data.val().to_u64().to_le_bytes()[..n]);
                if u.tx_last.val() {
                    frames.push(std::mem::take(&mut cur));
                }
            }
            tick!(u);
        }
        let conns: Vec<usize> = reads.iter().map(|r| r.0).collect();
        assert_eq!(conns, vec![l, 0], "reads {reads:?}");
        // n - 1 is due on its second request; 0 only after the delay.
        assert!(
            reads[0].1 < 20 && reads[1].1 >= 5 + ACK_DELAY_CLOCKS,
            "{reads:?}"
        );
        let want: Vec<Vec<u8>> = [l, 0]
            .iter()
            .map(|&c| ack_frame(&eps[c].0, &eps[c].1, 7 * c as u32, ack_of(c)))
            .collect();
        assert_eq!(frames, want);
        assert_eq!(u.cnt_acks.val().index(), 2);
    }
}
