//! Read responder TX: answers the Read Requests `rreq_queue` hands over, in
//! order (RFC 5040 §5.3), with RDMA Read Response messages (tagged, RDMAP
//! opcode Read Response, RFC 5040 §4.5) on the same stream as the QP's
//! other messages.
//!
//! Per request:
//! 1. The QP's PD (`cfg_*`, from the QP context) and one TPT check of the
//!    whole Data Source `[SrcTO, SrcTO + RDMARDSZ)` with the remote read
//!    right (`chk_*`/`res_*` of [`crate::protection::tpt::Tpt`], shared with `ddp_rx`
//!    by the integrator). A fault sends nothing: one Terminate request
//!    (`term_*`, RDMAP Remote Protection, RFC 5040 §7: invalid STag 0/1/0,
//!    base or bounds 0/1/1, access rights 0/1/2, STag not associated with
//!    the stream (PD) 0/1/3, TO wrap 0/1/4) whose echo is the Read Request
//!    segment (DDP header and RDMA Read Request header, RFC 5040 §4.8),
//!    rebuilt from the queued fields; the QP stops here (its later requests
//!    are dropped, counted) until its context is written again.
//! 2. The QP's TX stream (`xs_*`, the hook in `tx_seg`): `xs_req` until
//!    `xs_gnt`, which `tx_seg` gives between its own messages once its
//!    payload has gone, with the QP's `snd_nxt`, SeqStart, MULPDU, CRC and
//!    marker settings. While granted `tx_seg` sends nothing; at the end
//!    `xs_done` hands the advanced `snd_nxt` back. So Read Responses are
//!    interleaved with the QP's own messages at message boundaries.
//! 3. Segments (RFC 5041 §5.2, RFC 5044 §4.5): payload at most MULPDU - 14
//!    octets, also cut at every page end of the region and every 4 KiB
//!    bus-address boundary, so that each segment is ONE DMA read at the
//!    address a per-segment TPT lookup gives (`res_addr`, `res_page_left`).
//!    STag = SinkSTag, TO = SinkTO + octets before (RFC 5041 §4.2), L on the
//!    last; a zero-length Read gets one empty Read Response with L = 1.
//!    Each segment: a `TxFramer` descriptor and one DMA read (tag
//!    [`RR_TAG`] | 2 × slot) into one of two payload slots (a reorder
//!    buffer of 2 × `8 << tx_slot_log2` octets: a read is at most 4096
//!    octets in the sim profile, at most the capped MULPDU on the board),
//!    drained in request order on `pay_*` as soon as the head slot's beats
//!    are written (`SlotDrain`, as in `tx_seg`; `dma_rd_cpl_ready` is
//!    always high). So the next
//!    segment's TPT lookup, descriptor and DMA read go while the previous
//!    segment's payload is still streaming: two reads in flight, which
//!    hides the DMA read latency (500 ns = 78 clocks against one 1500-MTU
//!    frame's 192 clocks of wire time). `snd_nxt` advances by the FPDU's
//!    wire length (RFC 5044 §4.3 markers included), as `tx_seg` does.
//! 4. `done_*` tells `rreq_queue` the request is over (its IRD slot frees)
//!    and `xs_done` hands the stream back, once the last segment's payload
//!    has left the slots.

use crate::common::k;
use crate::common::slot_drain::SlotDrain;
use rnic_wire::abi::tpt::ACCESS_REMOTE_READ;
use rnic_wire::ddp::TAGGED_HEADER_LEN;
use rnic_wire::rdmap::Opcode;
use rnic_wire::terminate::{RemoteProtectionError, TerminateCause};
use rust_hdl::prelude::*;

/// DMA read tag of the responder's payload reads (client range 0xC0-0xCF):
/// `RR_TAG | 2 * slot`, 0xC0 and 0xC2 (0xC1 is `tx_log`'s replay, which
/// shares the arbiter client while the responder is quiet).
pub const RR_TAG: u64 = 0xC0;

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum RrState {
    Idle,
    Pd,
    Chk,
    Res,
    Term,
    Grant,
    SChk,
    SRes,
    Issue,
    Adv,
    Fin,
}

fn cause(c: impl Into<TerminateCause>) -> Constant<Bits<16>> {
    Constant::new((c.into().to_bits() as u64).into())
}

/// The responder of the sim profile (64 QPs).
pub type ReadResp = ReadRespN<{ crate::profile::PR_SIM }>;

/// `ReadRespN<PR>`: the per-QP PD RAM is `PROFILES[PR].fw.n_qp` deep
/// (`QpRam`: 16 on the board) and the stopped bits are ANDed with the
/// profile's QP set; a configuration write of a QP beyond the profile is
/// ignored (requests come from `rreq_queue`, which drops those QPs).
#[derive(LogicBlock)]
pub struct ReadRespN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- requests (rreq_queue)
    pub q_valid: Signal<In, Bit>,
    pub q_ready: Signal<Out, Bit>,
    pub q_qp: Signal<In, Bits<6>>,
    pub q_conn: Signal<In, Bits<8>>,
    pub q_msn: Signal<In, Bits<32>>,
    pub q_sink_stag: Signal<In, Bits<32>>,
    pub q_sink_to: Signal<In, Bits<64>>,
    pub q_len: Signal<In, Bits<32>>,
    pub q_src_stag: Signal<In, Bits<32>>,
    pub q_src_to: Signal<In, Bits<64>>,
    // ---- QP context write: the QP's PD
    pub cfg_valid: Signal<In, Bit>,
    pub cfg_qp: Signal<In, Bits<6>>,
    pub cfg_pd: Signal<In, Bits<32>>,
    // ---- TPT check client
    pub chk_valid: Signal<Out, Bit>,
    pub chk_ready: Signal<In, Bit>,
    pub chk_stag: Signal<Out, Bits<32>>,
    pub chk_pd: Signal<Out, Bits<32>>,
    pub chk_need: Signal<Out, Bits<3>>,
    pub chk_to: Signal<Out, Bits<64>>,
    pub chk_len: Signal<Out, Bits<32>>,
    pub res_valid: Signal<In, Bit>,
    pub res_ready: Signal<Out, Bit>,
    pub res_fault: Signal<In, Bits<3>>,
    pub res_addr: Signal<In, Bits<64>>,
    pub res_page_left: Signal<In, Bits<32>>,
    // ---- the QP's TX stream (tx_seg hook)
    pub xs_req: Signal<Out, Bit>,
    pub xs_qp: Signal<Out, Bits<6>>,
    pub xs_gnt: Signal<In, Bit>,
    pub xs_seq: Signal<In, Bits<32>>,
    pub xs_seq_start: Signal<In, Bits<32>>,
    pub xs_mulpdu: Signal<In, Bits<16>>,
    pub xs_mk_en: Signal<In, Bit>,
    pub xs_crc_en: Signal<In, Bit>,
    pub xs_done: Signal<Out, Bit>,
    pub xs_seq_new: Signal<Out, Bits<32>>,
    /// Peer window (RFC 9293 §3.8.6), as `tx_seg`'s: with `win_en` a segment
    /// is not started (no descriptor, no DMA read) while its FPDU's end
    /// (`seq` plus the wire length, markers included) would pass `win_end`,
    /// i.e. SND.UNA plus SND.WND of the QP's connection (the integrator's
    /// lookup from `desc_qp`, valid 2 clocks after the grant). It waits,
    /// never drops.
    pub win_en: Signal<In, Bit>,
    pub win_end: Signal<In, Bits<32>>,
    // ---- TxFramer descriptor (addresses from the QP's connection)
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
    pub desc_pay_len: Signal<Out, Bits<16>>,
    /// For the TX log (`tx_log`): the segment's translated payload address
    /// (one DMA read per segment, cut at page ends) and its length in
    /// sequence space (markers included).
    pub desc_addr: Signal<Out, Bits<64>>,
    pub desc_adv: Signal<Out, Bits<16>>,
    /// The TX log's replay (`tx_log`): `hold` starts no further segment;
    /// `quiet` = no segment in flight (descriptor, DMA read or payload).
    pub hold: Signal<In, Bit>,
    pub quiet: Signal<Out, Bit>,
    // ---- DMA read
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
    pub dma_rd_cpl_tag: Signal<In, Bits<8>>,
    // ---- payload to the framer
    pub pay_valid: Signal<Out, Bit>,
    pub pay_ready: Signal<In, Bit>,
    pub pay_data: Signal<Out, Bits<64>>,
    pub pay_keep: Signal<Out, Bits<4>>,
    pub pay_last: Signal<Out, Bit>,
    // ---- request over (to rreq_queue)
    pub done_valid: Signal<Out, Bit>,
    pub done_qp: Signal<Out, Bits<6>>,
    // ---- Terminate requests
    pub term_valid: Signal<Out, Bit>,
    pub term_ready: Signal<In, Bit>,
    pub term_cause: Signal<Out, Bits<16>>,
    pub term_hdr: Signal<Out, Bits<384>>,
    pub term_seg_len: Signal<Out, Bits<16>>,
    pub term_conn: Signal<Out, Bits<32>>,
    pub term_qpn: Signal<Out, Bits<32>>,
    // ---- counters
    pub cnt_resp: Signal<Out, Bits<32>>,
    pub cnt_segs: Signal<Out, Bits<32>>,
    pub cnt_term: Signal<Out, Bits<32>>,
    pub cnt_drop: Signal<Out, Bits<32>>,
    // ---- tables and constants
    pd_ram: crate::common::qp_ram::QpRam<Bits<32>, PR>,
    qset: Constant<Bits<64>>,
    qm: Constant<Bits<6>>,
    k_need: Constant<Bits<3>>,
    k_hdr_t: Constant<Bits<16>>,
    k_op_rresp: Constant<Bits<4>>,
    k_tag: Constant<Bits<8>>,
    k_c_stag: Constant<Bits<16>>,
    k_c_pd: Constant<Bits<16>>,
    k_c_rights: Constant<Bits<16>>,
    k_c_bounds: Constant<Bits<16>>,
    k_c_wrap: Constant<Bits<16>>,
    m1: Constant<Bits<64>>,
    m2: Constant<Bits<64>>,
    m3: Constant<Bits<64>>,
    // ---- state
    state: DFF<RrState>,
    qp: DFF<Bits<6>>,
    conn: DFF<Bits<8>>,
    msn: DFF<Bits<32>>,
    sink_stag: DFF<Bits<32>>,
    sink_to: DFF<Bits<64>>,
    len: DFF<Bits<32>>,
    src_stag: DFF<Bits<32>>,
    src_to: DFF<Bits<64>>,
    pd: DFF<Bits<32>>,
    cur_to: DFF<Bits<64>>,
    rest: DFF<Bits<32>>,
    seg: DFF<Bits<16>>,
    seg_last: DFF<Bit>,
    addr: DFF<Bits<64>>,
    seq: DFF<Bits<32>>,
    seq_start: DFF<Bits<32>>,
    room: DFF<Bits<16>>,
    mk: DFF<Bit>,
    crc: DFF<Bit>,
    desc_done: DFF<Bit>,
    req_done: DFF<Bit>,
    /// Payload reorder buffer: 2 slots of `2^tx_slot_log2` beats {last,
    /// keep, data} at {slot, beat[8:0]}. `wr_slot` takes the next read,
    /// `drain` hands the head slot's beats to `pay_*`; `outst` = reads
    /// issued whose last beat has not been handed to `pay_*` (0..=2; below
    /// 2 the slot `wr_slot` is empty); `wc0`/`wc1` beats written per slot.
    pbuf: crate::common::pram::PRam<Bits<69>, 10>,
    drain: SlotDrain<1, 10>,
    wr_slot: DFF<Bits<1>>,
    outst: DFF<Bits<2>>,
    wc0: DFF<Bits<10>>,
    wc1: DFF<Bits<10>>,
    /// Window check of the segment in `Issue`: `fits_r` registered from the
    /// current `seq`/`adv_r`/`win_end`; `iss1` = the previous clock was
    /// already `Issue`; `wok` = it fitted
    /// once (then the segment goes on whatever the window does).
    fits_r: DFF<Bit>,
    iss1: DFF<Bit>,
    /// Register cut (docs/fpga.md, "Why the core clock is 62.5 MHz"):
    /// `adv` (the FPDU's sequence-space length: header, pad, CRC and
    /// markers, several carry chains from `seg`) registered, so the window
    /// compare starts from a flop. Valid from the second `Issue` clock;
    /// `iss2` = the two previous clocks were `Issue` (so `fits_r` saw
    /// `adv_r` of this segment).
    adv_r: DFF<Bits<32>>,
    iss2: DFF<Bit>,
    wok: DFF<Bit>,
    cause_r: DFF<Bits<16>>,
    stopped: DFF<Bits<64>>,
    c_resp: DFF<Bits<32>>,
    c_segs: DFF<Bits<32>>,
    c_term: DFF<Bits<32>>,
    c_drop: DFF<Bits<32>>,
    // ---- temporaries
    cand: Signal<Local, Bits<32>>,
    /// The segment is the Read's last: `seg_v == rest`, i.e. `rest` is the
    /// least of the four limits, as three compares side by side (the
    /// equality after the chain of minimums was the core's second longest
    /// path; docs/fpga.md).
    last_v: Signal<Local, Bit>,
    seg_v: Signal<Local, Bits<32>>,
    to4k: Signal<Local, Bits<32>>,
    flen: Signal<Local, Bits<16>>,
    /// `seq - SeqStart` mod 512 (the marker phase, RFC 5044 §4.3).
    sdiff: Signal<Local, Bits<9>>,
    d0: Signal<Local, Bits<16>>,
    kk: Signal<Local, Bits<16>>,
    adv: Signal<Local, Bits<32>>,
    req_fire: Signal<Local, Bit>,
    cslot: Signal<Local, Bits<1>>,
    cwc: Signal<Local, Bits<10>>,
    r_msn: Signal<Local, Bits<32>>,
    r_sstag: Signal<Local, Bits<32>>,
    r_len: Signal<Local, Bits<32>>,
    r_rstag: Signal<Local, Bits<32>>,
    r_sto: Signal<Local, Bits<64>>,
    r_rto: Signal<Local, Bits<64>>,
}

impl<const PR: usize> Default for ReadRespN<PR> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            q_valid: Default::default(),
            q_ready: Default::default(),
            q_qp: Default::default(),
            q_conn: Default::default(),
            q_msn: Default::default(),
            q_sink_stag: Default::default(),
            q_sink_to: Default::default(),
            q_len: Default::default(),
            q_src_stag: Default::default(),
            q_src_to: Default::default(),
            cfg_valid: Default::default(),
            cfg_qp: Default::default(),
            cfg_pd: Default::default(),
            chk_valid: Default::default(),
            chk_ready: Default::default(),
            chk_stag: Default::default(),
            chk_pd: Default::default(),
            chk_need: Default::default(),
            chk_to: Default::default(),
            chk_len: Default::default(),
            res_valid: Default::default(),
            res_ready: Default::default(),
            res_fault: Default::default(),
            res_addr: Default::default(),
            res_page_left: Default::default(),
            xs_req: Default::default(),
            xs_qp: Default::default(),
            xs_gnt: Default::default(),
            xs_seq: Default::default(),
            xs_seq_start: Default::default(),
            xs_mulpdu: Default::default(),
            xs_mk_en: Default::default(),
            xs_crc_en: Default::default(),
            xs_done: Default::default(),
            xs_seq_new: Default::default(),
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
            desc_pay_len: Default::default(),
            desc_addr: Default::default(),
            desc_adv: Default::default(),
            hold: Default::default(),
            quiet: Default::default(),
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
            dma_rd_cpl_tag: Default::default(),
            pay_valid: Default::default(),
            pay_ready: Default::default(),
            pay_data: Default::default(),
            pay_keep: Default::default(),
            pay_last: Default::default(),
            done_valid: Default::default(),
            done_qp: Default::default(),
            term_valid: Default::default(),
            term_ready: Default::default(),
            term_cause: Default::default(),
            term_hdr: Default::default(),
            term_seg_len: Default::default(),
            term_conn: Default::default(),
            term_qpn: Default::default(),
            cnt_resp: Default::default(),
            cnt_segs: Default::default(),
            cnt_term: Default::default(),
            cnt_drop: Default::default(),
            pd_ram: Default::default(),
            qset: crate::transmit::doorbell::qp_set(PR),
            qm: crate::transmit::doorbell::qp_mask(PR),
            k_need: k(ACCESS_REMOTE_READ as u64),
            k_hdr_t: k(TAGGED_HEADER_LEN as u64),
            k_op_rresp: k(Opcode::ReadResponse.value() as u64),
            k_tag: k(RR_TAG),
            k_c_stag: cause(RemoteProtectionError::InvalidStag),
            k_c_pd: cause(RemoteProtectionError::StagNotAssociated),
            k_c_rights: cause(RemoteProtectionError::AccessRightsViolation),
            k_c_bounds: cause(RemoteProtectionError::BaseOrBoundsViolation),
            k_c_wrap: cause(RemoteProtectionError::ToWrap),
            m1: k(0xff00),
            m2: k(0xff_0000),
            m3: k(0xff00_0000),
            state: Default::default(),
            qp: Default::default(),
            conn: Default::default(),
            msn: Default::default(),
            sink_stag: Default::default(),
            sink_to: Default::default(),
            len: Default::default(),
            src_stag: Default::default(),
            src_to: Default::default(),
            pd: Default::default(),
            cur_to: Default::default(),
            rest: Default::default(),
            seg: Default::default(),
            seg_last: Default::default(),
            addr: Default::default(),
            seq: Default::default(),
            seq_start: Default::default(),
            room: Default::default(),
            mk: Default::default(),
            crc: Default::default(),
            desc_done: Default::default(),
            fits_r: Default::default(),
            iss1: Default::default(),
            adv_r: Default::default(),
            iss2: Default::default(),
            wok: Default::default(),
            win_en: Default::default(),
            win_end: Default::default(),
            req_done: Default::default(),
            pbuf: crate::common::pram::PRam::new(1, crate::profile::PROFILES[PR].tx_slot_log2),
            drain: Default::default(),
            wr_slot: Default::default(),
            outst: Default::default(),
            wc0: Default::default(),
            wc1: Default::default(),
            cause_r: Default::default(),
            stopped: Default::default(),
            c_resp: Default::default(),
            c_segs: Default::default(),
            c_term: Default::default(),
            c_drop: Default::default(),
            cand: Default::default(),
            last_v: Default::default(),
            seg_v: Default::default(),
            to4k: Default::default(),
            flen: Default::default(),
            sdiff: Default::default(),
            d0: Default::default(),
            kk: Default::default(),
            adv: Default::default(),
            req_fire: Default::default(),
            cslot: Default::default(),
            cwc: Default::default(),
            r_msn: Default::default(),
            r_sstag: Default::default(),
            r_len: Default::default(),
            r_rstag: Default::default(),
            r_sto: Default::default(),
            r_rto: Default::default(),
        }
    }
}

impl<const PR: usize> Logic for ReadRespN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, qp, conn, msn, sink_stag, sink_to, len, src_stag, src_to, pd,
            cur_to, rest, seg, seg_last, addr, seq, seq_start, room, mk, crc, desc_done, req_done,
            wr_slot, outst, wc0, wc1, fits_r, iss1, adv_r, iss2, wok, cause_r, stopped, c_resp,
            c_segs, c_term, c_drop
        );
        self.pd_ram.read_clock.next = self.clock.val();
        self.pd_ram.write_clock.next = self.clock.val();
        self.pd_ram.read_address.next = self.q_qp.val();
        self.pd_ram.write_address.next = self.cfg_qp.val();
        self.pd_ram.write_enable.next =
            self.cfg_valid.val() & !(self.cfg_qp.val() & !self.qm.val()).any();
        self.pd_ram.write_data.next = self.cfg_pd.val();

        // ---- defaults
        self.q_ready.next = false;
        self.chk_valid.next = false;
        self.res_ready.next = false;
        self.xs_req.next = false;
        self.xs_done.next = false;
        self.done_valid.next = false;
        self.term_valid.next = false;
        self.xs_qp.next = self.qp.q.val();
        self.xs_seq_new.next = self.seq.q.val();
        self.done_qp.next = self.qp.q.val();
        self.chk_pd.next = self.pd.q.val();
        self.chk_need.next = self.k_need.val();
        self.chk_stag.next = self.src_stag.q.val();
        self.chk_to.next = self.src_to.q.val();
        self.chk_len.next = self.len.q.val();

        // ---- segment arithmetic
        self.cand.next = self.rest.q.val();
        if self.rest.q.val() > bit_cast::<32, 16>(self.room.q.val()) {
            self.cand.next = bit_cast::<32, 16>(self.room.q.val());
        }
        self.seg_v.next = self.cand.val();
        if self.res_page_left.val() < self.seg_v.val() {
            self.seg_v.next = self.res_page_left.val();
        }
        if (self.state.q.val() == RrState::SChk) | (self.state.q.val() == RrState::SRes) {
            self.chk_to.next = self.cur_to.q.val();
            self.chk_len.next = self.cand.val();
        }
        // octets to the next 4 KiB bus boundary (1..=4096)
        self.to4k.next =
            bits::<32>(4096) - bit_cast::<32, 12>(self.res_addr.val().get_bits::<12>(0));
        if self.to4k.val() < self.seg_v.val() {
            self.seg_v.next = self.to4k.val();
        }
        self.last_v.next = (self.rest.q.val() <= bit_cast::<32, 16>(self.room.q.val()))
            & (self.rest.q.val() <= self.res_page_left.val())
            & (self.rest.q.val() <= self.to4k.val());
        // FPDU wire length (RFC 5044 §4: length field, ULPDU, pad, CRC) and
        // the markers inside it (RFC 5044 §4.3; none after the CRC).
        self.flen.next = ((self.k_hdr_t.val() + self.seg.q.val() + 5) & 0xFFFC) + 4;
        self.sdiff.next =
            self.seq.q.val().get_bits::<9>(0) - self.seq_start.q.val().get_bits::<9>(0);
        self.d0.next = bit_cast::<16, 9>(bits::<9>(0) - self.sdiff.val());
        // Marker count: a thermometer of the octets past the first marker
        // position against the 508-octet marker period (RFC 5044 §4.3),
        // decoded by priority. Each step compares `flen` with `d0` plus a
        // multiple of the period: those sums come from registers while
        // `flen` is added, so only a compare stands between `flen` and the
        // decode. (Subtracting `d0` from `flen` first put a subtractor and
        // nine compares in series: the unit-delay model's longest path once
        // `mpa_rx`'s was cut.)
        self.kk.next = 0.into();
        if self.flen.val() > self.d0.val() + 4064 {
            self.kk.next = 9.into();
        } else if self.flen.val() > self.d0.val() + 3556 {
            self.kk.next = 8.into();
        } else if self.flen.val() > self.d0.val() + 3048 {
            self.kk.next = 7.into();
        } else if self.flen.val() > self.d0.val() + 2540 {
            self.kk.next = 6.into();
        } else if self.flen.val() > self.d0.val() + 2032 {
            self.kk.next = 5.into();
        } else if self.flen.val() > self.d0.val() + 1524 {
            self.kk.next = 4.into();
        } else if self.flen.val() > self.d0.val() + 1016 {
            self.kk.next = 3.into();
        } else if self.flen.val() > self.d0.val() + 508 {
            self.kk.next = 2.into();
        } else if self.flen.val() > self.d0.val() {
            self.kk.next = 1.into();
        }
        self.adv.next = bit_cast::<32, 16>(self.flen.val());
        if self.mk.q.val() {
            self.adv.next = bit_cast::<32, 16>(self.flen.val() + (self.kk.val() << 2));
        }

        // ---- peer window (RFC 9293 §3.8.6): the FPDU [seq, seq + adv) must
        // end at or before SND.UNA + SND.WND, compared in sequence space
        // (RFC 9293 §3.4) as tx_seg does. Registered, one clock late.
        // Two clocks late: `adv_r` is `adv` of the previous clock, `fits_r`
        // the compare on it (`seg`, `seq` and the marker phase do not change
        // in `Issue`, so from the second `Issue` clock `adv_r` is this
        // segment's and from the third `fits_r` is).
        self.adv_r.d.next = self.adv.val();
        self.fits_r.d.next = !self.win_en.val()
            | (((self.win_end.val() - (self.seq.q.val() + self.adv_r.q.val())) >> 31) == 0);
        self.iss1.d.next = self.state.q.val() == RrState::Issue;
        self.iss2.d.next = (self.state.q.val() == RrState::Issue) & self.iss1.q.val();
        self.wok.d.next = false;
        if self.state.q.val() == RrState::Issue {
            self.wok.d.next =
                self.wok.q.val() | (self.iss2.q.val() & self.fits_r.q.val() & !self.hold.val());
        }

        // ---- descriptor, DMA request, payload
        self.desc_valid.next =
            (self.state.q.val() == RrState::Issue) & !self.desc_done.q.val() & self.wok.q.val();
        self.desc_qp.next = self.qp.q.val();
        self.desc_seq.next = self.seq.q.val();
        self.desc_crc_en.next = self.crc.q.val();
        self.desc_mk_en.next = self.mk.q.val();
        self.desc_seq_start.next = self.seq_start.q.val();
        self.desc_opcode.next = self.k_op_rresp.val();
        self.desc_last.next = self.seg_last.q.val();
        self.desc_stag.next = self.sink_stag.q.val();
        self.desc_to.next = self.sink_to.q.val();
        self.desc_pay_len.next = self.seg.q.val();
        self.desc_addr.next = self.addr.q.val();
        self.quiet.next = !((self.state.q.val() == RrState::Issue) & self.wok.q.val())
            & (self.outst.q.val() == 0);
        // `desc_valid` needs `wok`, so `adv_r` is this segment's by then.
        self.desc_adv.next = self.adv_r.q.val().get_bits::<16>(0);
        // A read needs an empty slot (`outst` < 2: slot `wr_slot` drained).
        self.dma_rd_req_valid.next = (self.state.q.val() == RrState::Issue)
            & self.wok.q.val()
            & !self.req_done.q.val()
            & self.seg.q.val().any()
            & !self.outst.q.val().get_bit(1);
        self.dma_rd_req_addr.next = self.addr.q.val();
        self.dma_rd_req_len.next = self.seg.q.val();
        self.dma_rd_req_tag.next = self.k_tag.val() | (bit_cast::<8, 1>(self.wr_slot.q.val()) << 1);
        self.req_fire.next = self.dma_rd_req_valid.val() & self.dma_rd_req_ready.val();

        // Reorder buffer (as `tx_seg`'s): a completion beat goes to its
        // tag's slot (a read fits its slot, so completions are never held);
        // each slot is one segment's payload, so its last beat is the
        // segment's `pay_last`.
        self.pbuf.read_clock.next = self.clock.val();
        self.pbuf.write_clock.next = self.clock.val();
        self.dma_rd_cpl_ready.next = true;
        self.cslot.next = self.dma_rd_cpl_tag.val().get_bits::<1>(1);
        self.cwc.next = self.wc0.q.val();
        if self.cslot.val() == 1 {
            self.cwc.next = self.wc1.q.val();
        }
        self.pbuf.write_enable.next = self.dma_rd_cpl_valid.val();
        self.pbuf.write_address.next =
            (bit_cast::<10, 1>(self.cslot.val()) << 9) | (self.cwc.val() & 511);
        self.pbuf.write_data.next = (bit_cast::<69, 1>(self.dma_rd_cpl_last.val().into()) << 68)
            | (bit_cast::<69, 4>(self.dma_rd_cpl_keep.val()) << 64)
            | bit_cast::<69, 64>(self.dma_rd_cpl_data.val());
        if self.dma_rd_cpl_valid.val() {
            if self.cslot.val() == 0 {
                self.wc0.d.next = self.wc0.q.val() + 1;
            } else {
                self.wc1.d.next = self.wc1.q.val() + 1;
            }
        }
        // A newly issued slot starts empty (it was drained: `outst` < 2).
        if self.req_fire.val() {
            self.wr_slot.d.next = self.wr_slot.q.val() + 1;
            if self.wr_slot.q.val() == 0 {
                self.wc0.d.next = 0.into();
            } else {
                self.wc1.d.next = 0.into();
            }
        }
        // Drain: the head slot's beats as soon as they are written.
        self.drain.clock.next = self.clock.val();
        self.drain.reset.next = self.reset.val();
        self.drain.busy.next = self.outst.q.val() != 0;
        self.drain.written.next = self.wc0.q.val();
        if self.drain.slot.val() == 1 {
            self.drain.written.next = self.wc1.q.val();
        }
        self.pbuf.read_address.next = self.drain.ram_addr.val();
        self.drain.ram_last.next = self.pbuf.read_data.val().get_bit(68);
        self.drain.ready.next = self.pay_ready.val();
        self.pay_valid.next = self.drain.valid.val();
        self.pay_data.next = self.pbuf.read_data.val().get_bits::<64>(0);
        self.pay_keep.next = self.pbuf.read_data.val().get_bits::<4>(64);
        self.pay_last.next = self.pbuf.read_data.val().get_bit(68);
        if self.req_fire.val() & !self.drain.drained.val() {
            self.outst.d.next = self.outst.q.val() + 1;
        }
        if !self.req_fire.val() & self.drain.drained.val() {
            self.outst.d.next = self.outst.q.val() - 1;
        }

        match self.state.q.val() {
            RrState::Idle => {
                if self.q_valid.val() {
                    self.qp.d.next = self.q_qp.val();
                    self.conn.d.next = self.q_conn.val();
                    self.msn.d.next = self.q_msn.val();
                    self.sink_stag.d.next = self.q_sink_stag.val();
                    self.sink_to.d.next = self.q_sink_to.val();
                    self.len.d.next = self.q_len.val();
                    self.src_stag.d.next = self.q_src_stag.val();
                    self.src_to.d.next = self.q_src_to.val();
                    self.cur_to.d.next = self.q_src_to.val();
                    self.rest.d.next = self.q_len.val();
                    self.q_ready.next = true;
                    if (self.stopped.q.val() & (bits::<64>(1) << self.q_qp.val())).any() {
                        // RFC 5040 §5.1: nothing after a Terminate.
                        self.c_drop.d.next = self.c_drop.q.val() + 1;
                        self.done_valid.next = true;
                        self.done_qp.next = self.q_qp.val();
                    } else {
                        self.state.d.next = RrState::Pd;
                    }
                }
            }
            RrState::Pd => {
                self.pd.d.next = self.pd_ram.read_data.val();
                self.state.d.next = RrState::Chk;
            }
            RrState::Chk => {
                self.chk_valid.next = true;
                if self.chk_ready.val() {
                    self.state.d.next = RrState::Res;
                }
            }
            RrState::Res => {
                self.res_ready.next = true;
                if self.res_valid.val() {
                    if self.res_fault.val() == 0 {
                        self.state.d.next = RrState::Grant;
                    } else {
                        self.state.d.next = RrState::Term;
                        if self.res_fault.val() == 1 {
                            self.cause_r.d.next = self.k_c_stag.val();
                        } else if self.res_fault.val() == 2 {
                            self.cause_r.d.next = self.k_c_pd.val();
                        } else if self.res_fault.val() == 3 {
                            self.cause_r.d.next = self.k_c_rights.val();
                        } else if self.res_fault.val() == 4 {
                            self.cause_r.d.next = self.k_c_bounds.val();
                        } else {
                            self.cause_r.d.next = self.k_c_wrap.val();
                        }
                    }
                }
            }
            RrState::Term => {
                self.term_valid.next = true;
                if self.term_ready.val() {
                    self.c_term.d.next = self.c_term.q.val() + 1;
                    self.stopped.d.next = (self.stopped.q.val()
                        | (bits::<64>(1) << self.qp.q.val()))
                        & self.qset.val();
                    self.done_valid.next = true;
                    self.state.d.next = RrState::Idle;
                }
            }
            RrState::Grant => {
                self.xs_req.next = true;
                if self.xs_gnt.val() {
                    self.seq.d.next = self.xs_seq.val();
                    self.seq_start.d.next = self.xs_seq_start.val();
                    self.room.d.next = self.xs_mulpdu.val() - self.k_hdr_t.val();
                    self.mk.d.next = self.xs_mk_en.val();
                    self.crc.d.next = self.xs_crc_en.val();
                    self.state.d.next = RrState::SChk;
                }
            }
            RrState::SChk => {
                self.xs_req.next = true;
                if self.rest.q.val() == 0 {
                    // zero-length Read: one empty Read Response, L = 1
                    self.seg.d.next = 0.into();
                    self.seg_last.d.next = true;
                    self.desc_done.d.next = false;
                    self.req_done.d.next = true;
                    self.state.d.next = RrState::Issue;
                } else {
                    self.chk_valid.next = true;
                    if self.chk_ready.val() {
                        self.state.d.next = RrState::SRes;
                    }
                }
            }
            RrState::SRes => {
                self.xs_req.next = true;
                self.res_ready.next = true;
                if self.res_valid.val() {
                    // inside the range checked whole: no fault possible
                    self.seg.d.next = self.seg_v.val().get_bits::<16>(0);
                    self.seg_last.d.next = self.last_v.val();
                    self.addr.d.next = self.res_addr.val();
                    self.desc_done.d.next = false;
                    self.req_done.d.next = false;
                    self.state.d.next = RrState::Issue;
                }
            }
            RrState::Issue => {
                self.xs_req.next = true;
                if self.desc_valid.val() & self.desc_ready.val() {
                    self.desc_done.d.next = true;
                }
                if self.req_fire.val() {
                    self.req_done.d.next = true;
                }
                // The payload drains on its own: the next segment starts.
                if self.desc_done.q.val() & self.req_done.q.val() {
                    self.state.d.next = RrState::Adv;
                }
            }
            RrState::Adv => {
                self.xs_req.next = true;
                self.c_segs.d.next = self.c_segs.q.val() + 1;
                self.seq.d.next = self.seq.q.val() + self.adv_r.q.val();
                self.cur_to.d.next = self.cur_to.q.val() + bit_cast::<64, 16>(self.seg.q.val());
                self.sink_to.d.next = self.sink_to.q.val() + bit_cast::<64, 16>(self.seg.q.val());
                self.rest.d.next = self.rest.q.val() - bit_cast::<32, 16>(self.seg.q.val());
                self.state.d.next = RrState::SChk;
                if self.seg_last.q.val() {
                    self.state.d.next = RrState::Fin;
                }
            }
            RrState::Fin => {
                // The stream goes back once the last payload beat has left
                // the slots (the framer's input changes hands after it).
                self.xs_req.next = true;
                if self.outst.q.val() == 0 {
                    self.xs_done.next = true;
                    self.done_valid.next = true;
                    self.c_resp.d.next = self.c_resp.q.val() + 1;
                    self.state.d.next = RrState::Idle;
                }
            }
        }
        if self.cfg_valid.val() {
            self.stopped.d.next = self.stopped.q.val() & !(bits::<64>(1) << self.cfg_qp.val());
        }

        // ---- Terminate record: the Read Request segment rebuilt (RFC 5041
        // §4.3 untagged header, QN 1, MO 0, L; RFC 5040 §4.4 header).
        self.r_msn.next = (self.msn.q.val() << 24)
            | ((self.msn.q.val() & 0xff00) << 8)
            | ((self.msn.q.val() >> 8) & 0xff00)
            | (self.msn.q.val() >> 24);
        self.r_sstag.next = (self.sink_stag.q.val() << 24)
            | ((self.sink_stag.q.val() & 0xff00) << 8)
            | ((self.sink_stag.q.val() >> 8) & 0xff00)
            | (self.sink_stag.q.val() >> 24);
        self.r_len.next = (self.len.q.val() << 24)
            | ((self.len.q.val() & 0xff00) << 8)
            | ((self.len.q.val() >> 8) & 0xff00)
            | (self.len.q.val() >> 24);
        self.r_rstag.next = (self.src_stag.q.val() << 24)
            | ((self.src_stag.q.val() & 0xff00) << 8)
            | ((self.src_stag.q.val() >> 8) & 0xff00)
            | (self.src_stag.q.val() >> 24);
        self.r_sto.next = (self.sink_to.q.val() << 56)
            | ((self.sink_to.q.val() & self.m1.val()) << 40)
            | ((self.sink_to.q.val() & self.m2.val()) << 24)
            | ((self.sink_to.q.val() & self.m3.val()) << 8)
            | ((self.sink_to.q.val() >> 8) & self.m3.val())
            | ((self.sink_to.q.val() >> 24) & self.m2.val())
            | ((self.sink_to.q.val() >> 40) & self.m1.val())
            | (self.sink_to.q.val() >> 56);
        self.r_rto.next = (self.src_to.q.val() << 56)
            | ((self.src_to.q.val() & self.m1.val()) << 40)
            | ((self.src_to.q.val() & self.m2.val()) << 24)
            | ((self.src_to.q.val() & self.m3.val()) << 8)
            | ((self.src_to.q.val() >> 8) & self.m3.val())
            | ((self.src_to.q.val() >> 24) & self.m2.val())
            | ((self.src_to.q.val() >> 40) & self.m1.val())
            | (self.src_to.q.val() >> 56);
        self.term_cause.next = self.cause_r.q.val();
        self.term_hdr.next = (bit_cast::<384, 64>(self.r_rto.val()) << 304)
            | (bit_cast::<384, 32>(self.r_rstag.val()) << 272)
            | (bit_cast::<384, 32>(self.r_len.val()) << 240)
            | (bit_cast::<384, 64>(self.r_sto.val()) << 176)
            | (bit_cast::<384, 32>(self.r_sstag.val()) << 144)
            | (bit_cast::<384, 32>(self.r_msn.val()) << 80)
            | (bits::<384>(0x01) << 72)
            | (bits::<384>(0x41) << 8)
            | bits::<384>(0x41);
        self.term_seg_len.next = 46.into();
        self.term_conn.next = bit_cast::<32, 8>(self.conn.q.val());
        self.term_qpn.next = bit_cast::<32, 6>(self.qp.q.val());
        self.cnt_resp.next = self.c_resp.q.val();
        self.cnt_segs.next = self.c_segs.q.val();
        self.cnt_term.next = self.c_term.q.val();
        self.cnt_drop.next = self.c_drop.q.val();

        if self.reset.val() {
            self.state.d.next = RrState::Idle;
            self.stopped.d.next = 0.into();
            self.c_resp.d.next = 0.into();
            self.c_segs.d.next = 0.into();
            self.c_term.d.next = 0.into();
            self.c_drop.d.next = 0.into();
            self.wr_slot.d.next = 0.into();
            self.outst.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use crate::protection::tpt::tests::entry_bits;
    use crate::protection::tpt::{Tpt, PBL_INDEX_BITS, TPT_INDEX_BITS};
    use rnic_wire::abi::tpt::{
        Stag, TptEntry, TptState, ACCESS_ALL, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE,
    };
    use rnic_wire::model::tx::frame_ulpdu;
    use rnic_wire::model::MpaSettings;
    use rnic_wire::rdmap::{RdmapRepr, ReadRequestRepr};

    #[derive(LogicBlock, Default)]
    struct Bench {
        clock: Signal<In, Clock>,
        tpt: Tpt<TPT_INDEX_BITS, PBL_INDEX_BITS>,
        rr: ReadResp,
    }

    impl Logic for Bench {
        #[hdl_gen]
        fn update(&mut self) {
            clock!(self, clock, tpt, rr);
            self.tpt.reset.next = self.rr.reset.val();
            self.tpt.chk_valid.next = self.rr.chk_valid.val();
            self.rr.chk_ready.next = self.tpt.chk_ready.val();
            self.tpt.chk_stag.next = self.rr.chk_stag.val();
            self.tpt.chk_pd.next = self.rr.chk_pd.val();
            self.tpt.chk_need.next = self.rr.chk_need.val();
            self.tpt.chk_to.next = self.rr.chk_to.val();
            self.tpt.chk_len.next = self.rr.chk_len.val();
            self.tpt.chk_inv.next = false;
            self.rr.res_valid.next = self.tpt.res_valid.val();
            self.tpt.res_ready.next = self.rr.res_ready.val();
            self.rr.res_fault.next = self.tpt.res_fault.val();
            self.rr.res_addr.next = self.tpt.res_addr.val();
            self.rr.res_page_left.next = self.tpt.res_page_left.val();
            self.tpt.walk_idx.next = 0.into();
        }
    }

    /// Host memory: the octet at a bus address (no storage needed).
    fn mem(addr: u64) -> u8 {
        (addr.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
    }

    const PD: u32 = 7;

    fn regions() -> (Vec<TptEntry>, Vec<u64>) {
        let e = |state, key, access, page_shift, pd, va, length, pbl_base, npages| TptEntry {
            state,
            key,
            access,
            page_shift,
            pd,
            va,
            length,
            pbl_base,
            npages,
        };
        let table = vec![
            e(TptState::Free, 0, 0, 12, 0, 0, 0, 0, 0),
            // 4 KiB pages, unaligned start
            e(
                TptState::Valid,
                0x11,
                ACCESS_ALL,
                12,
                PD,
                0x1000_0123,
                300_000,
                0,
                75,
            ),
            // 8 KiB pages, remote read only
            e(
                TptState::Valid,
                0x22,
                ACCESS_REMOTE_READ,
                13,
                PD,
                0x7_0000_1ff9,
                40_000,
                80,
                6,
            ),
            // wrong PD
            e(
                TptState::Valid,
                0x33,
                ACCESS_ALL,
                12,
                PD + 2,
                0x2000,
                8192,
                0,
                2,
            ),
            // no remote read right
            e(
                TptState::Valid,
                0x44,
                ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE,
                12,
                PD,
                0x2000,
                8192,
                0,
                2,
            ),
            // invalidated
            e(
                TptState::Invalid,
                0x55,
                ACCESS_ALL,
                12,
                PD,
                0x2000,
                8192,
                0,
                2,
            ),
        ];
        // scattered 4 KiB-aligned pages (8 KiB-aligned for region 2)
        let pbl = (0..100u64)
            .map(|i| 0x40_0000_0000 + ((i * 7919) % 100) * 0x4000)
            .collect();
        (table, pbl)
    }

    fn bench() -> Bench {
        let mut b = Bench::default();
        b.clock.connect();
        b.rr.reset.connect();
        for s in [
            &mut b.rr.q_valid,
            &mut b.rr.cfg_valid,
            &mut b.rr.xs_gnt,
            &mut b.rr.xs_mk_en,
            &mut b.rr.xs_crc_en,
            &mut b.rr.desc_ready,
            &mut b.rr.dma_rd_req_ready,
            &mut b.rr.dma_rd_cpl_valid,
            &mut b.rr.dma_rd_cpl_last,
            &mut b.rr.pay_ready,
            &mut b.rr.term_ready,
            &mut b.tpt.tpt_wr_en,
            &mut b.tpt.pbl_wr_en,
        ] {
            s.connect();
        }
        b.rr.q_qp.connect();
        b.rr.q_conn.connect();
        b.rr.q_msn.connect();
        b.rr.q_sink_stag.connect();
        b.rr.q_sink_to.connect();
        b.rr.q_len.connect();
        b.rr.q_src_stag.connect();
        b.rr.q_src_to.connect();
        b.rr.cfg_qp.connect();
        b.rr.cfg_pd.connect();
        b.rr.xs_seq.connect();
        b.rr.win_en.connect();
        b.rr.win_end.connect();
        b.rr.hold.connect();
        b.rr.xs_seq_start.connect();
        b.rr.xs_mulpdu.connect();
        b.rr.dma_rd_cpl_data.connect();
        b.rr.dma_rd_cpl_keep.connect();
        b.rr.dma_rd_cpl_tag.connect();
        b.tpt.tpt_wr_index.connect();
        b.tpt.tpt_wr_data.connect();
        b.tpt.pbl_wr_index.connect();
        b.tpt.pbl_wr_data.connect();
        b.connect_all();
        b.rr.reset.next = true;
        tick!(b);
        tick!(b);
        b.rr.reset.next = false;
        let (table, pbl) = regions();
        for (i, &page) in pbl.iter().enumerate() {
            b.tpt.tpt_wr_en.next = i < table.len();
            if let Some(e) = table.get(i) {
                b.tpt.tpt_wr_index.next = (i as u64).into();
                b.tpt.tpt_wr_data.next = entry_bits(e);
            }
            b.tpt.pbl_wr_en.next = true;
            b.tpt.pbl_wr_index.next = (i as u64).into();
            b.tpt.pbl_wr_data.next = page.into();
            tick!(b);
        }
        b.tpt.tpt_wr_en.next = false;
        b.tpt.pbl_wr_en.next = false;
        b
    }

    #[derive(Debug, Clone, PartialEq)]
    struct Desc {
        seq: u32,
        last: bool,
        stag: u32,
        to: u64,
        len: u16,
        opcode: u8,
        /// The peer's window end when the descriptor was taken.
        wend: u32,
    }

    struct Out {
        descs: Vec<Desc>,
        pays: Vec<Vec<u8>>,
        reads: Vec<(u64, u16)>,
        terms: Vec<(u16, Vec<u8>, u32)>,
        seq_back: Option<u32>,
        clocks: u64,
        /// The clock of each payload's last beat.
        pay_ends: Vec<u64>,
        /// Most DMA reads in flight at once.
        max_inflight: usize,
    }

    /// What surrounds the block: `full_rate` = every ready high, the stream
    /// granted at once, a completion beat every clock once due, each read's
    /// first beat `latency` clocks after its request; otherwise random
    /// back-pressure and 3..33 clocks of latency.
    #[derive(Clone, Copy)]
    struct Env {
        full_rate: bool,
        latency: u64,
    }

    const RANDOM: Env = Env {
        full_rate: false,
        latency: 0,
    };

    struct Stream {
        seq: u32,
        mulpdu: u16,
        mpa: MpaSettings,
        /// Peer window: `Some((end0, step, every))` = SND.UNA + SND.WND
        /// starts at `end0` and grows by `step` every `every` clocks.
        win: Option<(u32, u32, u64)>,
    }

    /// Runs one request through the block with random back-pressure and DMA
    /// latency; returns everything it produced.
    fn run(b: &mut Bench, rng: &mut Rng, r: &ReadRequestRepr, msn: u32, st: &Stream) -> Out {
        run_in(b, rng, r, msn, st, RANDOM)
    }

    /// `run` in the surroundings `env`. The DMA server answers the reads in
    /// flight in a random order among those due (as the DMA contract
    /// allows), each read's beats contiguous.
    fn run_in(
        b: &mut Bench,
        rng: &mut Rng,
        r: &ReadRequestRepr,
        msn: u32,
        st: &Stream,
        env: Env,
    ) -> Out {
        let mut o = Out {
            descs: vec![],
            pays: vec![],
            reads: vec![],
            terms: vec![],
            seq_back: None,
            clocks: 0,
            pay_ends: vec![],
            max_inflight: 0,
        };
        let mut queued = true;
        let mut cur: Vec<u8> = vec![];
        // reads in flight: (tag, addr, len, due clock, octets sent); `strm`
        // the one whose beats are on the bus
        let mut inflight: Vec<(u64, u64, u16, u64, usize)> = vec![];
        let mut strm: Option<usize> = None;
        let mut done = false;
        let mut t = 0u64;
        while !done {
            t += 1;
            assert!(t < 200_000, "stuck");
            b.rr.q_valid.next = queued;
            b.rr.q_qp.next = 3.into();
            b.rr.q_conn.next = 9.into();
            b.rr.q_msn.next = (msn as u64).into();
            b.rr.q_sink_stag.next = (r.sink_stag as u64).into();
            b.rr.q_sink_to.next = r.sink_to.into();
            b.rr.q_len.next = (r.size as u64).into();
            b.rr.q_src_stag.next = (r.src_stag as u64).into();
            b.rr.q_src_to.next = r.src_to.into();
            b.rr.xs_gnt.next = b.rr.xs_req.val() && (env.full_rate || rng.below(3) != 0)
                || b.rr.xs_gnt.val() && b.rr.xs_req.val();
            b.rr.xs_seq.next = (st.seq as u64).into();
            b.rr.xs_seq_start.next = (st.mpa.seq_start as u64).into();
            b.rr.xs_mulpdu.next = (st.mulpdu as u64).into();
            b.rr.xs_mk_en.next = st.mpa.markers;
            b.rr.xs_crc_en.next = st.mpa.crc;
            let wend = st
                .win
                .map(|(e0, step, every)| e0.wrapping_add(step.wrapping_mul((t / every) as u32)))
                .unwrap_or(0);
            b.rr.win_en.next = st.win.is_some();
            b.rr.win_end.next = (wend as u64).into();
            let fr = env.full_rate;
            b.rr.desc_ready.next = fr || rng.below(3) != 0;
            b.rr.dma_rd_req_ready.next = fr || rng.below(2) == 0;
            b.rr.pay_ready.next = fr || rng.below(4) != 0;
            b.rr.term_ready.next = fr || rng.below(2) == 0;
            // DMA completion beat
            b.rr.dma_rd_cpl_valid.next = false;
            if strm.is_none() {
                let due: Vec<usize> = (0..inflight.len())
                    .filter(|&i| t >= inflight[i].3)
                    .collect();
                if !due.is_empty() {
                    strm = Some(due[rng.below(due.len())]);
                }
            }
            if let Some(i) = strm {
                let (tag, a, l, _, sent) = inflight[i];
                if fr || rng.below(5) != 0 {
                    let n = (l as usize - sent).min(8);
                    let mut w = rng.next_u64().to_le_bytes();
                    for (i, x) in w.iter_mut().enumerate().take(n) {
                        *x = mem(a + (sent + i) as u64);
                    }
                    b.rr.dma_rd_cpl_valid.next = true;
                    b.rr.dma_rd_cpl_data.next = u64::from_le_bytes(w).into();
                    b.rr.dma_rd_cpl_keep.next = (n as u64).into();
                    b.rr.dma_rd_cpl_last.next = sent + n == l as usize;
                    b.rr.dma_rd_cpl_tag.next = tag.into();
                }
            }
            // settle the combinational outputs for these inputs
            b.clock.next = false.into();
            assert!(simulate(b, 1000));
            if b.rr.q_valid.val() && b.rr.q_ready.val() {
                queued = false;
            }
            if b.rr.desc_valid.val() && b.rr.desc_ready.val() {
                o.descs.push(Desc {
                    seq: b.rr.desc_seq.val().index() as u32,
                    last: b.rr.desc_last.val(),
                    stag: b.rr.desc_stag.val().index() as u32,
                    to: b.rr.desc_to.val().to_u64(),
                    len: b.rr.desc_pay_len.val().index() as u16,
                    opcode: b.rr.desc_opcode.val().index() as u8,
                    wend,
                });
                assert_eq!(b.rr.desc_qp.val().index(), 3);
                assert_eq!(b.rr.desc_crc_en.val(), st.mpa.crc);
                assert_eq!(b.rr.desc_mk_en.val(), st.mpa.markers);
                assert_eq!(b.rr.desc_seq_start.val().index() as u32, st.mpa.seq_start);
            }
            if b.rr.dma_rd_req_valid.val() && b.rr.dma_rd_req_ready.val() {
                let a = b.rr.dma_rd_req_addr.val().to_u64();
                let l = b.rr.dma_rd_req_len.val().index() as u16;
                let tag = b.rr.dma_rd_req_tag.val().index() as u64;
                assert_eq!(tag & !2, RR_TAG);
                assert!(
                    inflight.iter().all(|f| f.0 != tag),
                    "tag {tag:#x} reused while in flight"
                );
                o.reads.push((a, l));
                let lat = if env.full_rate {
                    env.latency
                } else {
                    3 + rng.below(30) as u64
                };
                inflight.push((tag, a, l, t + lat, 0));
                o.max_inflight = o.max_inflight.max(inflight.len());
            }
            if b.rr.dma_rd_cpl_valid.val() {
                // the block never holds a completion (slots fit a read)
                assert!(b.rr.dma_rd_cpl_ready.val());
                let i = strm.unwrap();
                let n = b.rr.dma_rd_cpl_keep.val().index();
                inflight[i].4 += n;
                if inflight[i].4 == inflight[i].2 as usize {
                    inflight.remove(i);
                    strm = None;
                }
            }
            if b.rr.pay_valid.val() && b.rr.pay_ready.val() {
                let d = b.rr.pay_data.val().to_u64().to_le_bytes();
                cur.extend_from_slice(&d[..b.rr.pay_keep.val().index()]);
                if b.rr.pay_last.val() {
                    o.pays.push(std::mem::take(&mut cur));
                    o.pay_ends.push(t);
                }
            }
            if b.rr.term_valid.val() && b.rr.term_ready.val() {
                let h = b.rr.term_hdr.val();
                let hdr: Vec<u8> = (0..48)
                    .map(|i| h.get_bits::<8>(8 * i).index() as u8)
                    .collect();
                assert_eq!(b.rr.term_seg_len.val().index(), 46);
                assert_eq!(b.rr.term_conn.val().index(), 9);
                o.terms.push((
                    b.rr.term_cause.val().index() as u16,
                    hdr,
                    b.rr.term_qpn.val().index() as u32,
                ));
            }
            if b.rr.xs_done.val() {
                assert!(b.rr.xs_gnt.val());
                o.seq_back = Some(b.rr.xs_seq_new.val().index() as u32);
            }
            if b.rr.done_valid.val() {
                assert_eq!(b.rr.done_qp.val().index(), 3);
                done = true;
            }
            b.clock.next = true.into();
            assert!(simulate(b, 1000));
        }
        assert!(inflight.is_empty(), "request over with reads in flight");
        for _ in 0..5 {
            tick!(*b);
            assert!(
                !b.rr.desc_valid.val() && !b.rr.dma_rd_req_valid.val() && !b.rr.term_valid.val()
            );
        }
        o.clocks = t;
        o
    }

    /// What the octets of `[to, to + len)` of an entry are in host memory.
    fn source(e: &TptEntry, pbl: &[u64], to: u64, len: u32) -> Vec<u8> {
        (0..len as u64)
            .map(|i| {
                let (p, off) = e.page_of(to + i).unwrap();
                mem(pbl[p as usize] + off)
            })
            .collect()
    }

    /// A Read Request for `len` octets at `src_to` of TPT entry `idx` with
    /// key `key`, into a random sink (STag, then TO, drawn from `rng`).
    fn read_request(rng: &mut Rng, idx: u32, key: u8, src_to: u64, len: u32) -> ReadRequestRepr {
        ReadRequestRepr {
            sink_stag: rng.next_u64() as u32,
            sink_to: rng.next_u64(),
            size: len,
            src_stag: Stag::new(idx, key).unwrap().0,
            src_to,
        }
    }

    /// The bench with QP 3 configured in the test's PD.
    fn configured_bench() -> Bench {
        let mut b = bench();
        b.rr.cfg_valid.next = true;
        b.rr.cfg_qp.next = 3.into();
        b.rr.cfg_pd.next = (PD as u64).into();
        tick!(b);
        b.rr.cfg_valid.next = false;
        b
    }

    #[test]
    fn responses_match_reference_and_faults_terminate() {
        let mut rng = Rng::new(5);
        let mut b = configured_bench();
        let (table, pbl) = regions();
        let mut msn = 1u32;
        let mut seq = 0xFFFF_F000u32;
        for round in 0..24 {
            let mpa = MpaSettings {
                crc: rng.below(2) == 0,
                markers: rng.below(2) == 0,
                seq_start: seq.wrapping_sub(4 * rng.below(300) as u32),
            };
            let mulpdu = [128u16, 700, 1452, 1460][rng.below(4)];
            let st = Stream {
                seq,
                mulpdu: if round == 17 { 1460 } else { mulpdu },
                mpa,
                win: None,
            };
            let idx = match round {
                17 => 1,
                18 => 3,
                19 => 4,
                20 => 1,
                21 => 2,
                22 => 5,
                _ => 1 + rng.below(2),
            };
            let e = &table[idx];
            let len = match rng.below(5) {
                0 => 0,
                1 => 1 + rng.below(16) as u32,
                _ => rng.below(if idx == 1 { 20000 } else { 9000 }) as u32,
            };
            let mut src_to =
                e.va + rng.below((e.length as usize).saturating_sub(len as usize).max(1)) as u64;
            let mut want_fault: Option<RemoteProtectionError> = None;
            if (18..=22).contains(&round) {
                want_fault = Some(match idx {
                    3 => RemoteProtectionError::StagNotAssociated,
                    4 => RemoteProtectionError::AccessRightsViolation,
                    _ => RemoteProtectionError::InvalidStag,
                });
            }
            let mut key = e.key;
            if round == 20 {
                key ^= 1; // wrong key on a valid region
                want_fault = Some(RemoteProtectionError::InvalidStag);
            }
            if round == 21 {
                src_to = e.va + e.length - 3; // runs past the end
                want_fault = Some(RemoteProtectionError::BaseOrBoundsViolation);
            }
            let len = if round == 21 { 100 } else { len };
            // Round 17: a Read that fits one FPDU but crosses a 4 KiB page
            // 256 octets in: two responses, the first not the last.
            let (len, src_to) = if round == 17 {
                (1000, 0x1000_5f00)
            } else {
                (len, src_to)
            };
            let r = read_request(&mut rng, idx as u32, key, src_to, len);
            let o = run(&mut b, &mut rng, &r, msn, &st);
            if let Some(f) = want_fault {
                assert!(
                    o.descs.is_empty() && o.reads.is_empty() && o.pays.is_empty(),
                    "round {round}"
                );
                assert_eq!(o.terms.len(), 1);
                assert_eq!(
                    o.terms[0].0,
                    TerminateCause::from(f).to_bits(),
                    "round {round}"
                );
                let repr = RdmapRepr::ReadRequest { msn, request: r };
                let mut seg = vec![0u8; 48];
                repr.emit(&mut seg).unwrap();
                assert_eq!(o.terms[0].1, seg, "echo, round {round}");
                // the QP is stopped: its next request is dropped, quietly
                let o2 = run(&mut b, &mut rng, &r, msn + 1, &st);
                assert!(o2.descs.is_empty() && o2.terms.is_empty() && o2.reads.is_empty());
                b.rr.cfg_valid.next = true;
                tick!(b);
                b.rr.cfg_valid.next = false;
                msn += 1;
                continue;
            }
            assert!(o.terms.is_empty(), "round {round}: {:?}", o.terms);
            let want = source(e, &pbl, src_to, len);
            assert_eq!(
                o.descs.len(),
                o.pays.iter().filter(|p| !p.is_empty()).count().max(1)
            );
            let mut off = 0usize;
            let mut s = seq;
            let mut pays = o.pays.iter();
            for (i, d) in o.descs.iter().enumerate() {
                assert_eq!(d.opcode, Opcode::ReadResponse.value());
                assert_eq!(d.stag, r.sink_stag);
                assert_eq!(d.to, r.sink_to.wrapping_add(off as u64));
                assert_eq!(d.last, i + 1 == o.descs.len());
                assert!(d.len as usize <= st.mulpdu as usize - 14);
                assert_eq!(d.seq, s, "seq of segment {i}");
                let p: &[u8] = if d.len == 0 {
                    &[]
                } else {
                    pays.next().unwrap()
                };
                assert_eq!(p.len(), d.len as usize);
                assert_eq!(
                    p,
                    &want[off..off + p.len()],
                    "payload of segment {i}, round {round}"
                );
                let repr = RdmapRepr::ReadResponse {
                    last: d.last,
                    stag: d.stag,
                    to: d.to,
                    payload: p,
                };
                let mut ulpdu = vec![0u8; repr.buffer_len()];
                repr.emit(&mut ulpdu).unwrap();
                s = s.wrapping_add(frame_ulpdu(&st.mpa, s, &ulpdu).unwrap().len() as u32);
                off += p.len();
            }
            assert_eq!(off, len as usize);
            assert_eq!(o.seq_back, Some(s));
            if round == 17 {
                assert_eq!(
                    o.descs.iter().map(|d| d.len).collect::<Vec<_>>(),
                    [256, 744],
                    "a page end cuts the last FPDU"
                );
            }
            for &(a, l) in &o.reads {
                assert!(
                    l >= 1 && (a & 0xfff) + l as u64 <= 4096,
                    "read crosses 4 KiB"
                );
            }
            if round == 3 {
                println!(
                    "read of {len} octets: {} segments, {} clocks",
                    o.descs.len(),
                    o.clocks
                );
            }
            seq = s;
            msn += 1;
        }
    }

    /// `snd_nxt` advances by the FPDU's wire length with its markers (RFC
    /// 5044 §4.3) at every marker phase: one-FPDU Reads with the stream
    /// start 0, 4, ..., 508 octets behind SND.NXT, so each FPDU end meets
    /// each marker position; the advance is checked against `frame_ulpdu`.
    /// (Random phases and lengths in the test above rarely end an FPDU right
    /// at a marker, where the marker count's thresholds lie.)
    #[test]
    fn marker_count_at_every_phase() {
        let mut rng = Rng::new(508);
        let mut b = configured_bench();
        let (table, _) = regions();
        let e = &table[1];
        let seq = 0x1234_5000u32;
        for (n, (phase, len)) in (0..128u32)
            .flat_map(|p| [400u32, 901, 1402].map(|l| (p, l)))
            .enumerate()
        {
            let mpa = MpaSettings {
                crc: true,
                markers: true,
                seq_start: seq.wrapping_sub(4 * phase),
            };
            // 1..3 markers inside the FPDU; a 4 KiB-aligned source, so each
            // Read is one segment
            let r = read_request(&mut rng, 1, e.key, e.va, len);
            let st = Stream {
                seq,
                mulpdu: 1460,
                mpa,
                win: None,
            };
            let o = run(&mut b, &mut rng, &r, 1 + n as u32, &st);
            assert!(o.terms.is_empty());
            assert_eq!(o.descs.len(), 1, "phase {phase}");
            let d = &o.descs[0];
            let repr = RdmapRepr::ReadResponse {
                last: d.last,
                stag: d.stag,
                to: d.to,
                payload: &o.pays[0],
            };
            let mut ulpdu = vec![0u8; repr.buffer_len()];
            repr.emit(&mut ulpdu).unwrap();
            let wire = frame_ulpdu(&mpa, seq, &ulpdu).unwrap().len() as u32;
            assert_eq!(
                o.seq_back,
                Some(seq.wrapping_add(wire)),
                "phase {phase}, {len} octets"
            );
        }
    }

    /// Clocks per Read Response segment when nothing outside the block
    /// waits (every ready high, the stream granted at once) and each DMA
    /// read's first beat comes 78 clocks (500 ns at 156.25 MHz) after its
    /// request: between the ends of the second and the last payload the
    /// block must take no longer than the segments' frames take on a
    /// 10 Gb/s wire (8 octets a clock; Ethernet, IPv4 and TCP headers, FCS,
    /// preamble and IFG around each FPDU), at MTU 1500 (MULPDU 1454) and
    /// 9000 (MULPDU 8882: segments cut at 4 KiB pages). One read in flight
    /// took 78 clocks plus the segment's beats plus its TPT lookup and
    /// descriptor per segment: over the wire time at both MTUs.
    #[test]
    fn segments_keep_up_with_the_wire_at_500ns_dma_latency() {
        let mut rng = Rng::new(1500);
        let mut b = configured_bench();
        let (table, pbl) = regions();
        let e = &table[1];
        for (n, mulpdu) in [1454u16, 8882].into_iter().enumerate() {
            let mpa = MpaSettings {
                crc: true,
                markers: false,
                seq_start: 0x5000,
            };
            let len = 64 * 1024;
            let src_to = e.va + 0x1000 - 0x123; // 4 KiB-aligned source
            let r = read_request(&mut rng, 1, e.key, src_to, len);
            let st = Stream {
                seq: 0x6000,
                mulpdu,
                mpa,
                win: None,
            };
            let env = Env {
                full_rate: true,
                latency: 78,
            };
            let o = run_in(&mut b, &mut rng, &r, 1 + n as u32, &st, env);
            assert!(o.terms.is_empty());
            let got: Vec<u8> = o.pays.concat();
            assert_eq!(got, source(e, &pbl, src_to, len));
            let frame = |pay: usize| (2 + (14 + pay).div_ceil(4) * 4 + 4 + 54 + 24) as f64 / 8.0;
            let nseg = o.descs.len();
            assert_eq!(o.pay_ends.len(), nseg);
            let wire: f64 = o.descs[2..].iter().map(|d| frame(d.len as usize)).sum();
            let took = (o.pay_ends[nseg - 1] - o.pay_ends[1]) as f64;
            println!(
                "MULPDU {mulpdu}: {nseg} segments, {} clocks in all; after the second \
                 {:.1} clocks/segment, wire {:.1}; at most {} reads in flight",
                o.clocks,
                took / (nseg - 2) as f64,
                wire / (nseg - 2) as f64,
                o.max_inflight
            );
            assert!(took <= wire, "the wire outruns the Read responder");
        }
    }

    #[test]
    fn generates_verilog() {
        let mut b = ReadResp::default();
        b.connect_all();
        let v = generate_verilog(&b);
        assert!(v.contains("module top"));
    }
    /// RFC 9293 §3.8.6: Read Response segments wait for the peer's window.
    /// The window end starts closed (at SND.NXT, or less than 20 octets
    /// past it: short of any FPDU's end) and opens by a few hundred octets every 40..200 clocks
    /// (ACKs arriving); SND.NXT near the 2^32 wrap. Every FPDU, whose wire
    /// length comes from `frame_ulpdu`, must end at or before the window end
    /// of the clock its descriptor was taken (sequence-space compare), and
    /// the whole response still arrives byte-exact (a wait, never a drop).
    #[test]
    fn responses_wait_for_peer_window() {
        let mut rng = Rng::new(77);
        let mut b = configured_bench();
        let (table, pbl) = regions();
        let mut seq = 0xFFFF_F800u32;
        let mut waited = 0u64;
        for round in 0..6 {
            let mpa = MpaSettings {
                crc: true,
                markers: round % 2 == 1,
                seq_start: seq.wrapping_sub(4 * rng.below(300) as u32),
            };
            let e = &table[1];
            let len = [0u32, 1, 3000, 9000, 5000, 700][round];
            let src_to = e.va + rng.below(100_000) as u64;
            let r = read_request(&mut rng, 1, e.key, src_to, len);
            // short of any FPDU's end (an empty Read Response is 20 octets)
            let closed = if round < 2 { 0 } else { rng.below(20) as u32 };
            let every = 40 + rng.below(160) as u64;
            let st = Stream {
                seq,
                mulpdu: [700u16, 1460][round % 2],
                mpa,
                win: Some((seq.wrapping_add(closed), 100 + rng.below(300) as u32, every)),
            };
            let o = run(&mut b, &mut rng, &r, 1 + round as u32, &st);
            assert!(o.terms.is_empty());
            let want = source(e, &pbl, src_to, len);
            let mut off = 0usize;
            let mut s = seq;
            let mut pays = o.pays.iter();
            for (i, d) in o.descs.iter().enumerate() {
                let p: &[u8] = if d.len == 0 {
                    &[]
                } else {
                    pays.next().unwrap()
                };
                assert_eq!(p, &want[off..off + p.len()], "segment {i}, round {round}");
                assert_eq!(d.seq, s);
                let repr = RdmapRepr::ReadResponse {
                    last: d.last,
                    stag: d.stag,
                    to: d.to,
                    payload: p,
                };
                let mut ulpdu = vec![0u8; repr.buffer_len()];
                repr.emit(&mut ulpdu).unwrap();
                s = s.wrapping_add(frame_ulpdu(&st.mpa, s, &ulpdu).unwrap().len() as u32);
                assert!(
                    (d.wend.wrapping_sub(s) as i32) >= 0,
                    "round {round} segment {i}: FPDU ends at {s:#x}, window end {:#x}",
                    d.wend
                );
                off += p.len();
            }
            assert_eq!(off, len as usize);
            assert!(o.descs.last().unwrap().last);
            assert_eq!(o.seq_back, Some(s));
            // it had to wait for the window at least for the first FPDU
            waited += o.clocks;
            assert!(o.clocks >= every, "round {round}: {} clocks", o.clocks);
            seq = s;
        }
        println!("window test: 6 responses in {waited} clocks");
    }
}
