//! Translation and Protection Table (TPT) and page-list table, with the
//! check unit every tagged access goes through (RFC 5040 §2.1 STags,
//! RFC 5041 §7.2 tagged buffer errors).
//!
//! # Tables
//! * TPT: `2^TN` entries (default 256) of 256 bits in BRAM. An entry is the
//!   32-octet record of `rnic_wire::abi::tpt` exactly as `TptEntry::emit`
//!   writes it, octet `i` in bits `8i+7..8i` (state, key, access, page_shift,
//!   pd, va, length, pbl_base, npages), so the firmware's table-write path
//!   passes the octets through unchanged.
//! * Page list: `2^PN` entries (default 4096) of one 64-bit bus address
//!   (the page's first octet).
//!
//! Both have a write port (`tpt_wr_*`, `pbl_wr_*`; an index beyond the table
//! is ignored). The BRAM is not cleared by `reset`; at configuration it is
//! zero, i.e. every entry is `Free`.
//!
//! # Check unit
//! A request `{stag, pd, need, to, len}` (`chk_valid`/`chk_ready`) is
//! answered on `res_*` (`res_valid`/`res_ready`) with a fault code
//! ([`fault`], the `TptFault` of `rnic-wire`) and, for an accepted access of
//! `len > 0`, the bus address of the octet at `to`, the octets left in that
//! page, the page-list index of that page and the page shift. The checks and
//! their order are those of `TptEntry::check`: STag (index inside the table,
//! entry `Valid`, key), PD, access rights, then for `len > 0` offset wrap and
//! bounds. Two conditions `TptEntry::check` cannot see are reported as
//! `BOUNDS`: the region's pages from `to` to `to + len - 1` must be inside
//! its page list (`page < npages`, the condition of `TptEntry::page_of`) and
//! inside the page-list table. An entry with a page shift outside
//! 12..=30 (which `TptEntry::parse` refuses) is treated as not `Valid`.
//!
//! One request at a time: `chk_ready` is high while idle; the result is held
//! until `res_ready`. **Latency**: a request taken at clock edge `t` has its
//! result on `res_*` after edge `t + 4` (TPT read at `t`, two compare stages,
//! page-list read, address add).
//!
//! # Page walk
//! `walk_idx` is the page-list read address whenever the check unit is not
//! in its page-list read cycle (i.e. whenever it is idle); `walk_addr` is the
//! entry one clock later (registered BRAM read). The placement uses it to
//! follow a segment across page boundaries while the check unit is idle.

use rnic_wire::abi::tpt::{TptState, PAGE_SHIFT_MAX, PAGE_SHIFT_MIN};
use rust_hdl::prelude::*;

/// Default TPT index bits: 256 entries.
pub const TPT_INDEX_BITS: usize = 8;
/// Default page-list index bits: 4096 entries.
pub const PBL_INDEX_BITS: usize = 12;

/// Fault codes on `res_fault` (one per `rnic_wire::abi::tpt::TptFault`).
pub mod fault {
    /// Access granted.
    pub const OK: u64 = 0;
    /// `TptFault::InvalidStag`: index outside the table, entry not `Valid`,
    /// or key mismatch.
    pub const INVALID_STAG: u64 = 1;
    /// `TptFault::WrongPd`: the QP's PD is not the region's.
    pub const WRONG_PD: u64 = 2;
    /// `TptFault::AccessRights`: a needed right is not granted.
    pub const ACCESS_RIGHTS: u64 = 3;
    /// `TptFault::Bounds`: outside the region (or its page list).
    pub const BOUNDS: u64 = 4;
    /// `TptFault::OffsetWrap`: `to + len` wraps 2^64.
    pub const OFFSET_WRAP: u64 = 5;
}

/// The value of an entry's `state` octet that allows access.
const STATE_VALID: u64 = TptState::Valid as u64;

#[derive(LogicBlock)]
pub struct Tpt<const TN: usize, const PN: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high: aborts a check in progress (tables kept).
    pub reset: Signal<In, Bit>,
    // ---- firmware write ports
    pub tpt_wr_en: Signal<In, Bit>,
    pub tpt_wr_index: Signal<In, Bits<24>>,
    /// The 32-octet entry, octet `i` in bits `8i+7..8i`.
    pub tpt_wr_data: Signal<In, Bits<256>>,
    pub pbl_wr_en: Signal<In, Bit>,
    pub pbl_wr_index: Signal<In, Bits<24>>,
    pub pbl_wr_data: Signal<In, Bits<64>>,
    // ---- check request
    pub chk_valid: Signal<In, Bit>,
    pub chk_ready: Signal<Out, Bit>,
    pub chk_stag: Signal<In, Bits<32>>,
    pub chk_pd: Signal<In, Bits<32>>,
    /// `ACCESS_*` bits that must all be granted.
    pub chk_need: Signal<In, Bits<3>>,
    pub chk_to: Signal<In, Bits<64>>,
    pub chk_len: Signal<In, Bits<32>>,
    /// The request is an invalidation (Send with Invalidate, RFC 5040
    /// §5.3 / §6.10; send `chk_need` 0 and `chk_len` 0): on fault 0 the entry
    /// is marked `Invalid` (its state octet rewritten) before `res_valid`.
    pub chk_inv: Signal<In, Bit>,
    // ---- check result
    pub res_valid: Signal<Out, Bit>,
    pub res_ready: Signal<In, Bit>,
    /// [`fault`] code, 0 = access granted.
    pub res_fault: Signal<Out, Bits<3>>,
    /// Bus address of the octet at `to` (fault 0 and `len > 0` only).
    pub res_addr: Signal<Out, Bits<64>>,
    /// Octets from `to` to the end of its page (1..=2^30).
    pub res_page_left: Signal<Out, Bits<32>>,
    /// Page-list index of the page holding `to`.
    pub res_pbl_idx: Signal<Out, Bits<PN>>,
    /// log2 of the region's page size.
    pub res_page_shift: Signal<Out, Bits<5>>,
    // ---- page walk
    pub walk_idx: Signal<In, Bits<PN>>,
    pub walk_addr: Signal<Out, Bits<64>>,
    // ---- tables and constants
    tpt: RAM<Bits<256>, TN>,
    pbl: RAM<Bits<64>, PN>,
    tpt_size: Constant<Bits<24>>,
    /// The STag bits above the table's index bits (an index beyond it).
    stag_oob: Constant<Bits<32>>,
    pbl_size: Constant<Bits<34>>,
    state_valid: Constant<Bits<8>>,
    ps_min: Constant<Bits<8>>,
    ps_max: Constant<Bits<8>>,
    one64: Constant<Bits<64>>,
    one32: Constant<Bits<32>>,
    f_ok: Constant<Bits<3>>,
    f_invalid_stag: Constant<Bits<3>>,
    f_wrong_pd: Constant<Bits<3>>,
    f_access_rights: Constant<Bits<3>>,
    f_bounds: Constant<Bits<3>>,
    f_offset_wrap: Constant<Bits<3>>,
    state_mask: Constant<Bits<256>>,
    state_invalid: Constant<Bits<256>>,
    // ---- pipeline
    busy: DFF<Bit>,
    v1: DFF<Bit>,
    v2: DFF<Bit>,
    v3: DFF<Bit>,
    v4: DFF<Bit>,
    // request
    r_key: DFF<Bits<8>>,
    r_oob: DFF<Bit>,
    r_index: DFF<Bits<TN>>,
    r_pd: DFF<Bits<32>>,
    r_need: DFF<Bits<3>>,
    r_to: DFF<Bits<64>>,
    r_len: DFF<Bits<32>>,
    /// The request is an invalidation.
    r_inv: DFF<Bit>,
    /// The firmware wrote the requested entry since (and including) the
    /// clock the request was taken: the entry read is stale, the
    /// invalidation is not written back (the firmware's write comes after).
    w_hit: DFF<Bit>,
    /// An invalidation waits for the write port (a firmware write to
    /// another entry had it this clock).
    inv_pend: DFF<Bit>,
    // stage 2
    s2_pre: DFF<Bits<3>>,
    s2_len0: DFF<Bit>,
    s2_wrap: DFF<Bit>,
    s2_re_carry: DFF<Bit>,
    s2_end: DFF<Bits<64>>,
    s2_region_end: DFF<Bits<64>>,
    s2_va: DFF<Bits<64>>,
    s2_first_page: DFF<Bits<64>>,
    s2_ps: DFF<Bits<5>>,
    s2_pbl_base: DFF<Bits<32>>,
    s2_npages: DFF<Bits<32>>,
    // stage 3
    s3_fault: DFF<Bits<3>>,
    s3_page: DFF<Bits<64>>,
    s3_last_page: DFF<Bits<64>>,
    s3_off: DFF<Bits<32>>,
    s3_ps: DFF<Bits<5>>,
    s3_pbl_base: DFF<Bits<32>>,
    s3_npages: DFF<Bits<32>>,
    // stage 4
    s4_fault: DFF<Bits<3>>,
    s4_off: DFF<Bits<32>>,
    s4_page_left: DFF<Bits<32>>,
    s4_pbl_idx: DFF<Bits<PN>>,
    s4_ps: DFF<Bits<5>>,
    // result
    o_fault: DFF<Bits<3>>,
    o_addr: DFF<Bits<64>>,
    o_page_left: DFF<Bits<32>>,
    o_pbl_idx: DFF<Bits<PN>>,
    o_ps: DFF<Bits<5>>,
    // combinational temporaries
    take: Signal<Local, Bit>,
    e_state: Signal<Local, Bits<8>>,
    e_key: Signal<Local, Bits<8>>,
    e_access: Signal<Local, Bits<3>>,
    e_ps: Signal<Local, Bits<8>>,
    e_pd: Signal<Local, Bits<32>>,
    e_va: Signal<Local, Bits<64>>,
    e_length: Signal<Local, Bits<64>>,
    e_invalid: Signal<Local, Bit>,
    end65: Signal<Local, Bits<65>>,
    re65: Signal<Local, Bits<65>>,
    page_size: Signal<Local, Bits<64>>,
    rel: Signal<Local, Bits<64>>,
    last_rel: Signal<Local, Bits<64>>,
    off64: Signal<Local, Bits<64>>,
    pmask: Signal<Local, Bits<64>>,
    last_lo: Signal<Local, Bits<32>>,
    fault2: Signal<Local, Bits<3>>,
    last_sum: Signal<Local, Bits<34>>,
    pbl_idx_full: Signal<Local, Bits<32>>,
    fault3: Signal<Local, Bits<3>>,
    wr_ok: Signal<Local, Bit>,
    pre1: Signal<Local, Bits<3>>,
    hit_now: Signal<Local, Bit>,
    inv_try: Signal<Local, Bit>,
}

impl<const TN: usize, const PN: usize> Default for Tpt<TN, PN> {
    fn default() -> Self {
        assert!((1..=24).contains(&TN) && (1..=24).contains(&PN));
        Self {
            clock: Default::default(),
            reset: Default::default(),
            tpt_wr_en: Default::default(),
            tpt_wr_index: Default::default(),
            tpt_wr_data: Default::default(),
            pbl_wr_en: Default::default(),
            pbl_wr_index: Default::default(),
            pbl_wr_data: Default::default(),
            chk_valid: Default::default(),
            chk_ready: Default::default(),
            chk_stag: Default::default(),
            chk_pd: Default::default(),
            chk_need: Default::default(),
            chk_to: Default::default(),
            chk_len: Default::default(),
            chk_inv: Default::default(),
            res_valid: Default::default(),
            res_ready: Default::default(),
            res_fault: Default::default(),
            res_addr: Default::default(),
            res_page_left: Default::default(),
            res_pbl_idx: Default::default(),
            res_page_shift: Default::default(),
            walk_idx: Default::default(),
            walk_addr: Default::default(),
            tpt: Default::default(),
            pbl: Default::default(),
            tpt_size: Constant::new((1u64 << TN).into()),
            stag_oob: Constant::new((0xffff_ffffu64 & !((1u64 << (8 + TN)) - 1)).into()),
            pbl_size: Constant::new((1u64 << PN).into()),
            state_valid: Constant::new(STATE_VALID.into()),
            ps_min: Constant::new((PAGE_SHIFT_MIN as u64).into()),
            ps_max: Constant::new((PAGE_SHIFT_MAX as u64).into()),
            one64: Constant::new(1.into()),
            one32: Constant::new(1.into()),
            f_ok: Constant::new(fault::OK.into()),
            f_invalid_stag: Constant::new(fault::INVALID_STAG.into()),
            f_wrong_pd: Constant::new(fault::WRONG_PD.into()),
            f_access_rights: Constant::new(fault::ACCESS_RIGHTS.into()),
            f_bounds: Constant::new(fault::BOUNDS.into()),
            f_offset_wrap: Constant::new(fault::OFFSET_WRAP.into()),
            state_mask: Constant::new(!Bits::<256>::from(0xffu64)),
            state_invalid: Constant::new((TptState::Invalid as u64).into()),
            busy: Default::default(),
            v1: Default::default(),
            v2: Default::default(),
            v3: Default::default(),
            v4: Default::default(),
            r_key: Default::default(),
            r_oob: Default::default(),
            r_index: Default::default(),
            r_pd: Default::default(),
            r_need: Default::default(),
            r_to: Default::default(),
            r_len: Default::default(),
            r_inv: Default::default(),
            w_hit: Default::default(),
            inv_pend: Default::default(),
            s2_pre: Default::default(),
            s2_len0: Default::default(),
            s2_wrap: Default::default(),
            s2_re_carry: Default::default(),
            s2_end: Default::default(),
            s2_region_end: Default::default(),
            s2_va: Default::default(),
            s2_first_page: Default::default(),
            s2_ps: Default::default(),
            s2_pbl_base: Default::default(),
            s2_npages: Default::default(),
            s3_fault: Default::default(),
            s3_page: Default::default(),
            s3_last_page: Default::default(),
            s3_off: Default::default(),
            s3_ps: Default::default(),
            s3_pbl_base: Default::default(),
            s3_npages: Default::default(),
            s4_fault: Default::default(),
            s4_off: Default::default(),
            s4_page_left: Default::default(),
            s4_pbl_idx: Default::default(),
            s4_ps: Default::default(),
            o_fault: Default::default(),
            o_addr: Default::default(),
            o_page_left: Default::default(),
            o_pbl_idx: Default::default(),
            o_ps: Default::default(),
            take: Default::default(),
            e_state: Default::default(),
            e_key: Default::default(),
            e_access: Default::default(),
            e_ps: Default::default(),
            e_pd: Default::default(),
            e_va: Default::default(),
            e_length: Default::default(),
            e_invalid: Default::default(),
            end65: Default::default(),
            re65: Default::default(),
            page_size: Default::default(),
            rel: Default::default(),
            last_rel: Default::default(),
            off64: Default::default(),
            pmask: Default::default(),
            last_lo: Default::default(),
            fault2: Default::default(),
            last_sum: Default::default(),
            pbl_idx_full: Default::default(),
            fault3: Default::default(),
            wr_ok: Default::default(),
            pre1: Default::default(),
            hit_now: Default::default(),
            inv_try: Default::default(),
        }
    }
}

impl<const TN: usize, const PN: usize> Logic for Tpt<TN, PN> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            busy,
            v1,
            v2,
            v3,
            v4,
            r_key,
            r_oob,
            r_index,
            r_pd,
            r_need,
            r_to,
            r_len,
            r_inv,
            w_hit,
            inv_pend,
            s2_pre,
            s2_len0,
            s2_wrap,
            s2_re_carry,
            s2_end,
            s2_region_end,
            s2_va,
            s2_first_page,
            s2_ps,
            s2_pbl_base,
            s2_npages,
            s3_fault,
            s3_page,
            s3_last_page,
            s3_off,
            s3_ps,
            s3_pbl_base,
            s3_npages,
            s4_fault,
            s4_off,
            s4_page_left,
            s4_pbl_idx,
            s4_ps,
            o_fault,
            o_addr,
            o_page_left,
            o_pbl_idx,
            o_ps
        );
        self.tpt.read_clock.next = self.clock.val();
        self.tpt.write_clock.next = self.clock.val();
        self.pbl.read_clock.next = self.clock.val();
        self.pbl.write_clock.next = self.clock.val();

        // ---- firmware writes (an index beyond the table is ignored)
        self.tpt.write_address.next = self.tpt_wr_index.val().get_bits::<TN>(0);
        self.tpt.write_data.next = self.tpt_wr_data.val();
        self.wr_ok.next = self.tpt_wr_en.val() & (self.tpt_wr_index.val() < self.tpt_size.val());
        self.tpt.write_enable.next = self.wr_ok.val();
        self.pbl.write_address.next = self.pbl_wr_index.val().get_bits::<PN>(0);
        self.pbl.write_data.next = self.pbl_wr_data.val();
        self.pbl.write_enable.next = self.pbl_wr_en.val()
            & (bit_cast::<34, 24>(self.pbl_wr_index.val()) < self.pbl_size.val());

        // ---- request: the TPT read is issued in the cycle the request is
        // taken (address straight from the request), then held.
        self.chk_ready.next = !self.busy.q.val();
        self.take.next = self.chk_valid.val() & !self.busy.q.val();
        self.tpt.read_address.next = self.r_index.q.val();
        if !self.busy.q.val() {
            self.tpt.read_address.next = self.chk_stag.val().get_bits::<TN>(8);
        }
        self.v1.d.next = self.take.val();
        if self.take.val() {
            self.busy.d.next = true;
            self.r_key.d.next = self.chk_stag.val().get_bits::<8>(0);
            // STag index (24 bits) beyond the table: invalid STag. (A mask,
            // not a compare: this is on the clients' path into the unit.)
            self.r_oob.d.next = (self.chk_stag.val() & self.stag_oob.val()) != 0;
            self.r_index.d.next = self.chk_stag.val().get_bits::<TN>(8);
            self.r_pd.d.next = self.chk_pd.val();
            self.r_need.d.next = self.chk_need.val();
            self.r_to.d.next = self.chk_to.val();
            self.r_len.d.next = self.chk_len.val();
            self.r_inv.d.next = self.chk_inv.val();
        }
        // Firmware writes to the entry of the request in flight (a write in
        // the clock the request is taken counts: the read sees old data).
        self.hit_now.next =
            self.wr_ok.val() & (self.tpt_wr_index.val().get_bits::<TN>(0) == self.r_index.q.val());
        if self.take.val() {
            self.w_hit.d.next = self.wr_ok.val()
                & (self.tpt_wr_index.val().get_bits::<TN>(0)
                    == self.chk_stag.val().get_bits::<TN>(8));
        } else if self.busy.q.val() & self.hit_now.val() {
            self.w_hit.d.next = true;
        }

        // ---- stage 1 (entry from the TPT): STag, PD, rights; sums
        self.e_state.next = self.tpt.read_data.val().get_bits::<8>(0);
        self.e_key.next = self.tpt.read_data.val().get_bits::<8>(8);
        self.e_access.next = self.tpt.read_data.val().get_bits::<3>(16);
        self.e_ps.next = self.tpt.read_data.val().get_bits::<8>(24);
        self.e_pd.next = self.tpt.read_data.val().get_bits::<32>(32);
        self.e_va.next = self.tpt.read_data.val().get_bits::<64>(64);
        self.e_length.next = self.tpt.read_data.val().get_bits::<64>(128);
        self.e_invalid.next = self.r_oob.q.val()
            | (self.e_state.val() != self.state_valid.val())
            | (self.e_key.val() != self.r_key.q.val())
            | (self.e_ps.val() < self.ps_min.val())
            | (self.e_ps.val() > self.ps_max.val())
            // Access bits beyond the defined three make the entry invalid
            // (TptEntry::parse refuses them).
            | (self.tpt.read_data.val().get_bits::<5>(19) != 0);
        self.pre1.next = self.f_ok.val();
        if self.e_invalid.val() {
            self.pre1.next = self.f_invalid_stag.val();
        } else if self.e_pd.val() != self.r_pd.q.val() {
            self.pre1.next = self.f_wrong_pd.val();
        } else if (self.e_access.val() & self.r_need.q.val()) != self.r_need.q.val() {
            self.pre1.next = self.f_access_rights.val();
        }
        self.s2_pre.d.next = self.pre1.val();
        // ---- invalidation (RFC 5040 §5.3 / §6.10): the entry passed the
        // STag/PD checks → its state octet becomes `Invalid`, written back
        // through the table's one write port in stage 2 (from the registered
        // verdict `s2_pre`: decided in stage 1, the BRAM read → compares →
        // write-port path was the routed critical path). A firmware write
        // has the port first: to another entry → wait a clock (`inv_pend`,
        // the entry read stays current: the read address is held); to this
        // entry (now or since the request was taken, `w_hit`) → not written
        // back: the invalidation took effect at the read and the firmware's
        // write came after it, so neither is lost. The result waits for this.
        self.inv_try.next = self.inv_pend.q.val()
            | (self.v2.q.val() & self.r_inv.q.val() & (self.s2_pre.q.val() == self.f_ok.val()));
        if self.inv_try.val() {
            self.inv_pend.d.next = false;
            if !(self.w_hit.q.val() | self.hit_now.val()) {
                if self.wr_ok.val() {
                    self.inv_pend.d.next = true;
                } else {
                    self.tpt.write_enable.next = true;
                    self.tpt.write_address.next = self.r_index.q.val();
                    self.tpt.write_data.next = (self.tpt.read_data.val() & self.state_mask.val())
                        | self.state_invalid.val();
                }
            }
        }
        self.end65.next =
            bit_cast::<65, 64>(self.r_to.q.val()) + bit_cast::<65, 32>(self.r_len.q.val());
        self.re65.next =
            bit_cast::<65, 64>(self.e_va.val()) + bit_cast::<65, 64>(self.e_length.val());
        self.page_size.next = self.one64.val() << self.e_ps.val().get_bits::<5>(0);
        self.s2_len0.d.next = self.r_len.q.val() == 0;
        self.s2_wrap.d.next = self.end65.val().get_bit(64);
        self.s2_re_carry.d.next = self.re65.val().get_bit(64);
        self.s2_end.d.next = self.end65.val().get_bits::<64>(0);
        self.s2_region_end.d.next = self.re65.val().get_bits::<64>(0);
        self.s2_va.d.next = self.e_va.val();
        self.s2_first_page.d.next = self.e_va.val() & !(self.page_size.val() - 1);
        self.s2_ps.d.next = self.e_ps.val().get_bits::<5>(0);
        self.s2_pbl_base.d.next = self.tpt.read_data.val().get_bits::<32>(192);
        self.s2_npages.d.next = self.tpt.read_data.val().get_bits::<32>(224);
        self.v2.d.next = self.v1.q.val();

        // ---- stage 2: wrap and bounds (order of TptEntry::check); pages
        self.fault2.next = self.s2_pre.q.val();
        if (self.s2_pre.q.val() == self.f_ok.val()) & !self.s2_len0.q.val() {
            if self.s2_wrap.q.val() {
                self.fault2.next = self.f_offset_wrap.val();
            } else if self.s2_re_carry.q.val()
                | (self.r_to.q.val() < self.s2_va.q.val())
                | (self.s2_end.q.val() > self.s2_region_end.q.val())
            {
                self.fault2.next = self.f_bounds.val();
            }
        }
        self.rel.next = self.r_to.q.val() - self.s2_first_page.q.val();
        self.last_rel.next = self.s2_end.q.val() - 1 - self.s2_first_page.q.val();
        self.s3_fault.d.next = self.fault2.val();
        self.s3_page.d.next = self.rel.val() >> self.s2_ps.q.val();
        self.s3_last_page.d.next = self.last_rel.val() >> self.s2_ps.q.val();
        self.pmask.next = (self.one64.val() << self.s2_ps.q.val()) - self.one64.val();
        self.off64.next = self.rel.val() & self.pmask.val();
        self.s3_off.d.next = self.off64.val().get_bits::<32>(0);
        self.s3_ps.d.next = self.s2_ps.q.val();
        self.s3_pbl_base.d.next = self.s2_pbl_base.q.val();
        self.s3_npages.d.next = self.s2_npages.q.val();
        self.v3.d.next = self.v2.q.val();

        // ---- stage 3: the pages must be in the region's page list and in
        // the page-list table (TptEntry::page_of); page-list read.
        self.fault3.next = self.s3_fault.q.val();
        self.last_lo.next = self.s3_last_page.q.val().get_bits::<32>(0);
        self.last_sum.next =
            bit_cast::<34, 32>(self.s3_pbl_base.q.val()) + bit_cast::<34, 32>(self.last_lo.val());
        if (self.s3_fault.q.val() == self.f_ok.val())
            & !self.s2_len0.q.val()
            & ((self.s3_last_page.q.val() >= bit_cast::<64, 32>(self.s3_npages.q.val()))
                | (self.last_sum.val() >= self.pbl_size.val()))
        {
            self.fault3.next = self.f_bounds.val();
        }
        self.pbl_idx_full.next = self.s3_pbl_base.q.val() + self.s3_page.q.val().get_bits::<32>(0);
        self.pbl.read_address.next = self.walk_idx.val();
        if self.v3.q.val() {
            self.pbl.read_address.next = self.pbl_idx_full.val().get_bits::<PN>(0);
        }
        self.walk_addr.next = self.pbl.read_data.val();
        self.s4_fault.d.next = self.fault3.val();
        self.s4_off.d.next = self.s3_off.q.val();
        self.s4_page_left.d.next = (self.one32.val() << self.s3_ps.q.val()) - self.s3_off.q.val();
        self.s4_pbl_idx.d.next = self.pbl_idx_full.val().get_bits::<PN>(0);
        self.s4_ps.d.next = self.s3_ps.q.val();
        self.v4.d.next = self.v3.q.val();

        // ---- stage 4: bus address; result held until taken
        if self.v4.q.val() {
            self.o_fault.d.next = self.s4_fault.q.val();
            self.o_addr.d.next = self.pbl.read_data.val() + bit_cast::<64, 32>(self.s4_off.q.val());
            self.o_page_left.d.next = self.s4_page_left.q.val();
            self.o_pbl_idx.d.next = self.s4_pbl_idx.q.val();
            self.o_ps.d.next = self.s4_ps.q.val();
        }
        self.res_fault.next = self.o_fault.q.val();
        self.res_addr.next = self.o_addr.q.val();
        self.res_page_left.next = self.o_page_left.q.val();
        self.res_pbl_idx.next = self.o_pbl_idx.q.val();
        self.res_page_shift.next = self.o_ps.q.val();
        // busy & no stage in flight = result waiting
        self.res_valid.next = self.busy.q.val()
            & !self.v1.q.val()
            & !self.v2.q.val()
            & !self.v3.q.val()
            & !self.v4.q.val()
            & !self.inv_pend.q.val();
        if self.res_valid.val() & self.res_ready.val() {
            self.busy.d.next = false;
        }

        if self.reset.val() {
            self.busy.d.next = false;
            self.v1.d.next = false;
            self.v2.d.next = false;
            self.v3.d.next = false;
            self.v4.d.next = false;
            self.inv_pend.d.next = false;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use rnic_wire::abi::tpt::{
        Stag, TptEntry, TptFault, TptState, ACCESS_ALL, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ,
        ACCESS_REMOTE_WRITE, TPT_ENTRY_SIZE,
    };

    pub(crate) type TptDefault = Tpt<TPT_INDEX_BITS, PBL_INDEX_BITS>;

    /// The 256-bit table word of an entry: `TptEntry::emit`'s octets.
    pub(crate) fn entry_bits(e: &TptEntry) -> Bits<256> {
        let mut b = [0u8; TPT_ENTRY_SIZE];
        e.emit(&mut b).unwrap();
        let mut x: Bits<256> = 0.into();
        for i in 0..4 {
            let w = u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap());
            x.set_bits::<64>(64 * i, w.into());
        }
        x
    }

    pub(crate) fn fault_code(f: Result<(), TptFault>) -> u64 {
        match f {
            Ok(()) => fault::OK,
            Err(TptFault::InvalidStag) => fault::INVALID_STAG,
            Err(TptFault::WrongPd) => fault::WRONG_PD,
            Err(TptFault::AccessRights) => fault::ACCESS_RIGHTS,
            Err(TptFault::Bounds) => fault::BOUNDS,
            Err(TptFault::OffsetWrap) => fault::OFFSET_WRAP,
        }
    }

    /// A random entry: mostly valid, with a page list inside the table that
    /// covers the region (sometimes one page short).
    pub(crate) fn random_entry(rng: &mut Rng, pbl_next: &mut u32) -> TptEntry {
        let state = match rng.below(10) {
            0 => TptState::Free,
            1 => TptState::Invalid,
            _ => TptState::Valid,
        };
        let page_shift = [12u8, 12, 13, 16, 21][rng.below(5)];
        let va = match rng.below(8) {
            0 => u64::MAX - rng.below(20000) as u64, // region end wraps
            1 => rng.below(1 << 20) as u64,
            _ => rng.next_u64() >> rng.below(40),
        };
        let length = match rng.below(8) {
            0 => 0,
            _ => 1 + rng.below(20000) as u64,
        };
        let first = va & !((1u64 << page_shift) - 1);
        let need_pages = if length == 0 {
            0
        } else {
            (va.wrapping_add(length - 1).wrapping_sub(first) >> page_shift) + 1
        };
        let mut npages = need_pages.min(8) as u32;
        if rng.below(10) == 0 && npages > 0 {
            npages -= 1; // page list one short: translation fault
        }
        if *pbl_next + npages > (1 << PBL_INDEX_BITS) {
            *pbl_next = 0;
        }
        let pbl_base = *pbl_next;
        *pbl_next += npages;
        TptEntry {
            state,
            key: rng.next_u64() as u8,
            access: rng.below(ACCESS_ALL as usize + 1) as u8,
            page_shift,
            pd: rng.below(3) as u32,
            va,
            length,
            pbl_base,
            npages,
        }
    }

    /// The reference answer: `TptEntry::check`, then `TptEntry::page_of` for
    /// the first and last octet (a page outside the list is BOUNDS).
    /// Returns (fault, bus address, octets left in the page, pbl index).
    pub(crate) fn reference(
        table: &[TptEntry],
        pbl: &[u64],
        stag: u32,
        pd: u32,
        need: u8,
        to: u64,
        len: u32,
    ) -> (u64, u64, u64, u32) {
        let s = Stag(stag);
        let Some(e) = table.get(s.index() as usize) else {
            return (fault::INVALID_STAG, 0, 0, 0);
        };
        let f = fault_code(e.check(s, pd, need, to, len as u64));
        if f != fault::OK || len == 0 {
            return (f, 0, 0, 0);
        }
        let first = e.page_of(to);
        let last = e.page_of(to + len as u64 - 1);
        match (first, last) {
            (Some((idx, off)), Some((lidx, _))) if (lidx as usize) < pbl.len() => (
                fault::OK,
                pbl[idx as usize].wrapping_add(off),
                (1u64 << e.page_shift) - off,
                idx,
            ),
            _ => (fault::BOUNDS, 0, 0, 0),
        }
    }

    /// One write per clock for both tables: (TPT write, page-list write).
    pub(crate) type TableWrite = (Option<(u32, Bits<256>)>, Option<(u32, u64)>);

    pub(crate) fn table_writes(table: &[TptEntry], pbl: &[u64]) -> Vec<TableWrite> {
        (0..table.len().max(pbl.len()))
            .map(|i| {
                (
                    table.get(i).map(|e| (i as u32, entry_bits(e))),
                    pbl.get(i).map(|&a| (i as u32, a)),
                )
            })
            .collect()
    }

    fn set_tables(uut: &mut TptDefault, t: Option<(u32, Bits<256>)>, p: Option<(u32, u64)>) {
        uut.tpt_wr_en.next = t.is_some();
        if let Some((i, d)) = t {
            uut.tpt_wr_index.next = (i as u64).into();
            uut.tpt_wr_data.next = d;
        }
        uut.pbl_wr_en.next = p.is_some();
        if let Some((i, a)) = p {
            uut.pbl_wr_index.next = (i as u64).into();
            uut.pbl_wr_data.next = a.into();
        }
    }

    /// Random entries and queries against `TptEntry::check`/`page_of`.
    #[test]
    fn check_matches_reference() {
        let mut uut = new_uut();
        let mut rng = Rng::new(21);
        let mut pbl_next = 0;
        let n = 1 << TPT_INDEX_BITS;
        let table: Vec<TptEntry> = (0..n)
            .map(|_| random_entry(&mut rng, &mut pbl_next))
            .collect();
        let pbl: Vec<u64> = (0..1 << PBL_INDEX_BITS)
            .map(|_| rng.next_u64() & !0xfff)
            .collect();
        for (t, p) in table_writes(&table, &pbl) {
            set_tables(&mut uut, t, p);
            tick!(uut);
        }
        // A write beyond the table is ignored (it would alias entry 0).
        set_tables(&mut uut, Some((n as u32, entry_bits(&table[1]))), None);
        tick!(uut);
        set_tables(&mut uut, None, None);

        let mut seen = [0usize; 6];
        let mut latency_seen = None;
        for q in 0..600 {
            let idx = if rng.below(20) == 0 {
                n as u32 + rng.below(1000) as u32
            } else {
                rng.below(n) as u32
            };
            let e = table.get(idx as usize).copied().unwrap_or(table[0]);
            let key = if rng.below(10) == 0 {
                rng.next_u64() as u8
            } else {
                e.key
            };
            let stag = Stag::new(idx, key).unwrap().0;
            let pd = if rng.below(10) == 0 { 7 } else { e.pd };
            let need = [ACCESS_REMOTE_WRITE, ACCESS_REMOTE_READ, ACCESS_LOCAL_WRITE][rng.below(3)];
            let len = match rng.below(10) {
                0 => 0,
                1 => u32::MAX - rng.below(100) as u32,
                _ => rng.below(3000) as u32,
            };
            let to = match rng.below(10) {
                0 | 1 => u64::MAX - rng.below(2000) as u64,
                2 => rng.next_u64(),
                _ => {
                    e.va.wrapping_add(rng.below(e.length as usize + 200) as u64)
                        .wrapping_sub(100)
                }
            };
            let want = reference(&table, &pbl, stag, pd, need, to, len);
            seen[want.0 as usize] += 1;
            uut.chk_valid.next = true;
            uut.chk_stag.next = (stag as u64).into();
            uut.chk_pd.next = (pd as u64).into();
            uut.chk_need.next = (need as u64).into();
            uut.chk_to.next = to.into();
            uut.chk_len.next = (len as u64).into();
            uut.res_ready.next = false;
            assert!(uut.chk_ready.val());
            tick!(uut);
            uut.chk_valid.next = false;
            let mut cycles = 1;
            while !uut.res_valid.val() {
                assert!(!uut.chk_ready.val());
                tick!(uut);
                cycles += 1;
                assert!(cycles < 20, "no result");
            }
            match latency_seen {
                None => latency_seen = Some(cycles),
                Some(l) => assert_eq!(l, cycles),
            }
            // Held while not taken.
            if rng.below(2) == 0 {
                tick!(uut);
                assert!(uut.res_valid.val());
            }
            let got = uut.res_fault.val().to_u64();
            assert_eq!(
                got, want.0,
                "query {q}: stag {stag:#x} to {to:#x} len {len} entry {e:?}"
            );
            if got == fault::OK && len > 0 {
                assert_eq!(uut.res_addr.val().to_u64(), want.1, "query {q}");
                assert_eq!(uut.res_page_left.val().to_u64(), want.2, "query {q}");
                assert_eq!(uut.res_pbl_idx.val().to_u64(), want.3 as u64, "query {q}");
                assert_eq!(uut.res_page_shift.val().to_u64(), e.page_shift as u64);
            }
            uut.res_ready.next = true;
            tick!(uut);
            uut.res_ready.next = false;
            assert!(!uut.res_valid.val());
        }
        // Edges counted from the request's edge `t` inclusive: the result
        // shows after edge `t + 4`, the fifth.
        assert_eq!(latency_seen, Some(5));
        assert!(seen.iter().all(|&c| c > 10), "fault mix {seen:?}");

        // Page walk: any index, one clock after it is presented.
        for _ in 0..50 {
            let i = rng.below(pbl.len());
            uut.walk_idx.next = (i as u64).into();
            tick!(uut);
            assert_eq!(uut.walk_addr.val().to_u64(), pbl[i]);
        }
    }
    fn new_uut() -> TptDefault {
        let mut uut = TptDefault::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.tpt_wr_en.connect();
        uut.tpt_wr_index.connect();
        uut.tpt_wr_data.connect();
        uut.pbl_wr_en.connect();
        uut.pbl_wr_index.connect();
        uut.pbl_wr_data.connect();
        uut.chk_valid.connect();
        uut.chk_stag.connect();
        uut.chk_pd.connect();
        uut.chk_need.connect();
        uut.chk_to.connect();
        uut.chk_len.connect();
        uut.chk_inv.connect();
        uut.res_ready.connect();
        uut.walk_idx.connect();
        uut.connect_all();
        uut.reset.next = true;
        tick!(uut);
        tick!(uut);
        uut.reset.next = false;
        uut
    }

    /// One request (`inv`: an invalidation with need 0, len 0; else a
    /// zero-length check with need 0), firmware TPT writes from `writes`
    /// (clock 0 = the clock the request is taken) applied to `model` the way
    /// the hardware orders them: the request reads the table as it was
    /// before clock 0's write, an invalidation takes effect there, writes
    /// from clock 0 on come after it. Returns the fault and clocks taken.
    fn request(
        uut: &mut TptDefault,
        model: &mut [TptEntry],
        stag: u32,
        pd: u32,
        inv: bool,
        writes: &mut dyn FnMut(usize) -> Option<(u32, TptEntry)>,
    ) -> (u64, usize) {
        let want = reference(model, &[], stag, pd, 0, 0, 0).0;
        if inv && want == fault::OK {
            model[Stag(stag).index() as usize].state = TptState::Invalid;
        }
        uut.chk_valid.next = true;
        uut.chk_stag.next = (stag as u64).into();
        uut.chk_pd.next = (pd as u64).into();
        uut.chk_need.next = 0.into();
        uut.chk_to.next = 0.into();
        uut.chk_len.next = 0.into();
        uut.chk_inv.next = inv;
        uut.res_ready.next = false;
        assert!(uut.chk_ready.val());
        let mut clk = 0;
        loop {
            let w = writes(clk);
            set_tables(uut, w.map(|(i, e)| (i, entry_bits(&e))), None);
            if let Some((i, e)) = w {
                if let Some(m) = model.get_mut(i as usize) {
                    *m = e;
                }
            }
            tick!(*uut);
            uut.chk_valid.next = false;
            uut.chk_inv.next = false;
            clk += 1;
            if uut.res_valid.val() {
                break;
            }
            assert!(clk < 40, "no result");
        }
        set_tables(uut, None, None);
        let got = uut.res_fault.val().to_u64();
        assert_eq!(got, want, "stag {stag:#x} pd {pd} inv {inv}");
        uut.res_ready.next = true;
        tick!(*uut);
        uut.res_ready.next = false;
        (got, clk)
    }

    /// Every entry answers a zero-length check as the model says.
    fn check_all_entries(uut: &mut TptDefault, model: &mut [TptEntry]) {
        for i in 0..model.len() {
            let e = model[i];
            let stag = Stag::new(i as u32, e.key).unwrap().0;
            request(uut, model, stag, e.pd, false, &mut |_| None);
        }
    }

    /// Send with Invalidate (RFC 5040 §5.3 / §6.10): an invalidation of a
    /// valid entry of the PD marks exactly that entry `Invalid`; bad index,
    /// bad key, wrong PD, already invalid → its fault and nothing changed;
    /// firmware writes in the same clocks (same entry, other entries) are
    /// neither lost nor undone. Checked against `TptEntry::check` on a model
    /// table built from `rnic_wire::abi::tpt`.
    #[test]
    fn invalidate_marks_exactly_that_entry() {
        let mut uut = new_uut();
        let mut rng = Rng::new(77);
        let n = 1 << TPT_INDEX_BITS;
        let mut pbl_next = 0;
        let mut model: Vec<TptEntry> = (0..n)
            .map(|_| random_entry(&mut rng, &mut pbl_next))
            .collect();
        for (t, p) in table_writes(&model, &[]) {
            set_tables(&mut uut, t, p);
            tick!(uut);
        }
        set_tables(&mut uut, None, None);

        // Deterministic cases on valid entries of known shape.
        let good = |key: u8, pd: u32| TptEntry {
            state: TptState::Valid,
            key,
            access: ACCESS_REMOTE_WRITE,
            page_shift: 12,
            pd,
            va: 0x1000,
            length: 0x1000,
            pbl_base: 0,
            npages: 1,
        };
        for i in 0..8u32 {
            model[i as usize] = good(0x40 + i as u8, 5);
            set_tables(&mut uut, Some((i, entry_bits(&model[i as usize]))), None);
            tick!(uut);
        }
        set_tables(&mut uut, None, None);
        let st = |i: u32| Stag::new(i, 0x40 + i as u8).unwrap().0;
        // good → OK, one clock longer than a check (the write-back).
        let (f, clocks_inv) = request(&mut uut, &mut model, st(0), 5, true, &mut |_| None);
        assert_eq!(f, fault::OK);
        assert_eq!(model[0].state, TptState::Invalid);
        let (_, clocks_chk) = request(&mut uut, &mut model, st(1), 5, false, &mut |_| None);
        assert_eq!(
            clocks_inv, clocks_chk,
            "no clock added when the port is free"
        );
        // entry 0 now refused (invalid STag), a second invalidation too.
        assert_eq!(
            request(&mut uut, &mut model, st(0), 5, false, &mut |_| None).0,
            fault::INVALID_STAG
        );
        assert_eq!(
            request(&mut uut, &mut model, st(0), 5, true, &mut |_| None).0,
            fault::INVALID_STAG
        );
        // bad key, wrong PD, index beyond the table: refused, entry kept.
        let bad_key = Stag::new(1, 0x99).unwrap().0;
        assert_eq!(
            request(&mut uut, &mut model, bad_key, 5, true, &mut |_| None).0,
            fault::INVALID_STAG
        );
        assert_eq!(
            request(&mut uut, &mut model, st(1), 6, true, &mut |_| None).0,
            fault::WRONG_PD
        );
        let oob = Stag::new(n as u32 + 1, 0x41).unwrap().0;
        assert_eq!(
            request(&mut uut, &mut model, oob, 5, true, &mut |_| None).0,
            fault::INVALID_STAG
        );
        assert_eq!(model[1].state, TptState::Valid);
        // A firmware write to the same entry in the clock the invalidation
        // is taken: the invalidation reads the old entry (OK), the new entry
        // stays (written after it).
        let fresh = good(0x77, 5);
        let (f, _) = request(&mut uut, &mut model, st(2), 5, true, &mut |c| {
            (c == 0).then_some((2, fresh))
        });
        assert_eq!(f, fault::OK);
        assert_eq!(model[2], fresh);
        // ... one clock later (during the read) and two (in the write-back
        // clock): the same, and no clock added (nothing to write back).
        for (c_w, e) in [(1, 3), (2, 6)] {
            let (f, clocks) = request(&mut uut, &mut model, st(e), 5, true, &mut |c| {
                (c == c_w).then_some((e, fresh))
            });
            assert_eq!(f, fault::OK);
            assert_eq!(model[e as usize], fresh, "write at clock {c_w}");
            assert_eq!(clocks, clocks_inv, "write at clock {c_w}");
        }
        // A firmware write to another entry in the write-back clock: the
        // invalidation waits one clock; both land.
        let other = good(0x55, 9);
        let (f, clocks) = request(&mut uut, &mut model, st(4), 5, true, &mut |c| {
            (c == 2).then_some((100, other))
        });
        assert_eq!(f, fault::OK);
        assert_eq!(clocks, clocks_inv);
        // Firmware writes to other entries in every clock for a while: the
        // invalidation waits until the port is free.
        let (f, clocks) = request(&mut uut, &mut model, st(5), 5, true, &mut |c| {
            (c < 8).then_some((101 + c as u32, other))
        });
        assert_eq!(f, fault::OK);
        assert!(clocks > clocks_inv, "waited for the write port");
        check_all_entries(&mut uut, &mut model);

        // Random: invalidations and checks, firmware writes at random clocks
        // (a third of them to the requested entry).
        let mut kinds = [0usize; 3];
        for _ in 0..300 {
            let idx = if rng.below(30) == 0 {
                n as u32 + rng.below(100) as u32
            } else {
                rng.below(n) as u32
            };
            let e = model.get(idx as usize).copied().unwrap_or(model[0]);
            let key = if rng.below(8) == 0 {
                rng.next_u64() as u8
            } else {
                e.key
            };
            let pd = if rng.below(8) == 0 { 7 } else { e.pd };
            let stag = Stag::new(idx, key).unwrap().0;
            let inv = rng.below(3) != 0;
            let wclk = rng.below(6);
            let wr = if rng.below(2) == 0 {
                let target = if rng.below(3) == 0 {
                    idx.min(n as u32 - 1)
                } else {
                    rng.below(n) as u32
                };
                Some((target, random_entry(&mut rng, &mut pbl_next)))
            } else {
                None
            };
            let (f, _) = request(&mut uut, &mut model, stag, pd, inv, &mut |c| {
                wr.filter(|_| c == wclk)
            });
            if inv {
                kinds[(f != fault::OK) as usize + (wr.is_some() as usize)] += 1;
            }
        }
        assert!(kinds.iter().all(|&k| k > 10), "mix {kinds:?}");
        check_all_entries(&mut uut, &mut model);
        let invalid = model
            .iter()
            .filter(|e| e.state == TptState::Invalid)
            .count();
        assert!(invalid > 30, "{invalid} entries invalid at the end");
    }
}
