//! TX FPDU log and go-back-N replay for connections in RDMA mode.
//!
//! DESIGN §4: retransmission re-reads data from host memory by DMA; there
//! is no retransmit buffer. This block keeps a **record** of every data FPDU
//! handed to the framer — its descriptor fields and where its payload came
//! from — and replays a connection's unacknowledged FPDUs from that record.
//!
//! * **Log** (`in_*`): one entry per FPDU descriptor the framer took from
//!   `tx_seg` or `read_resp`, in hand-off order (= wire order per
//!   connection): the connection, the framer descriptor fields, the FPDU's
//!   length in sequence space (`in_adv`, markers included) and the payload
//!   source: the bus address it was DMA-read from (`in_addr`, one read per
//!   FPDU in both sources; `read_resp` cuts its segments at page ends, so one
//!   translated address suffices), or for a Read Request (opcode 1, whose
//!   28-octet payload `tx_seg` generates) the payload itself (`in_rr`).
//!   A circular RAM of `2^AW` entries x [`ENTRY_W`] bits. `room` is low when
//!   it is full: the integrator then holds the sources' descriptors (they
//!   wait, nothing is dropped); clocks full are counted (`cnt_full`). With
//!   `evict` (the core: window enforcement off, a test mode for peers that
//!   never ACK) a full log instead drops its oldest entry for the new one,
//!   counted in `cnt_lost`; without `evict`, a descriptor offered anyway
//!   while full is not logged and counted there (the core never does it).
//! * **Retire** at the head: the head entry is dropped once its FPDU is
//!   wholly acknowledged — `seq + adv =< SND.UNA` of its connection in
//!   sequence space (RFC 9293 §3.4, §3.10.7.4) — or its connection is Free
//!   (mode 0). `una_conn` asks the integrator for {mode, SND.UNA} of a
//!   connection, answered on `una_*` one clock later (a registered read). A
//!   stalled connection at the head blocks the reuse of every later entry
//!   (head of line): capacity is `2^AW` FPDUs across all connections.
//! * **Replay** (go-back-N: RFC 9293 §3.8.1 and RFC 6298 §5 retransmit the
//!   earliest unacknowledged segment; RFC 5044 §5/§4: a retransmitted TCP
//!   segment carries the same whole FPDUs, so each FPDU is re-sent as it
//!   was): `rq_valid`/`rq_conn` (the firmware's `RETX_CONN` write) starts a
//!   replay; a request while one is pending or running is ignored and
//!   counted (`cnt_busy`). The block asks the integrator to hold the
//!   sources (`xs_req`: `tx_seg` and `read_resp` start no further segment)
//!   and waits for `xs_gnt` (both quiet: no segment half issued, none of
//!   their payload outstanding, so the framer's input is free), then scans
//!   head → the tail seen at the grant and re-issues, in order, every entry
//!   of that connection not wholly acknowledged: its descriptor on `desc_*`
//!   and its payload on `pay_*`, DMA-read again at the recorded address
//!   (`dma_rd_*`, tag [`RETX_TAG`], one read in flight, the completion goes
//!   straight to `pay_*`) or, for a Read Request, the recorded 28 octets.
//!   Then `xs_req` drops and the sources go on. Holding at a segment
//!   boundary, rather than between messages, matters: a source waiting for
//!   the peer's window (which the lost segment keeps closed) is held too,
//!   so the replay cannot deadlock behind it. A replay that finds nothing
//!   to send counts `cnt_empty`. Retire pauses while a replay runs. Only
//!   recorded addresses are ever read.
//! * `busy` = a replay pending or running; `used` = entries in the log;
//!   `cnt_sent` = FPDUs re-sent.
//!
//! Entry layout ([`ENTRY_W`] = 373 bits): conn 0..8, qp 8..14, seq 14..46,
//! crc_en 46, mk_en 47, seq_start 48..80, opcode 80..84, last 84, pay_len
//! 85..101, adv 101..117, then 256 bits `u` at 117: for every opcode but 1,
//! addr 0..64, stag 64..96, to 96..160, qn 160..192, msn 192..224, mo
//! 224..256; for a Read Request (opcode 1: QN 1, MO 0, no STag/TO in its
//! untagged header) the 28-octet payload 0..224 (little-endian lanes) and
//! msn 224..256. 512 entries x 373 bits = 10.4 DP16KD in 512 x 36 mode,
//! i.e. 11 blocks.

use crate::common::k;
use rust_hdl::prelude::*;

/// Width of one log entry (see the module doc).
pub const ENTRY_W: usize = 373;
/// DMA read tag of replay payload reads (the core shares `read_resp`'s
/// arbiter client: outgoing `0xC0 | RETX_TAG`).
pub const RETX_TAG: u64 = 0x01;
/// Opcode of a Read Request (RFC 5040 §4.3, table 2).
pub const OP_READ_REQUEST: u64 = 1;
/// Octets of a Read Request's RDMAP header = its payload (RFC 5040 §4.4).
pub const RREQ_LEN: u64 = 28;

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum LogState {
    Idle,
    RHead,
    RDec,
    XReq,
    XScan,
    XRead,
    XChk,
    XEmit,
    XFin,
}

#[derive(LogicBlock)]
pub struct TxLog<const AW: usize, const CW: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- log: a descriptor the framer took
    pub in_valid: Signal<In, Bit>,
    pub in_conn: Signal<In, Bits<8>>,
    pub in_qp: Signal<In, Bits<6>>,
    pub in_seq: Signal<In, Bits<32>>,
    pub in_crc_en: Signal<In, Bit>,
    pub in_mk_en: Signal<In, Bit>,
    pub in_seq_start: Signal<In, Bits<32>>,
    pub in_opcode: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub in_stag: Signal<In, Bits<32>>,
    pub in_to: Signal<In, Bits<64>>,
    pub in_qn: Signal<In, Bits<32>>,
    pub in_msn: Signal<In, Bits<32>>,
    pub in_mo: Signal<In, Bits<32>>,
    pub in_pay_len: Signal<In, Bits<16>>,
    /// The FPDU's length in sequence space (wire length, markers included).
    pub in_adv: Signal<In, Bits<16>>,
    /// Bus address the payload was DMA-read from (not opcode 1).
    pub in_addr: Signal<In, Bits<64>>,
    /// A Read Request's 28-octet payload, little-endian lanes (opcode 1).
    pub in_rr: Signal<In, Bits<224>>,
    /// A full log drops its oldest entry for a new one instead of holding
    /// the sources (the core: window enforcement off, `tx_wnd_en` = 0, for
    /// tests whose peer never acknowledges).
    pub evict: Signal<In, Bit>,
    /// Not full (or `evict`): the integrator hands no descriptor to the
    /// framer without it.
    pub room: Signal<Out, Bit>,
    pub used: Signal<Out, Bits<16>>,
    // ---- {mode, SND.UNA} of `una_conn`, one clock later
    pub una_conn: Signal<Out, Bits<8>>,
    pub una_mode: Signal<In, Bits<2>>,
    pub una_snd_una: Signal<In, Bits<32>>,
    // ---- replay request (RETX_CONN)
    pub rq_valid: Signal<In, Bit>,
    pub rq_conn: Signal<In, Bits<8>>,
    pub busy: Signal<Out, Bit>,
    // ---- the framer's input: `xs_req` holds the sources (they start no
    // further segment); `xs_gnt` = they are quiet (nothing half issued,
    // no payload outstanding), held as long as `xs_req`
    pub xs_req: Signal<Out, Bit>,
    pub xs_gnt: Signal<In, Bit>,
    // ---- replayed descriptor (TxFramer fields), qp for the lookup
    pub desc_valid: Signal<Out, Bit>,
    pub desc_ready: Signal<In, Bit>,
    pub desc_qp: Signal<Out, Bits<6>>,
    pub desc_seq: Signal<Out, Bits<32>>,
    pub desc_crc_en: Signal<Out, Bit>,
    pub desc_mk_en: Signal<Out, Bit>,
    pub desc_seq_start: Signal<Out, Bits<32>>,
    pub desc_opcode: Signal<Out, Bits<4>>,
    pub desc_last: Signal<Out, Bit>,
    pub desc_stag: Signal<Out, Bits<32>>,
    pub desc_to: Signal<Out, Bits<64>>,
    pub desc_qn: Signal<Out, Bits<32>>,
    pub desc_msn: Signal<Out, Bits<32>>,
    pub desc_mo: Signal<Out, Bits<32>>,
    pub desc_pay_len: Signal<Out, Bits<16>>,
    // ---- payload DMA read (one in flight)
    pub dma_rd_req_valid: Signal<Out, Bit>,
    pub dma_rd_req_ready: Signal<In, Bit>,
    pub dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub dma_rd_req_len: Signal<Out, Bits<16>>,
    pub dma_rd_req_tag: Signal<Out, Bits<8>>,
    pub dma_rd_cpl_valid: Signal<In, Bit>,
    pub dma_rd_cpl_ready: Signal<Out, Bit>,
    pub dma_rd_cpl_data: Signal<In, Bits<64>>,
    pub dma_rd_cpl_keep: Signal<In, Bits<4>>,
    pub dma_rd_cpl_last: Signal<In, Bit>,
    // ---- replayed payload
    pub pay_valid: Signal<Out, Bit>,
    pub pay_ready: Signal<In, Bit>,
    pub pay_data: Signal<Out, Bits<64>>,
    pub pay_keep: Signal<Out, Bits<4>>,
    pub pay_last: Signal<Out, Bit>,
    // ---- counters
    pub cnt_sent: Signal<Out, Bits<32>>,
    pub cnt_busy: Signal<Out, Bits<32>>,
    pub cnt_empty: Signal<Out, Bits<32>>,
    pub cnt_full: Signal<Out, Bits<32>>,
    pub cnt_lost: Signal<Out, Bits<32>>,

    ram: RAM<Bits<ENTRY_W>, AW>,
    k_depth: Constant<Bits<CW>>,
    k_tag: Constant<Bits<8>>,
    k_op_rr: Constant<Bits<4>>,
    st: DFF<LogState>,
    head: DFF<Bits<CW>>,
    tail: DFF<Bits<CW>>,
    rp: DFF<Bits<CW>>,
    xend: DFF<Bits<CW>>,
    pend: DFF<Bit>,
    rc: DFF<Bits<8>>,
    e: DFF<Bits<ENTRY_W>>,
    nsent: DFF<Bit>,
    desc_done: DFF<Bit>,
    req_done: DFF<Bit>,
    pay_done: DFF<Bit>,
    beat: DFF<Bits<2>>,
    c_sent: DFF<Bits<32>>,
    c_req: DFF<Bits<32>>,
    c_busy: DFF<Bits<32>>,
    c_empty: DFF<Bits<32>>,
    c_full: DFF<Bits<32>>,
    c_lost: DFF<Bits<32>>,
    count: Signal<Local, Bits<CW>>,
    full: Signal<Local, Bit>,
    wdata: Signal<Local, Bits<ENTRY_W>>,
    u_in: Signal<Local, Bits<256>>,
    e_end: Signal<Local, Bits<32>>,
    e_u: Signal<Local, Bits<256>>,
    e_rr: Signal<Local, Bit>,
    e_plen: Signal<Local, Bits<16>>,
    rr_word: Signal<Local, Bits<64>>,
    take: Signal<Local, Bit>,
    // ---- a replayed payload longer than one DMA read (up to 8868 octets,
    // `docs/rtl.md` "Full 9000-octet frames"): read in pieces of at most
    // `caps::TX_MAX_SEG_READ` octets, one at a time
    x_off: DFF<Bits<16>>,
    x_busy: DFF<Bit>,
    k_seg_read: Constant<Bits<16>>,
    x_left: Signal<Local, Bits<16>>,
    x_fin: Signal<Local, Bit>,
}

impl<const AW: usize, const CW: usize> Default for TxLog<AW, CW> {
    fn default() -> Self {
        assert_eq!(CW, AW + 1, "TxLog: CW must be AW + 1");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_conn: Default::default(),
            in_qp: Default::default(),
            in_seq: Default::default(),
            in_crc_en: Default::default(),
            in_mk_en: Default::default(),
            in_seq_start: Default::default(),
            in_opcode: Default::default(),
            in_last: Default::default(),
            in_stag: Default::default(),
            in_to: Default::default(),
            in_qn: Default::default(),
            in_msn: Default::default(),
            in_mo: Default::default(),
            in_pay_len: Default::default(),
            in_adv: Default::default(),
            in_addr: Default::default(),
            in_rr: Default::default(),
            evict: Default::default(),
            room: Default::default(),
            used: Default::default(),
            una_conn: Default::default(),
            una_mode: Default::default(),
            una_snd_una: Default::default(),
            rq_valid: Default::default(),
            rq_conn: Default::default(),
            busy: Default::default(),
            xs_req: Default::default(),
            xs_gnt: Default::default(),
            desc_valid: Default::default(),
            desc_ready: Default::default(),
            desc_qp: Default::default(),
            desc_seq: Default::default(),
            desc_crc_en: Default::default(),
            desc_mk_en: Default::default(),
            desc_seq_start: Default::default(),
            desc_opcode: Default::default(),
            desc_last: Default::default(),
            desc_stag: Default::default(),
            desc_to: Default::default(),
            desc_qn: Default::default(),
            desc_msn: Default::default(),
            desc_mo: Default::default(),
            desc_pay_len: Default::default(),
            dma_rd_req_valid: Default::default(),
            dma_rd_req_ready: Default::default(),
            dma_rd_req_addr: Default::default(),
            dma_rd_req_len: Default::default(),
            dma_rd_req_tag: Default::default(),
            dma_rd_cpl_valid: Default::default(),
            dma_rd_cpl_ready: Default::default(),
            dma_rd_cpl_data: Default::default(),
            dma_rd_cpl_keep: Default::default(),
            dma_rd_cpl_last: Default::default(),
            pay_valid: Default::default(),
            pay_ready: Default::default(),
            pay_data: Default::default(),
            pay_keep: Default::default(),
            pay_last: Default::default(),
            cnt_sent: Default::default(),
            cnt_busy: Default::default(),
            cnt_empty: Default::default(),
            cnt_full: Default::default(),
            cnt_lost: Default::default(),
            ram: Default::default(),
            k_depth: k(1u64 << AW),
            k_tag: k(RETX_TAG),
            k_op_rr: k(OP_READ_REQUEST),
            st: Default::default(),
            head: Default::default(),
            tail: Default::default(),
            rp: Default::default(),
            xend: Default::default(),
            pend: Default::default(),
            rc: Default::default(),
            e: Default::default(),
            nsent: Default::default(),
            desc_done: Default::default(),
            req_done: Default::default(),
            pay_done: Default::default(),
            beat: Default::default(),
            c_sent: Default::default(),
            c_req: Default::default(),
            c_busy: Default::default(),
            c_empty: Default::default(),
            c_full: Default::default(),
            c_lost: Default::default(),
            count: Default::default(),
            full: Default::default(),
            wdata: Default::default(),
            u_in: Default::default(),
            e_end: Default::default(),
            e_u: Default::default(),
            e_rr: Default::default(),
            e_plen: Default::default(),
            rr_word: Default::default(),
            take: Default::default(),
            x_off: Default::default(),
            x_busy: Default::default(),
            k_seg_read: Constant::new((rnic_wire::abi::caps::TX_MAX_SEG_READ as u64).into()),
            x_left: Default::default(),
            x_fin: Default::default(),
        }
    }
}

impl<const AW: usize, const CW: usize> Logic for TxLog<AW, CW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, head, tail, rp, xend, pend, rc, e, nsent, desc_done, req_done,
            pay_done, beat, c_sent, c_req, c_busy, c_empty, c_full, c_lost, x_off, x_busy
        );
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();

        // ---- log: push at the tail
        self.count.next = self.tail.q.val() - self.head.q.val();
        self.full.next = self.count.val() == self.k_depth.val();
        self.room.next = !self.full.val() | self.evict.val();
        self.used.next = bit_cast::<16, CW>(self.count.val());
        if self.full.val() {
            self.c_full.d.next = self.c_full.q.val() + 1;
        }
        self.u_in.next = (bit_cast::<256, 32>(self.in_mo.val()) << 224)
            | (bit_cast::<256, 32>(self.in_msn.val()) << 192)
            | (bit_cast::<256, 32>(self.in_qn.val()) << 160)
            | (bit_cast::<256, 64>(self.in_to.val()) << 96)
            | (bit_cast::<256, 32>(self.in_stag.val()) << 64)
            | bit_cast::<256, 64>(self.in_addr.val());
        if self.in_opcode.val() == self.k_op_rr.val() {
            self.u_in.next = (bit_cast::<256, 32>(self.in_msn.val()) << 224)
                | bit_cast::<256, 224>(self.in_rr.val());
        }
        self.wdata.next = (bit_cast::<ENTRY_W, 256>(self.u_in.val()) << 117)
            | (bit_cast::<ENTRY_W, 16>(self.in_adv.val()) << 101)
            | (bit_cast::<ENTRY_W, 16>(self.in_pay_len.val()) << 85)
            | (bit_cast::<ENTRY_W, 1>(self.in_last.val().into()) << 84)
            | (bit_cast::<ENTRY_W, 4>(self.in_opcode.val()) << 80)
            | (bit_cast::<ENTRY_W, 32>(self.in_seq_start.val()) << 48)
            | (bit_cast::<ENTRY_W, 1>(self.in_mk_en.val().into()) << 47)
            | (bit_cast::<ENTRY_W, 1>(self.in_crc_en.val().into()) << 46)
            | (bit_cast::<ENTRY_W, 32>(self.in_seq.val()) << 14)
            | (bit_cast::<ENTRY_W, 6>(self.in_qp.val()) << 8)
            | bit_cast::<ENTRY_W, 8>(self.in_conn.val());
        self.ram.write_data.next = self.wdata.val();
        self.ram.write_address.next = self.tail.q.val().get_bits::<AW>(0);
        self.ram.write_enable.next = false;
        if self.in_valid.val() {
            if !self.full.val() {
                self.ram.write_enable.next = true;
                self.tail.d.next = self.tail.q.val() + 1;
            } else if self.evict.val() {
                // the oldest entry makes room (counted); a retire decision
                // in progress was about it: start that again
                self.ram.write_enable.next = true;
                self.tail.d.next = self.tail.q.val() + 1;
                self.head.d.next = self.head.q.val() + 1;
                self.c_lost.d.next = self.c_lost.q.val() + 1;
            } else {
                self.c_lost.d.next = self.c_lost.q.val() + 1;
            }
        }

        // ---- replay requests: one at a time (a second is ignored, counted)
        self.busy.next = self.pend.q.val();
        if self.rq_valid.val() {
            if self.pend.q.val() {
                self.c_busy.d.next = self.c_busy.q.val() + 1;
            } else {
                self.pend.d.next = true;
                self.rc.d.next = self.rq_conn.val();
                self.c_req.d.next = self.c_req.q.val() + 1;
            }
        }

        // ---- the entry on the read port (head or scan pointer), and the
        // latched entry being replayed
        self.ram.read_address.next = self.head.q.val().get_bits::<AW>(0);
        self.e_end.next = self.e.q.val().get_bits::<32>(14)
            + bit_cast::<32, 16>(self.e.q.val().get_bits::<16>(101));
        self.e_u.next = self.e.q.val().get_bits::<256>(117);
        self.e_rr.next = self.e.q.val().get_bits::<4>(80) == self.k_op_rr.val();
        self.e_plen.next = self.e.q.val().get_bits::<16>(85);
        // asked in RHead / XRead (read_data = the entry), answered in RDec /
        // XChk
        self.una_conn.next = self.ram.read_data.val().get_bits::<8>(0);

        // ---- replayed descriptor
        self.desc_valid.next = (self.st.q.val() == LogState::XEmit) & !self.desc_done.q.val();
        self.desc_qp.next = self.e.q.val().get_bits::<6>(8);
        self.desc_seq.next = self.e.q.val().get_bits::<32>(14);
        self.desc_crc_en.next = self.e.q.val().get_bit(46);
        self.desc_mk_en.next = self.e.q.val().get_bit(47);
        self.desc_seq_start.next = self.e.q.val().get_bits::<32>(48);
        self.desc_opcode.next = self.e.q.val().get_bits::<4>(80);
        self.desc_last.next = self.e.q.val().get_bit(84);
        self.desc_pay_len.next = self.e_plen.val();
        self.desc_stag.next = self.e_u.val().get_bits::<32>(64);
        self.desc_to.next = self.e_u.val().get_bits::<64>(96);
        self.desc_qn.next = self.e_u.val().get_bits::<32>(160);
        self.desc_msn.next = self.e_u.val().get_bits::<32>(192);
        self.desc_mo.next = self.e_u.val().get_bits::<32>(224);
        if self.e_rr.val() {
            // Read Request: untagged, QN 1, MO 0 (RFC 5040 §4.4, RFC 5041 §4.3)
            self.desc_stag.next = 0.into();
            self.desc_to.next = 0.into();
            self.desc_qn.next = 1.into();
            self.desc_msn.next = self.e_u.val().get_bits::<32>(224);
            self.desc_mo.next = 0.into();
        }

        // ---- payload: DMA read at the recorded address, or the recorded
        // Read Request octets (4 beats: 8, 8, 8, 4)
        // (pieces of at most TX_MAX_SEG_READ octets, the DMA read contract;
        // the next one after the previous one's last completion beat went)
        self.x_left.next = self.e_plen.val() - self.x_off.q.val();
        self.x_fin.next = self.x_left.val() <= self.k_seg_read.val();
        self.dma_rd_req_valid.next =
            (self.st.q.val() == LogState::XEmit) & !self.req_done.q.val() & !self.x_busy.q.val();
        self.dma_rd_req_addr.next =
            self.e_u.val().get_bits::<64>(0) + bit_cast::<64, 16>(self.x_off.q.val());
        self.dma_rd_req_len.next = self.k_seg_read.val();
        if self.x_fin.val() {
            self.dma_rd_req_len.next = self.x_left.val();
        }
        self.dma_rd_req_tag.next = self.k_tag.val();
        self.rr_word.next = self.e_u.val().get_bits::<64>(0);
        if self.beat.q.val() == 1 {
            self.rr_word.next = self.e_u.val().get_bits::<64>(64);
        }
        if self.beat.q.val() == 2 {
            self.rr_word.next = self.e_u.val().get_bits::<64>(128);
        }
        if self.beat.q.val() == 3 {
            self.rr_word.next = bit_cast::<64, 32>(self.e_u.val().get_bits::<32>(192));
        }
        self.pay_valid.next = false;
        self.pay_data.next = self.dma_rd_cpl_data.val();
        self.pay_keep.next = self.dma_rd_cpl_keep.val();
        self.pay_last.next = self.dma_rd_cpl_last.val() & self.req_done.q.val();
        self.dma_rd_cpl_ready.next = false;
        // (after its descriptor, as the framer takes them)
        if (self.st.q.val() == LogState::XEmit) & self.desc_done.q.val() & !self.pay_done.q.val() {
            if self.e_rr.val() {
                self.pay_valid.next = true;
                self.pay_data.next = self.rr_word.val();
                self.pay_keep.next = 8.into();
                self.pay_last.next = self.beat.q.val() == 3;
                if self.beat.q.val() == 3 {
                    self.pay_keep.next = 4.into();
                }
            } else {
                self.pay_valid.next = self.dma_rd_cpl_valid.val();
                self.dma_rd_cpl_ready.next = self.pay_ready.val();
            }
        }
        self.take.next = self.pay_valid.val() & self.pay_ready.val();

        // ---- the TX stream
        self.xs_req.next = false;

        match self.st.q.val() {
            LogState::Idle => {
                if self.pend.q.val() {
                    self.st.d.next = LogState::XReq;
                } else if self.count.val().any() {
                    // retire: read the head entry
                    self.st.d.next = LogState::RHead;
                }
            }
            LogState::RHead => {
                // read_data = the head entry (una_conn asks for its
                // connection)
                self.e.d.next = self.ram.read_data.val();
                self.st.d.next = LogState::RDec;
                if self.in_valid.val() & self.full.val() {
                    // evicted at this edge: read the new head
                    self.st.d.next = LogState::Idle;
                }
            }
            LogState::RDec => {
                // una_* answer for e's connection. Wholly acknowledged
                // (end =< SND.UNA, sequence space) or connection Free: drop
                // (unless an eviction just dropped it).
                if ((self.una_mode.val() == 0)
                    | (((self.una_snd_una.val() - self.e_end.val()) >> 31) == 0))
                    & !(self.in_valid.val() & self.full.val())
                {
                    self.head.d.next = self.head.q.val() + 1;
                }
                self.st.d.next = LogState::Idle;
            }
            LogState::XReq => {
                self.xs_req.next = true;
                if self.xs_gnt.val() {
                    // the sources are held: the scan ends at this tail
                    self.xend.d.next = self.tail.q.val();
                    self.rp.d.next = self.head.q.val();
                    self.nsent.d.next = false;
                    self.st.d.next = LogState::XScan;
                }
            }
            LogState::XScan => {
                self.xs_req.next = true;
                self.ram.read_address.next = self.rp.q.val().get_bits::<AW>(0);
                self.st.d.next = LogState::XRead;
                if self.rp.q.val() == self.xend.q.val() {
                    self.st.d.next = LogState::XFin;
                }
            }
            LogState::XRead => {
                self.xs_req.next = true;
                self.e.d.next = self.ram.read_data.val();
                self.st.d.next = LogState::XChk;
            }
            LogState::XChk => {
                self.xs_req.next = true;
                self.rp.d.next = self.rp.q.val() + 1;
                self.st.d.next = LogState::XScan;
                if (self.e.q.val().get_bits::<8>(0) == self.rc.q.val())
                    & (self.una_mode.val() != 0)
                    & (((self.una_snd_una.val() - self.e_end.val()) >> 31) != 0)
                {
                    self.desc_done.d.next = false;
                    self.x_off.d.next = 0.into();
                    self.x_busy.d.next = false;
                    self.req_done.d.next = self.e_rr.val() | !self.e_plen.val().any();
                    self.pay_done.d.next = !self.e_rr.val() & !self.e_plen.val().any();
                    self.beat.d.next = 0.into();
                    self.st.d.next = LogState::XEmit;
                }
            }
            LogState::XEmit => {
                self.xs_req.next = true;
                if self.desc_valid.val() & self.desc_ready.val() {
                    self.desc_done.d.next = true;
                }
                if self.dma_rd_req_valid.val() & self.dma_rd_req_ready.val() {
                    self.req_done.d.next = self.x_fin.val();
                    self.x_busy.d.next = true;
                    self.x_off.d.next = self.x_off.q.val() + self.k_seg_read.val();
                }
                if self.take.val() & !self.e_rr.val() & self.dma_rd_cpl_last.val() {
                    self.x_busy.d.next = false;
                }
                if self.take.val() {
                    self.beat.d.next = self.beat.q.val() + 1;
                    if self.pay_last.val() {
                        self.pay_done.d.next = true;
                    }
                }
                if self.desc_done.q.val() & self.req_done.q.val() & self.pay_done.q.val() {
                    self.c_sent.d.next = self.c_sent.q.val() + 1;
                    self.nsent.d.next = true;
                    self.st.d.next = LogState::XScan;
                }
            }
            LogState::XFin => {
                if !self.nsent.q.val() {
                    self.c_empty.d.next = self.c_empty.q.val() + 1;
                }
                self.pend.d.next = false;
                self.st.d.next = LogState::Idle;
            }
        }

        self.cnt_sent.next = self.c_sent.q.val();
        self.cnt_busy.next = self.c_busy.q.val();
        self.cnt_empty.next = self.c_empty.q.val();
        self.cnt_full.next = self.c_full.q.val();
        self.cnt_lost.next = self.c_lost.q.val();

        if self.reset.val() {
            self.st.d.next = LogState::Idle;
            self.head.d.next = 0.into();
            self.tail.d.next = 0.into();
            self.pend.d.next = false;
            self.c_sent.d.next = 0.into();
            self.c_req.d.next = 0.into();
            self.c_busy.d.next = 0.into();
            self.c_empty.d.next = 0.into();
            self.c_full.d.next = 0.into();
            self.c_lost.d.next = 0.into();
        }
    }
}

/// The core's log: 512 FPDUs.
pub type TxLog512 = TxLog<9, 10>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::Rng;
    use std::collections::VecDeque;

    type Log = TxLog<4, 5>;
    const DEPTH: usize = 16;
    const CONNS: usize = 4;
    /// The longest payload of one FPDU: MULPDU 8882 - the tagged header.
    const MAX_PAY: u64 = rnic_wire::abi::caps::MAX_MULPDU as u64 - 14;
    /// The DMA read contract: at most this many octets per read.
    const SEG_READ: u64 = rnic_wire::abi::caps::TX_MAX_SEG_READ as u64;

    /// One logged FPDU as the test (the integrator) handed it in.
    #[derive(Clone, Debug, PartialEq)]
    struct Fpdu {
        conn: u64,
        qp: u64,
        seq: u32,
        crc: bool,
        mk: bool,
        seq_start: u32,
        opcode: u64,
        last: bool,
        stag: u32,
        to: u64,
        qn: u32,
        msn: u32,
        mo: u32,
        pay_len: u64,
        adv: u32,
        addr: u64,
        rr: [u8; 28],
    }

    impl Fpdu {
        fn end(&self) -> u32 {
            self.seq.wrapping_add(self.adv)
        }
        /// The payload the framer must get on a replay.
        fn payload(&self) -> Vec<u8> {
            if self.opcode == OP_READ_REQUEST {
                self.rr.to_vec()
            } else {
                (0..self.pay_len).map(|i| mem(self.addr + i)).collect()
            }
        }
        /// The descriptor as the framer must see it (Read Request: QN 1, MO
        /// 0, no STag/TO, as tx_seg sends it).
        fn desc(&self) -> Fpdu {
            let mut d = self.clone();
            d.addr = 0;
            d.adv = 0;
            d.rr = [0; 28];
            if d.opcode == OP_READ_REQUEST {
                d.stag = 0;
                d.to = 0;
                d.qn = 1;
                d.mo = 0;
            }
            d
        }
    }

    /// Host memory: an octet per bus address.
    fn mem(a: u64) -> u8 {
        (a.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
    }

    /// `a =< b` in sequence space (RFC 9293 §3.4).
    fn seq_le(a: u32, b: u32) -> bool {
        (b.wrapping_sub(a) as i32) >= 0
    }

    fn new_log() -> Log {
        let mut u = Log::default();
        u.in_valid.connect();
        u.in_conn.connect();
        u.in_qp.connect();
        u.in_seq.connect();
        u.in_crc_en.connect();
        u.in_mk_en.connect();
        u.in_seq_start.connect();
        u.in_opcode.connect();
        u.in_last.connect();
        u.in_stag.connect();
        u.in_to.connect();
        u.in_qn.connect();
        u.in_msn.connect();
        u.in_mo.connect();
        u.in_pay_len.connect();
        u.in_adv.connect();
        u.in_addr.connect();
        u.in_rr.connect();
        u.evict.connect();
        u.una_mode.connect();
        u.una_snd_una.connect();
        u.rq_valid.connect();
        u.rq_conn.connect();
        u.xs_gnt.connect();
        u.desc_ready.connect();
        u.dma_rd_req_ready.connect();
        u.dma_rd_cpl_valid.connect();
        u.dma_rd_cpl_data.connect();
        u.dma_rd_cpl_keep.connect();
        u.dma_rd_cpl_last.connect();
        u.pay_ready.connect();
        u.reset.connect();
        u.clock.connect();
        u.connect_all();
        u
    }

    fn set_in(u: &mut Log, f: &Fpdu) {
        u.in_conn.next = f.conn.into();
        u.in_qp.next = f.qp.into();
        u.in_seq.next = (f.seq as u64).into();
        u.in_crc_en.next = f.crc;
        u.in_mk_en.next = f.mk;
        u.in_seq_start.next = (f.seq_start as u64).into();
        u.in_opcode.next = f.opcode.into();
        u.in_last.next = f.last;
        u.in_stag.next = (f.stag as u64).into();
        u.in_to.next = f.to.into();
        u.in_qn.next = (f.qn as u64).into();
        u.in_msn.next = (f.msn as u64).into();
        u.in_mo.next = (f.mo as u64).into();
        u.in_pay_len.next = f.pay_len.into();
        u.in_adv.next = (f.adv as u64).into();
        u.in_addr.next = f.addr.into();
        let mut rr: Bits<224> = 0.into();
        for (i, b) in f.rr.iter().enumerate() {
            rr.set_bits::<8>(8 * i, (*b as u64).into());
        }
        u.in_rr.next = rr;
    }

    fn get_desc(u: &Log) -> Fpdu {
        Fpdu {
            conn: u.rc.q.val().to_u64(),
            qp: u.desc_qp.val().to_u64(),
            seq: u.desc_seq.val().to_u64() as u32,
            crc: u.desc_crc_en.val(),
            mk: u.desc_mk_en.val(),
            seq_start: u.desc_seq_start.val().to_u64() as u32,
            opcode: u.desc_opcode.val().to_u64(),
            last: u.desc_last.val(),
            stag: u.desc_stag.val().to_u64() as u32,
            to: u.desc_to.val().to_u64(),
            qn: u.desc_qn.val().to_u64() as u32,
            msn: u.desc_msn.val().to_u64() as u32,
            mo: u.desc_mo.val().to_u64() as u32,
            pay_len: u.desc_pay_len.val().to_u64(),
            adv: 0,
            addr: 0,
            rr: [0; 28],
        }
    }

    /// Random descriptors from two sources (tx_seg: Write / Send / Read
    /// Request; read_resp: Read Response) on 4 connections, random ACKs
    /// (SND.UNA at and inside FPDUs), a connection going Free, a log of 16
    /// that fills (back-pressure), replay requests (some while busy, some
    /// for connections with nothing unacknowledged), random hand-shakes and
    /// DMA latency. Every replay must re-issue exactly the model's list —
    /// the FPDUs of that connection not wholly acknowledged, in order —
    /// with payload octets from the recorded addresses; the log must never
    /// hold fewer entries than the model's oldest live FPDU forces; at the
    /// end, everything acknowledged, it is empty. One payload in 30 is up to
    /// 8868 octets (MULPDU 8882): replayed in DMA reads of at most 4096
    /// octets (asserted). ACKs are frozen from a replay request to the
    /// replay's end, the final acknowledge-everything too (a replay of a
    /// long FPDU can run past the last request).
    #[test]
    fn replay_matches_model_and_retire_keeps_unacked() {
        let mut rng = Rng::new(0x7e70);
        let mut u = new_log();
        u.reset.next = true;
        for _ in 0..2 {
            crate::common::testutil::tick!(u);
        }
        u.reset.next = false;

        let mut nxt = [0u32; CONNS];
        let mut sent = [0u32; CONNS];
        let mut una = [0u32; CONNS];
        let mut mode = [2u64; CONNS];
        for c in 0..CONNS {
            nxt[c] = 0xFFFF_F000u32.wrapping_add(rng.next_u64() as u32 % 8192);
            una[c] = nxt[c];
            sent[c] = nxt[c];
        }
        // every FPDU pushed, in push order (the log's order)
        let mut pushed: VecDeque<Fpdu> = VecDeque::new();
        let mut offer: Option<Fpdu> = None;
        let mut msn = [1u32; CONNS];
        // replay in progress: expected list, received descriptors/payloads
        let mut want: Option<(u64, Vec<Fpdu>)> = None;
        let mut got: Vec<(Fpdu, Vec<u8>)> = vec![];
        let mut cur_pay: Vec<u8> = vec![];
        let mut gnt = false;
        let mut gnt_wait = 0u32;
        let mut dma: VecDeque<(u64, u64, u64)> = VecDeque::new(); // addr, len, due
        let mut dma_req: Option<(u64, u64)> = None;
        let mut full_clocks = 0u64;
        let mut replays = 0u32;
        let mut replayed = 0u64;
        let mut empties = 0u64;
        let mut busies = 0u64;
        let mut max_used = 0u64;
        let mut long_re = 0u64;
        let mut reads = 0u64;
        let total = 9000u64;

        for now in 0..total + 15000 {
            let draining = now >= total;
            // ---- the integrator's inputs
            // the stream grant: after 0..20 clocks of xs_req, until xs_done;
            // the sources hand nothing to the framer while it is granted
            let mut start = false;
            if u.xs_req.val() && !gnt {
                gnt_wait += 1;
                if gnt_wait > rng.below(20) as u32 {
                    gnt = true;
                    start = true;
                    gnt_wait = 0;
                }
            }
            u.xs_gnt.next = gnt;
            let holding = gnt;
            if offer.is_none() && !draining && rng.below(3) == 0 {
                let c = rng.below(CONNS) as u64;
                if mode[c as usize] != 0 {
                    let op = [0u64, 2, 3, 1][rng.below(4)];
                    // 1 in 30 up to the longest tagged payload (MULPDU 8882
                    // - 14): replayed with several DMA reads
                    let pay_len = if op == 1 {
                        28
                    } else if rng.below(30) == 0 {
                        rng.below(MAX_PAY as usize + 1) as u64
                    } else {
                        rng.below(300) as u64
                    };
                    let hdr = if op == 0 || op == 2 { 14 } else { 18 };
                    let adv = (((2 + hdr + pay_len + 3) & !3) + 4) as u32 + 4 * rng.below(2) as u32;
                    let mut rr = [0u8; 28];
                    for b in rr.iter_mut() {
                        *b = rng.next_u64() as u8;
                    }
                    let f = Fpdu {
                        conn: c,
                        qp: (c * 5 + rng.below(2) as u64) & 63,
                        seq: nxt[c as usize],
                        crc: rng.below(2) == 1,
                        mk: rng.below(2) == 1,
                        seq_start: rng.next_u64() as u32,
                        opcode: op,
                        last: rng.below(2) == 1,
                        stag: rng.next_u64() as u32,
                        to: rng.next_u64(),
                        qn: if op == 1 { 1 } else { 0 },
                        msn: msn[c as usize],
                        mo: rng.next_u64() as u32 & 0xFFFF,
                        pay_len,
                        adv,
                        addr: rng.next_u64() & 0xFFFF_FFFF_FFF0,
                        rr,
                    };
                    msn[c as usize] += 1;
                    nxt[c as usize] = nxt[c as usize].wrapping_add(adv);
                    offer = Some(f);
                }
            }
            let room = u.room.val();
            if !room {
                full_clocks += 1;
            }
            let push = offer.is_some() && room && !holding;
            u.in_valid.next = push;
            if let Some(f) = &offer {
                set_in(&mut u, f);
            }
            // ACKs and a connection going Free (frozen while a replay is
            // pending or running, so its expected list is fixed)
            let frozen = u.busy.val() || want.is_some();
            if !frozen && rng.below(40) == 0 {
                let c = rng.below(CONNS);
                // SND.UNA to an FPDU boundary or inside one, never past SND.NXT
                let outst = sent[c].wrapping_sub(una[c]);
                if outst > 0 {
                    let step = 1 + rng.next_u64() as u32 % outst;
                    una[c] = una[c].wrapping_add(if rng.below(2) == 0 { outst } else { step });
                }
            }
            if !frozen && now >= 3500 && mode[3] != 0 {
                mode[3] = 0;
            }
            // replay requests
            u.rq_valid.next = false;
            if !draining && rng.below(if u.busy.val() { 300 } else { 150 }) == 0 {
                let c = rng.below(CONNS) as u64;
                u.rq_valid.next = true;
                u.rq_conn.next = c.into();
                if u.busy.val() {
                    busies += 1;
                }
            }
            // consumers and DMA
            u.desc_ready.next = rng.below(3) != 0;
            u.pay_ready.next = rng.below(4) != 0;
            u.dma_rd_req_ready.next = rng.below(2) == 0;
            u.dma_rd_cpl_valid.next = false;
            if let Some((a, l, due)) = dma.front().cloned() {
                if now >= due && rng.below(4) != 0 {
                    let off = dma_req.map(|r| r.1).unwrap_or(0);
                    let n = (l - off).min(8);
                    let mut w = 0u64;
                    for i in 0..n {
                        w |= (mem(a + off + i) as u64) << (8 * i);
                    }
                    // garbage above keep
                    for i in n..8 {
                        w |= (rng.next_u64() & 0xFF) << (8 * i);
                    }
                    u.dma_rd_cpl_valid.next = true;
                    u.dma_rd_cpl_data.next = w.into();
                    u.dma_rd_cpl_keep.next = n.into();
                    u.dma_rd_cpl_last.next = off + n == l;
                }
            }

            // ---- settle with the clock low, observe the hand-shakes
            u.clock.next = false.into();
            assert!(simulate(&mut u, 1000));
            let desc_take = u.desc_valid.val() && u.desc_ready.val();
            let pay_take = u.pay_valid.val() && u.pay_ready.val();
            let req_take = u.dma_rd_req_valid.val() && u.dma_rd_req_ready.val();
            let cpl_take = u.dma_rd_cpl_valid.val() && u.dma_rd_cpl_ready.val();
            assert!(
                !u.pay_valid.val() || u.xs_req.val(),
                "payload outside a replay"
            );
            assert!(!u.desc_valid.val() || gnt, "descriptor without the stream");
            let ask = u.una_conn.val().to_u64() as usize;
            let f_desc = get_desc(&u);
            let pay = (
                u.pay_data.val().to_u64(),
                u.pay_keep.val().to_u64(),
                u.pay_last.val(),
            );
            let (rq_a, rq_l) = (
                u.dma_rd_req_addr.val().to_u64(),
                u.dma_rd_req_len.val().to_u64(),
            );
            assert_eq!(u.dma_rd_req_tag.val().to_u64(), RETX_TAG);
            u.clock.next = true.into();
            assert!(simulate(&mut u, 1000));

            // ---- after the edge: the model
            if push {
                let f = offer.take().unwrap();
                sent[f.conn as usize] = f.end();
                pushed.push_back(f);
            }
            if start {
                // the block latched its replay connection at the request;
                // the expected list is fixed from the grant on (acks frozen)
                let c = cur_rc(&u);
                let list: Vec<Fpdu> = pushed
                    .iter()
                    .filter(|f| {
                        f.conn == c && mode[c as usize] != 0 && !seq_le(f.end(), una[c as usize])
                    })
                    .cloned()
                    .collect();
                want = Some((c, list));
                got.clear();
                replays += 1;
            }
            if desc_take {
                got.push((f_desc.clone(), vec![]));
                cur_pay.clear();
            }
            if req_take {
                assert!(rq_l <= SEG_READ, "DMA read of {rq_l} octets");
                reads += 1;
                dma.push_back((rq_a, rq_l, now + 3 + rng.below(20) as u64));
                assert!(dma.len() == 1, "more than one read in flight");
                dma_req = Some((rq_a, 0));
            }
            if cpl_take {
                let (_, l, _) = dma[0];
                let r = dma_req.as_mut().unwrap();
                r.1 += 8.min(l - r.1);
                if r.1 == l {
                    dma.pop_front();
                    dma_req = None;
                }
            }
            if pay_take {
                let (w, k, last) = pay;
                for i in 0..k {
                    cur_pay.push((w >> (8 * i)) as u8);
                }
                if last {
                    got.last_mut().expect("payload before descriptor").1 = cur_pay.clone();
                    cur_pay.clear();
                }
            }
            if gnt && !u.xs_req.val() {
                // the replay ended (XFin, then Idle): the sources go on
                gnt = false;
                let (c, list) = want.take().expect("xs_done without a replay");
                assert_eq!(
                    got.len(),
                    list.len(),
                    "clock {now}: replay of conn {c}: FPDU count"
                );
                for (i, ((d, p), f)) in got.iter().zip(list.iter()).enumerate() {
                    assert_eq!(*d, f.desc(), "replay of conn {c}, FPDU {i}: descriptor");
                    assert_eq!(*p, f.payload(), "replay of conn {c}, FPDU {i}: payload");
                }
                replayed += list.len() as u64;
                long_re += list.iter().filter(|f| f.pay_len > SEG_READ).count() as u64;
                if list.is_empty() {
                    empties += 1;
                }
            }
            // retire: never before the model's oldest live FPDU
            // (the model drops what is acknowledged or Free at its front; from
            // its first live FPDU on, everything must still be logged)
            while let Some(f) = pushed.front() {
                let c = f.conn as usize;
                if mode[c] == 0 || seq_le(f.end(), una[c]) {
                    pushed.pop_front();
                } else {
                    break;
                }
            }
            let live = pushed.len();
            let used = u.used.val().to_u64();
            assert!(
                used as usize >= live,
                "clock {now}: log holds {used}, {live} live"
            );
            assert!(used as usize <= DEPTH);
            max_used = max_used.max(used);
            // una answer for the asked connection (a registered read)
            u.una_mode.next = mode[ask].into();
            u.una_snd_una.next = (una[ask] as u64).into();
            if draining && !(u.busy.val() || want.is_some()) {
                // acknowledge everything sent — not while a replay is
                // pending or running: its expected list is fixed at the
                // grant like every other ACK (a replay of a long FPDU can
                // last past `total`; the block then rightly skipped the
                // entries acknowledged meanwhile, which the fixed list
                // still held)
                una = sent;
            }
        }
        println!(
            "tx_log: {replays} replays, {replayed} FPDUs re-sent ({long_re} over \
             {SEG_READ} octets, {reads} DMA reads), {empties} empty, {busies} ignored \
             while busy, {full_clocks} clocks full"
        );
        assert!(want.is_none() && !u.busy.val());
        assert_eq!(u.used.val().to_u64(), 0, "log not empty after every ACK");
        assert_eq!(u.cnt_sent.val().to_u64(), replayed);
        assert_eq!(u.cnt_empty.val().to_u64(), empties);
        assert_eq!(u.cnt_busy.val().to_u64(), busies);
        assert_eq!(u.c_req.q.val().to_u64(), replays as u64);
        assert_eq!(u.cnt_full.val().to_u64(), full_clocks);
        assert_eq!(u.cnt_lost.val().to_u64(), 0);
        assert!(replays >= 20, "only {replays} replays");
        assert!(replayed >= 30, "only {replayed} FPDUs replayed");
        assert!(long_re >= 3, "only {long_re} long FPDUs replayed");
        assert!(reads >= 25, "only {reads} DMA reads");
        assert!(empties >= 2, "no empty replay");
        assert!(busies >= 1, "no request while busy");
        assert!(
            full_clocks > 100,
            "the log never filled ({full_clocks} clocks)"
        );
        assert_eq!(max_used as usize, DEPTH);

        // reset clears the log
        u.reset.next = true;
        crate::common::testutil::tick!(u);
        crate::common::testutil::tick!(u);
        assert_eq!(u.used.val().to_u64(), 0);
        assert!(u.room.val());
    }

    /// Replay of long FPDUs at the piece boundaries: payloads of 4096, 4097,
    /// 8192, 8868 (the longest), 0, 1, 8191, a Read Request, 4095 and 12
    /// octets on one connection, then a replay request. Every DMA read must
    /// be at most `TX_MAX_SEG_READ` octets, the reads of one FPDU exactly
    /// 4096, 4096, ..., the rest at consecutive addresses from the recorded
    /// one, one in flight, and each FPDU's payload the octets of host memory
    /// at its address, after its descriptor, in order. Run twice: every
    /// hand-shake ready with a fixed 78-clock read latency (the core's DMA
    /// round trip; the clocks are printed), and random hand-shakes and
    /// latency.
    #[test]
    fn long_fpdus_replay_in_pieces() {
        const LENS: [u64; 10] = [4096, 4097, 8192, MAX_PAY, 0, 1, 8191, RREQ_LEN, 4095, 12];
        let mut rng = Rng::new(0x10_9e);
        for random in [false, true] {
            let mut u = new_log();
            u.reset.next = true;
            crate::common::testutil::tick!(u);
            crate::common::testutil::tick!(u);
            u.reset.next = false;
            let una = 0xFFFF_E000u32;
            u.una_mode.next = 2.into();
            u.una_snd_una.next = (una as u64).into();
            let mut seq = una;
            let mut list = vec![];
            for (i, &len) in LENS.iter().enumerate() {
                let op = if len == RREQ_LEN {
                    OP_READ_REQUEST
                } else {
                    [0u64, 3][i % 2]
                };
                let mut rr = [0u8; 28];
                for b in rr.iter_mut() {
                    *b = rng.next_u64() as u8;
                }
                let f = Fpdu {
                    conn: 1,
                    qp: 7,
                    seq,
                    crc: true,
                    mk: i % 3 == 0,
                    seq_start: una,
                    opcode: op,
                    last: i % 2 == 1,
                    stag: rng.next_u64() as u32,
                    to: rng.next_u64(),
                    qn: if op == OP_READ_REQUEST { 1 } else { 0 },
                    msn: i as u32 + 1,
                    mo: 0,
                    pay_len: len,
                    adv: ((2 + 14 + len as u32 + 3) & !3) + 4,
                    // any octet alignment, crossing 4 KiB boundaries
                    addr: 0x1_0000_0000 + 0x3_0000 * i as u64 + rng.below(4096) as u64,
                    rr,
                };
                seq = f.end();
                set_in(&mut u, &f);
                u.in_valid.next = true;
                crate::common::testutil::tick!(u);
                list.push(f);
            }
            u.in_valid.next = false;
            assert_eq!(u.used.val().to_u64(), LENS.len() as u64);
            u.rq_valid.next = true;
            u.rq_conn.next = 1.into();
            crate::common::testutil::tick!(u);
            u.rq_valid.next = false;

            let mut got: Vec<(Fpdu, Vec<u8>)> = vec![];
            let mut reads: Vec<(u64, u64)> = vec![];
            // the read being served: addr, len, octets sent, due clock
            let mut serving: Option<(u64, u64, u64, u64)> = None;
            let mut first = None;
            let mut clocks = 0u64;
            while u.busy.val() {
                clocks += 1;
                assert!(clocks < 40_000, "replay did not end");
                u.xs_gnt.next = u.xs_req.val();
                let rdy = |rng: &mut Rng, n| !random || rng.below(n) != 0;
                u.desc_ready.next = rdy(&mut rng, 3);
                u.pay_ready.next = rdy(&mut rng, 4);
                u.dma_rd_req_ready.next = rdy(&mut rng, 2);
                u.dma_rd_cpl_valid.next = false;
                if let Some((a, l, off, due)) = serving {
                    if clocks >= due && rdy(&mut rng, 4) {
                        let n = (l - off).min(8);
                        let mut w = 0u64;
                        for i in 0..n {
                            w |= (mem(a + off + i) as u64) << (8 * i);
                        }
                        for i in n..8 {
                            w |= (rng.next_u64() & 0xFF) << (8 * i);
                        }
                        u.dma_rd_cpl_valid.next = true;
                        u.dma_rd_cpl_data.next = w.into();
                        u.dma_rd_cpl_keep.next = n.into();
                        u.dma_rd_cpl_last.next = off + n == l;
                    }
                }
                u.clock.next = false.into();
                assert!(simulate(&mut u, 1000));
                if u.desc_valid.val() && u.desc_ready.val() {
                    first.get_or_insert(clocks);
                    got.push((get_desc(&u), vec![]));
                }
                if u.dma_rd_req_valid.val() && u.dma_rd_req_ready.val() {
                    assert!(serving.is_none(), "more than one read in flight");
                    let (a, l) = (
                        u.dma_rd_req_addr.val().to_u64(),
                        u.dma_rd_req_len.val().to_u64(),
                    );
                    assert!(l > 0 && l <= SEG_READ, "DMA read of {l} octets");
                    reads.push((a, l));
                    let lat = if random { 3 + rng.below(40) as u64 } else { 78 };
                    serving = Some((a, l, 0, clocks + lat));
                }
                if u.dma_rd_cpl_valid.val() && u.dma_rd_cpl_ready.val() {
                    let s = serving.as_mut().unwrap();
                    s.2 += 8.min(s.1 - s.2);
                    if s.2 == s.1 {
                        serving = None;
                    }
                }
                if u.pay_valid.val() && u.pay_ready.val() {
                    let (w, k) = (u.pay_data.val().to_u64(), u.pay_keep.val().to_u64());
                    let p = &mut got.last_mut().expect("payload before descriptor").1;
                    for i in 0..k {
                        p.push((w >> (8 * i)) as u8);
                    }
                }
                u.clock.next = true.into();
                assert!(simulate(&mut u, 1000));
            }
            assert_eq!(got.len(), list.len(), "FPDUs re-sent");
            let mut want_reads = vec![];
            for (i, ((d, p), f)) in got.iter().zip(list.iter()).enumerate() {
                assert_eq!(*d, f.desc(), "FPDU {i} ({} octets): descriptor", f.pay_len);
                assert_eq!(*p, f.payload(), "FPDU {i} ({} octets): payload", f.pay_len);
                if f.opcode != OP_READ_REQUEST {
                    let mut off = 0;
                    while off < f.pay_len {
                        want_reads.push((f.addr + off, (f.pay_len - off).min(SEG_READ)));
                        off += SEG_READ;
                    }
                }
            }
            assert_eq!(reads, want_reads, "DMA reads");
            assert_eq!(u.cnt_sent.val().to_u64(), LENS.len() as u64);
            let octets: u64 = LENS.iter().sum();
            println!(
                "tx_log long replay ({}): {} FPDUs, {octets} payload octets, {} DMA reads, \
                 request -> first descriptor {} clocks, request -> end {clocks} clocks",
                if random {
                    "random hand-shakes"
                } else {
                    "all ready, latency 78"
                },
                LENS.len(),
                reads.len(),
                first.unwrap(),
            );
        }
    }

    /// With `evict` (window enforcement off) a full log keeps the newest
    /// FPDUs: 40 unacknowledged zero-length FPDUs into a log of 16 → 24
    /// evicted (counted), a replay re-sends exactly the 16 newest, in order.
    #[test]
    fn evict_keeps_newest() {
        let mut u = new_log();
        u.reset.next = true;
        crate::common::testutil::tick!(u);
        crate::common::testutil::tick!(u);
        u.reset.next = false;
        u.evict.next = true;
        u.una_mode.next = 2.into();
        u.una_snd_una.next = 1000.into();
        for i in 0..40u64 {
            assert!(u.room.val());
            u.in_valid.next = true;
            u.in_conn.next = 1.into();
            u.in_opcode.next = 0.into();
            u.in_seq.next = (1000 + 20 * i).into();
            u.in_adv.next = 20.into();
            u.in_pay_len.next = 0.into();
            crate::common::testutil::tick!(u);
        }
        u.in_valid.next = false;
        assert_eq!(u.used.val().to_u64(), 16);
        assert_eq!(u.cnt_lost.val().to_u64(), 24);
        u.rq_valid.next = true;
        u.rq_conn.next = 1.into();
        crate::common::testutil::tick!(u);
        u.rq_valid.next = false;
        u.desc_ready.next = true;
        u.pay_ready.next = true;
        let mut seqs = vec![];
        for _ in 0..400 {
            u.xs_gnt.next = u.xs_req.val();
            if u.desc_valid.val() {
                seqs.push(u.desc_seq.val().to_u64());
            }
            crate::common::testutil::tick!(u);
        }
        assert!(!u.busy.val());
        let want: Vec<u64> = (24..40).map(|i| 1000 + 20 * i).collect();
        assert_eq!(seqs, want);
        assert_eq!(u.cnt_sent.val().to_u64(), 16);
    }

    fn cur_rc(u: &Log) -> u64 {
        u.rc.q.val().to_u64()
    }

    #[test]
    fn generates_verilog() {
        let mut b = TxLog512::default();
        b.connect_all();
        let v = generate_verilog(&b);
        assert!(v.contains("module top"));
    }
}
