//! `host_regs`: BAR0, the host's register block (`rnic_wire::abi::csr`).
//!
//! Access (docs/rtl.md "Core interfaces", Host MMIO): `csr_valid` with
//! `csr_write`, `csr_addr` (octet offset, 24 bits) and `csr_wdata`; a read
//! answers `csr_rdata` with `csr_rvalid` exactly **one clock** after the
//! request clock. One access per clock may be issued (reads pipeline).
//!
//! | offset | register | access |
//! |---|---|---|
//! | 0x000..0x01C | `ID`, `ABI_VERSION`, `CAPS`, `MAX_QP`, `MAX_CQ`, `MAX_TPT`, `MAX_PBL`, `MAX_QUEUE_ENTRIES` | RO, from the block's parameters |
//! | 0x020 | `CTRL`: bit 0 `CTRL_ENABLE` (RW, 0 at power-on): the datapath takes doorbells and received frames (`dev_reset`); bit 1 `CTRL_RESET`: writing 1 starts a device reset (a one-clock `cfg_soft_reset` pulse; ignored while one runs) and returns this block's registers but the interface configuration to their power-on values (below); reads 1 from that write until the reset is done (`rst_busy`), then 0 | RW |
//! | 0x024 | `STATUS`: bit 0 `STATUS_READY` (= `fw_ready` in), bit 1 `STATUS_LINK_UP` (= `link_up` in) | RO |
//! | 0x028..0x03C | `MAC_LO`, `MAC_HI` (bits 15:0), `IPV4_ADDR`, `IPV4_NETMASK`, `IPV4_GATEWAY`, `MTU` | RW, mirrored on `cfg_*` |
//! | 0x040 | `INT_STATUS` (`INT_EVENT`, `INT_MBOX_DONE`, `INT_EQ_OVERFLOW`): write 1 to clear; a set in the same clock wins | RW1C |
//! | 0x044 | `INT_MASK`; `irq` = any bit of `INT_STATUS & INT_MASK` | RW |
//! | 0x048/0x04C | `CYCLES_LO` (reading it latches the high half) / `CYCLES_HI` | RO |
//! | 0x060/0x064 | `EQ_BASE_LO` / `EQ_BASE_HI`: the 64-bit base is taken on the `_HI` write | RW |
//! | 0x068/0x06C | `EQ_ENTRIES`, `EQ_CONSUMER` | RW |
//! | 0x100 | `MBOX_CTRL`: a write (when not busy) starts command `wdata[15:0]`; reads `MBOX_BUSY` \| opcode | RW |
//! | 0x104 | `MBOX_STATUS`: status of the last finished command | RO |
//! | 0x108 | `MBOX_LEN`: parameter length in (host write, ignored while busy), result length out | RW |
//! | 0x10C | `MBOX_SEQ`: +1 per finished command | RO |
//! | 0x400..0x7FF | `MBOX_DATA` (1 KiB RAM, shared with the firmware port); host writes while busy are ignored | RW |
//! | 0x1_0000.. | QP doorbell pages: a write → one-clock strobe `db_qp_*` {page number, offset in page, value} | WO |
//! | 0x80_0000.. | CQ doorbell pages: a write → `db_cq_*` | WO |
//!
//! Everything else (and every doorbell page) reads 0 and ignores writes.
//!
//! **Doorbells** leave on `db_qp_*`/`db_cq_*` only while `db_open`
//! (`dev_reset`: `CTRL_ENABLE` set and no reset running); the others are
//! dropped.
//!
//! **`CTRL_RESET`** sets every register but the interface configuration to
//! its power-on value in the clock after the write: `CTRL_ENABLE` 0 (also
//! when the same write sets bit 0), `INT_STATUS` and `INT_MASK` 0,
//! the event queue registers 0 (the queue is off), the mailbox idle with
//! `MBOX_STATUS`, `MBOX_LEN` and `MBOX_SEQ` 0 (a command in progress is
//! dropped). The cycle counter keeps counting. MAC, IPv4 address, netmask,
//! gateway and MTU keep their values: they are the port's identity, set by
//! whoever brings the port up (the board's bridge host before any driver,
//! or a driver's `Context::configure`), as a NIC's MAC address survives a
//! function reset; a driver that opens the device resets it and finds the
//! port still answering at its address. The power-on reset clears them.
//! The mailbox data RAM keeps its octets (nothing reads them before a host
//! writes a command).
//!
//! Firmware side of the mailbox (`mb_*`, used by `fw_port`): `mb_busy`,
//! `mb_opcode`, `mb_len` describe the waiting command; `mb_fw_addr` (word
//! index) reads the data RAM (`mb_fw_rdata` one clock later) and, with
//! `mb_fw_write`, writes it (only while busy: results); `mb_done` with
//! `mb_done_status`/`mb_done_len` finishes the command (ignored when not
//! busy): `MBOX_STATUS`, `MBOX_LEN` set, `MBOX_SEQ` + 1, busy cleared,
//! `INT_MBOX_DONE` raised. The data RAM is kept twice (one copy per reader,
//! both written together) so that the host and the firmware read in the
//! same clock without arbitration. The rule "host writes data only when
//! idle, firmware only when busy" means the two never write in one clock.

use rust_hdl::prelude::*;

/// Device parameters shown in the read-only identification block.
#[derive(Clone, Copy, Debug)]
pub struct HostRegsParams {
    pub caps: u32,
    pub max_qp: u32,
    pub max_cq: u32,
    pub max_tpt: u32,
    pub max_pbl: u32,
    pub max_queue_entries: u32,
}

/// The host registers of the sim profile's core.
pub type HostRegs = HostRegsN<{ crate::profile::PR_SIM }>;

/// `HostRegsN<PR>`: `MAX_QP`, `MAX_TPT` and `MAX_PBL` report profile
/// `PR`'s tables ([`params_for`]).
#[derive(LogicBlock)]
pub struct HostRegsN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub csr_valid: Signal<In, Bit>,
    pub csr_write: Signal<In, Bit>,
    pub csr_addr: Signal<In, Bits<24>>,
    pub csr_wdata: Signal<In, Bits<32>>,
    pub csr_rdata: Signal<Out, Bits<32>>,
    pub csr_rvalid: Signal<Out, Bit>,
    pub irq: Signal<Out, Bit>,
    pub link_up: Signal<In, Bit>,
    pub fw_ready: Signal<In, Bit>,
    /// A device reset is running (`dev_reset`): `CTRL_RESET` reads 1.
    pub rst_busy: Signal<In, Bit>,
    /// Doorbell writes go out (`dev_reset`); dropped otherwise.
    pub db_open: Signal<In, Bit>,
    pub cfg_enable: Signal<Out, Bit>,
    pub cfg_soft_reset: Signal<Out, Bit>,
    pub cfg_mac: Signal<Out, Bits<48>>,
    pub cfg_ipv4: Signal<Out, Bits<32>>,
    pub cfg_netmask: Signal<Out, Bits<32>>,
    pub cfg_gateway: Signal<Out, Bits<32>>,
    pub cfg_mtu: Signal<Out, Bits<32>>,
    pub cycles: Signal<Out, Bits<64>>,
    pub eq_base: Signal<Out, Bits<64>>,
    pub eq_entries: Signal<Out, Bits<32>>,
    pub eq_consumer: Signal<Out, Bits<32>>,
    /// One-clock strobes that set `INT_EVENT` / `INT_EQ_OVERFLOW`.
    pub int_event: Signal<In, Bit>,
    pub int_eq_overflow: Signal<In, Bit>,
    pub mb_busy: Signal<Out, Bit>,
    pub mb_opcode: Signal<Out, Bits<16>>,
    pub mb_len: Signal<Out, Bits<16>>,
    pub mb_done: Signal<In, Bit>,
    pub mb_done_status: Signal<In, Bits<32>>,
    pub mb_done_len: Signal<In, Bits<16>>,
    pub mb_fw_addr: Signal<In, Bits<8>>,
    pub mb_fw_write: Signal<In, Bit>,
    pub mb_fw_wdata: Signal<In, Bits<32>>,
    pub mb_fw_rdata: Signal<Out, Bits<32>>,
    pub db_qp_valid: Signal<Out, Bit>,
    pub db_qp_num: Signal<Out, Bits<10>>,
    pub db_qp_off: Signal<Out, Bits<12>>,
    pub db_qp_value: Signal<Out, Bits<32>>,
    pub db_cq_valid: Signal<Out, Bit>,
    pub db_cq_num: Signal<Out, Bits<10>>,
    pub db_cq_off: Signal<Out, Bits<12>>,
    pub db_cq_value: Signal<Out, Bits<32>>,
    k_caps: Constant<Bits<32>>,
    k_max_qp: Constant<Bits<32>>,
    k_max_cq: Constant<Bits<32>>,
    k_max_tpt: Constant<Bits<32>>,
    k_max_pbl: Constant<Bits<32>>,
    k_max_queue: Constant<Bits<32>>,
    ctrl_en: DFF<Bit>,
    soft_rst: DFF<Bit>,
    mac: DFF<Bits<48>>,
    ip: DFF<Bits<32>>,
    mask: DFF<Bits<32>>,
    gw: DFF<Bits<32>>,
    mtu: DFF<Bits<32>>,
    int_st: DFF<Bits<3>>,
    int_en: DFF<Bits<3>>,
    cyc: DFF<Bits<64>>,
    cyc_lo: DFF<Bits<32>>,
    cyc_hi: DFF<Bits<32>>,
    eq_lo: DFF<Bits<32>>,
    eq_b: DFF<Bits<64>>,
    eq_n: DFF<Bits<32>>,
    eq_c: DFF<Bits<32>>,
    mbusy: DFF<Bit>,
    mop: DFF<Bits<16>>,
    mlen: DFF<Bits<16>>,
    mstatus: DFF<Bits<32>>,
    mseq: DFF<Bits<32>>,
    rd_pend: DFF<Bit>,
    rd_addr: DFF<Bits<24>>,
    dq_v: DFF<Bit>,
    dq_n: DFF<Bits<10>>,
    dq_o: DFF<Bits<12>>,
    dq_d: DFF<Bits<32>>,
    dc_v: DFF<Bit>,
    dc_n: DFF<Bits<10>>,
    dc_o: DFF<Bits<12>>,
    dc_d: DFF<Bits<32>>,
    /// Mailbox data, the host's copy (read by the host).
    mram_h: RAM<Bits<32>, 8>,
    /// Mailbox data, the firmware's copy (read by the firmware).
    mram_f: RAM<Bits<32>, 8>,
    wr: Signal<Local, Bit>,
    rd: Signal<Local, Bit>,
    int_set: Signal<Local, Bits<3>>,
    h_mwr: Signal<Local, Bit>,
    f_mwr: Signal<Local, Bit>,
}

impl<const PR: usize> HostRegsN<PR> {
    pub fn new(p: HostRegsParams) -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            csr_valid: Default::default(),
            csr_write: Default::default(),
            csr_addr: Default::default(),
            csr_wdata: Default::default(),
            csr_rdata: Default::default(),
            csr_rvalid: Default::default(),
            irq: Default::default(),
            link_up: Default::default(),
            fw_ready: Default::default(),
            rst_busy: Default::default(),
            db_open: Default::default(),
            cfg_enable: Default::default(),
            cfg_soft_reset: Default::default(),
            cfg_mac: Default::default(),
            cfg_ipv4: Default::default(),
            cfg_netmask: Default::default(),
            cfg_gateway: Default::default(),
            cfg_mtu: Default::default(),
            cycles: Default::default(),
            eq_base: Default::default(),
            eq_entries: Default::default(),
            eq_consumer: Default::default(),
            int_event: Default::default(),
            int_eq_overflow: Default::default(),
            mb_busy: Default::default(),
            mb_opcode: Default::default(),
            mb_len: Default::default(),
            mb_done: Default::default(),
            mb_done_status: Default::default(),
            mb_done_len: Default::default(),
            mb_fw_addr: Default::default(),
            mb_fw_write: Default::default(),
            mb_fw_wdata: Default::default(),
            mb_fw_rdata: Default::default(),
            db_qp_valid: Default::default(),
            db_qp_num: Default::default(),
            db_qp_off: Default::default(),
            db_qp_value: Default::default(),
            db_cq_valid: Default::default(),
            db_cq_num: Default::default(),
            db_cq_off: Default::default(),
            db_cq_value: Default::default(),
            k_caps: Constant::new((p.caps as u64).into()),
            k_max_qp: Constant::new((p.max_qp as u64).into()),
            k_max_cq: Constant::new((p.max_cq as u64).into()),
            k_max_tpt: Constant::new((p.max_tpt as u64).into()),
            k_max_pbl: Constant::new((p.max_pbl as u64).into()),
            k_max_queue: Constant::new((p.max_queue_entries as u64).into()),
            ctrl_en: Default::default(),
            soft_rst: Default::default(),
            mac: Default::default(),
            ip: Default::default(),
            mask: Default::default(),
            gw: Default::default(),
            mtu: Default::default(),
            int_st: Default::default(),
            int_en: Default::default(),
            cyc: Default::default(),
            cyc_lo: Default::default(),
            cyc_hi: Default::default(),
            eq_lo: Default::default(),
            eq_b: Default::default(),
            eq_n: Default::default(),
            eq_c: Default::default(),
            mbusy: Default::default(),
            mop: Default::default(),
            mlen: Default::default(),
            mstatus: Default::default(),
            mseq: Default::default(),
            rd_pend: Default::default(),
            rd_addr: Default::default(),
            dq_v: Default::default(),
            dq_n: Default::default(),
            dq_o: Default::default(),
            dq_d: Default::default(),
            dc_v: Default::default(),
            dc_n: Default::default(),
            dc_o: Default::default(),
            dc_d: Default::default(),
            mram_h: Default::default(),
            mram_f: Default::default(),
            wr: Default::default(),
            rd: Default::default(),
            int_set: Default::default(),
            h_mwr: Default::default(),
            f_mwr: Default::default(),
        }
    }
}

/// The core's parameters (`rnic_core`): 64 QPs and CQs (the doorbell and
/// shadow tables), the TPT and page list of `tpt`, CRC and markers in the
/// fast path, MPA revision 1 and RFC 6581 enhanced setup in the firmware,
/// inline send WQEs of up to 96 octets (`transmit::inline_rd`).
pub const CORE_PARAMS: HostRegsParams = HostRegsParams {
    caps: rnic_wire::abi::csr::CAP_MARKERS
        | rnic_wire::abi::csr::CAP_CRC
        | rnic_wire::abi::csr::CAP_MPA_REV1
        | rnic_wire::abi::csr::CAP_ENHANCED
        | ((rnic_wire::abi::wqe::MAX_SGE_PER_WQE as u32) << rnic_wire::abi::csr::CAP_MAX_SGE_SHIFT)
        | (1 << rnic_wire::abi::csr::CAP_MAX_READ_SGE_SHIFT)
        | ((rnic_wire::abi::wqe::MAX_INLINE_DATA as u32)
            << rnic_wire::abi::csr::CAP_MAX_INLINE_SHIFT),
    max_qp: 64,
    // The completion writer's CQ context RAM (cpl_write::CQ_BITS), not more.
    max_cq: 1 << crate::completion::cpl_write::CQ_BITS,
    max_tpt: 1 << crate::protection::tpt::TPT_INDEX_BITS,
    max_pbl: 1 << crate::protection::tpt::PBL_INDEX_BITS,
    max_queue_entries: 4096,
};

/// The parameters of profile `pr`'s core: [`CORE_PARAMS`] with the
/// profile's QP, TPT and page-list sizes (what its tables hold: the board
/// core has 16 QPs, 256 TPT entries and 512 page-list entries).
pub fn params_for(pr: usize) -> HostRegsParams {
    let p = &crate::profile::PROFILES[pr];
    HostRegsParams {
        max_qp: p.fw.n_qp,
        max_tpt: 1 << p.tpt_log2,
        max_pbl: 1 << p.pbl_log2,
        caps: CORE_PARAMS.caps
            | if p.tx_wqe_push {
                rnic_wire::abi::csr::CAP_WQE_PUSH
            } else {
                0
            },
        ..CORE_PARAMS
    }
}

impl<const PR: usize> Default for HostRegsN<PR> {
    fn default() -> Self {
        Self::new(params_for(PR))
    }
}

impl<const PR: usize> Logic for HostRegsN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, ctrl_en, soft_rst, mac, ip, mask, gw, mtu, int_st, int_en, cyc, cyc_lo,
            cyc_hi, eq_lo, eq_b, eq_n, eq_c, mbusy, mop, mlen, mstatus, mseq, rd_pend, rd_addr,
            dq_v, dq_n, dq_o, dq_d, dc_v, dc_n, dc_o, dc_d
        );
        self.mram_h.read_clock.next = self.clock.val();
        self.mram_h.write_clock.next = self.clock.val();
        self.mram_f.read_clock.next = self.clock.val();
        self.mram_f.write_clock.next = self.clock.val();

        self.wr.next = self.csr_valid.val() & self.csr_write.val();
        self.rd.next = self.csr_valid.val() & !self.csr_write.val();
        self.cyc.d.next = self.cyc.q.val() + 1;
        self.soft_rst.d.next = false;
        self.dq_v.d.next = false;
        self.dc_v.d.next = false;

        // ---- interrupt sources (INT_EVENT bit 0, INT_MBOX_DONE bit 1,
        // INT_EQ_OVERFLOW bit 2)
        self.int_set.next = 0.into();
        if self.int_event.val() {
            self.int_set.next = self.int_set.val() | 1;
        }
        if self.mb_done.val() & self.mbusy.q.val() {
            self.int_set.next = self.int_set.val() | 2;
        }
        if self.int_eq_overflow.val() {
            self.int_set.next = self.int_set.val() | 4;
        }
        self.int_st.d.next = self.int_st.q.val() | self.int_set.val();

        // ---- mailbox data RAM: host writes while idle, firmware while busy
        self.h_mwr.next = self.wr.val()
            & (self.csr_addr.val().get_bits::<14>(10) == 1) // MBOX_DATA 0x400..0x7FF
            & !self.mbusy.q.val();
        self.f_mwr.next = self.mb_fw_write.val() & self.mbusy.q.val();
        self.mram_h.write_enable.next = self.h_mwr.val() | self.f_mwr.val();
        self.mram_f.write_enable.next = self.h_mwr.val() | self.f_mwr.val();
        self.mram_h.write_address.next = self.mb_fw_addr.val();
        self.mram_h.write_data.next = self.mb_fw_wdata.val();
        if self.h_mwr.val() {
            self.mram_h.write_address.next = self.csr_addr.val().get_bits::<8>(2);
            self.mram_h.write_data.next = self.csr_wdata.val();
        }
        self.mram_f.write_address.next = self.mram_h.write_address.val();
        self.mram_f.write_data.next = self.mram_h.write_data.val();
        self.mram_h.read_address.next = self.csr_addr.val().get_bits::<8>(2);
        self.mram_f.read_address.next = self.mb_fw_addr.val();
        self.mb_fw_rdata.next = self.mram_f.read_data.val();

        // firmware finishes the command
        if self.mb_done.val() & self.mbusy.q.val() {
            self.mbusy.d.next = false;
            self.mstatus.d.next = self.mb_done_status.val();
            self.mlen.d.next = self.mb_done_len.val();
            self.mseq.d.next = self.mseq.q.val() + 1;
        }

        // ---- register writes
        if self.wr.val() {
            if self.csr_addr.val() == 0x20 {
                // CTRL: bit 0 CTRL_ENABLE, bit 1 CTRL_RESET (self-clearing)
                self.ctrl_en.d.next = self.csr_wdata.val().get_bit(0);
                self.soft_rst.d.next = self.csr_wdata.val().get_bit(1);
            }
            if self.csr_addr.val() == 0x28 {
                // MAC_LO: octets 0..4
                self.mac.d.next = (self.mac.q.val() & 0xFFFF_0000_0000_u64)
                    | bit_cast::<48, 32>(self.csr_wdata.val());
            }
            if self.csr_addr.val() == 0x2C {
                // MAC_HI: octets 4..6 in bits 15:0
                self.mac.d.next = (self.mac.q.val() & 0xFFFF_FFFF_u64)
                    | (bit_cast::<48, 16>(self.csr_wdata.val().get_bits::<16>(0)) << 32);
            }
            if self.csr_addr.val() == 0x30 {
                self.ip.d.next = self.csr_wdata.val();
            }
            if self.csr_addr.val() == 0x34 {
                self.mask.d.next = self.csr_wdata.val();
            }
            if self.csr_addr.val() == 0x38 {
                self.gw.d.next = self.csr_wdata.val();
            }
            if self.csr_addr.val() == 0x3C {
                self.mtu.d.next = self.csr_wdata.val();
            }
            if self.csr_addr.val() == 0x40 {
                // INT_STATUS: write 1 to clear; a set in this clock wins
                self.int_st.d.next = (self.int_st.q.val() & !self.csr_wdata.val().get_bits::<3>(0))
                    | self.int_set.val();
            }
            if self.csr_addr.val() == 0x44 {
                self.int_en.d.next = self.csr_wdata.val().get_bits::<3>(0);
            }
            if self.csr_addr.val() == 0x60 {
                self.eq_lo.d.next = self.csr_wdata.val();
            }
            if self.csr_addr.val() == 0x64 {
                // the pair is taken on the _HI write
                self.eq_b.d.next = (bit_cast::<64, 32>(self.csr_wdata.val()) << 32)
                    | bit_cast::<64, 32>(self.eq_lo.q.val());
            }
            if self.csr_addr.val() == 0x68 {
                self.eq_n.d.next = self.csr_wdata.val();
            }
            if self.csr_addr.val() == 0x6C {
                self.eq_c.d.next = self.csr_wdata.val();
            }
            if (self.csr_addr.val() == 0x100) & !self.mbusy.q.val() {
                // MBOX_CTRL: start a command
                self.mbusy.d.next = true;
                self.mop.d.next = self.csr_wdata.val().get_bits::<16>(0);
            }
            if (self.csr_addr.val() == 0x108) & !self.mbusy.q.val() {
                self.mlen.d.next = self.csr_wdata.val().get_bits::<16>(0);
            }
            // QP doorbell pages 0x01_0000 .. 0x41_0000 (1024 pages of 4 KiB)
            if (self.csr_addr.val() >= 0x01_0000)
                & (self.csr_addr.val() < 0x41_0000)
                & self.db_open.val()
            {
                self.dq_v.d.next = true;
                // page number: (addr >> 12) - 16, modulo 1024 (exact in the area)
                self.dq_n.d.next = self.csr_addr.val().get_bits::<10>(12) - 16;
                self.dq_o.d.next = self.csr_addr.val().get_bits::<12>(0);
                self.dq_d.d.next = self.csr_wdata.val();
            }
            // CQ doorbell pages 0x80_0000 .. 0xC0_0000
            if (self.csr_addr.val() >= 0x80_0000)
                & (self.csr_addr.val() < 0xC0_0000)
                & self.db_open.val()
            {
                self.dc_v.d.next = true;
                self.dc_n.d.next = self.csr_addr.val().get_bits::<10>(12);
                self.dc_o.d.next = self.csr_addr.val().get_bits::<12>(0);
                self.dc_d.d.next = self.csr_wdata.val();
            }
        }

        // ---- reads: the address is registered, the answer muxed one clock later
        self.rd_pend.d.next = self.rd.val();
        if self.rd.val() {
            self.rd_addr.d.next = self.csr_addr.val();
            if self.csr_addr.val() == 0x48 {
                // reading CYCLES_LO latches CYCLES_HI
                self.cyc_lo.d.next = self.cyc.q.val().get_bits::<32>(0);
                self.cyc_hi.d.next = self.cyc.q.val().get_bits::<32>(32);
            }
        }
        self.csr_rvalid.next = self.rd_pend.q.val();
        self.csr_rdata.next = 0.into();
        if self.rd_pend.q.val() {
            // Registers 0x000..0x1FC (word-aligned only): one case on the word
            // index, a multiplexer indexed by the address instead of a chain
            // of full-address compares (issue 7: logic on the board).
            if (self.rd_addr.q.val().get_bits::<15>(9) == 0)
                & (self.rd_addr.q.val().get_bits::<2>(0) == 0)
            {
                match self.rd_addr.q.val().get_bits::<7>(2).index() {
                    0 => {
                        // 0x000 ID "RNIC"
                        self.csr_rdata.next = 0x524E_4943.into(); // ID_VALUE "RNIC"
                    }
                    1 => {
                        // 0x004 ABI_VERSION
                        self.csr_rdata.next = 0x0002_0000.into(); // abi::ABI_VERSION 2.0
                    }
                    2 => {
                        // 0x008 CAPS
                        self.csr_rdata.next = self.k_caps.val();
                    }
                    3 => {
                        // 0x00C MAX_QP
                        self.csr_rdata.next = self.k_max_qp.val();
                    }
                    4 => {
                        // 0x010 MAX_CQ
                        self.csr_rdata.next = self.k_max_cq.val();
                    }
                    5 => {
                        // 0x014 MAX_TPT
                        self.csr_rdata.next = self.k_max_tpt.val();
                    }
                    6 => {
                        // 0x018 MAX_PBL
                        self.csr_rdata.next = self.k_max_pbl.val();
                    }
                    7 => {
                        // 0x01C MAX_QUEUE_ENTRIES
                        self.csr_rdata.next = self.k_max_queue.val();
                    }
                    8 => {
                        // 0x020 CTRL: CTRL_RESET reads 1 while a reset runs
                        self.csr_rdata.next = bit_cast::<32, 1>(self.ctrl_en.q.val().into())
                            | (bit_cast::<32, 1>(
                                (self.rst_busy.val() | self.soft_rst.q.val()).into(),
                            ) << 1);
                    }
                    9 => {
                        // 0x024 STATUS
                        self.csr_rdata.next = bit_cast::<32, 1>(self.fw_ready.val().into())
                            | (bit_cast::<32, 1>(self.link_up.val().into()) << 1);
                    }
                    10 => {
                        // 0x028 MAC_LO
                        self.csr_rdata.next = self.mac.q.val().get_bits::<32>(0);
                    }
                    11 => {
                        // 0x02C MAC_HI
                        self.csr_rdata.next =
                            bit_cast::<32, 16>(self.mac.q.val().get_bits::<16>(32));
                    }
                    12 => {
                        // 0x030 IPV4_ADDR
                        self.csr_rdata.next = self.ip.q.val();
                    }
                    13 => {
                        // 0x034 IPV4_NETMASK
                        self.csr_rdata.next = self.mask.q.val();
                    }
                    14 => {
                        // 0x038 IPV4_GATEWAY
                        self.csr_rdata.next = self.gw.q.val();
                    }
                    15 => {
                        // 0x03C MTU
                        self.csr_rdata.next = self.mtu.q.val();
                    }
                    16 => {
                        // 0x040 INT_STATUS
                        self.csr_rdata.next = bit_cast::<32, 3>(self.int_st.q.val());
                    }
                    17 => {
                        // 0x044 INT_MASK
                        self.csr_rdata.next = bit_cast::<32, 3>(self.int_en.q.val());
                    }
                    18 => {
                        // 0x048 CYCLES_LO: the counter as it was in the request clock
                        self.csr_rdata.next = self.cyc_lo.q.val();
                    }
                    19 => {
                        // 0x04C CYCLES_HI
                        self.csr_rdata.next = self.cyc_hi.q.val();
                    }
                    24 => {
                        // 0x060 EQ_BASE_LO
                        self.csr_rdata.next = self.eq_b.q.val().get_bits::<32>(0);
                    }
                    25 => {
                        // 0x064 EQ_BASE_HI
                        self.csr_rdata.next = self.eq_b.q.val().get_bits::<32>(32);
                    }
                    26 => {
                        // 0x068 EQ_ENTRIES
                        self.csr_rdata.next = self.eq_n.q.val();
                    }
                    27 => {
                        // 0x06C EQ_CONSUMER
                        self.csr_rdata.next = self.eq_c.q.val();
                    }
                    64 => {
                        // 0x100 MBOX_CTRL: MBOX_BUSY (bit 31) | opcode
                        self.csr_rdata.next = (bit_cast::<32, 1>(self.mbusy.q.val().into()) << 31)
                            | bit_cast::<32, 16>(self.mop.q.val());
                    }
                    65 => {
                        // 0x104 MBOX_STATUS
                        self.csr_rdata.next = self.mstatus.q.val();
                    }
                    66 => {
                        // 0x108 MBOX_LEN
                        self.csr_rdata.next = bit_cast::<32, 16>(self.mlen.q.val());
                    }
                    67 => {
                        // 0x10C MBOX_SEQ
                        self.csr_rdata.next = self.mseq.q.val();
                    }
                    _ => {}
                }
            }
            if self.rd_addr.q.val().get_bits::<14>(10) == 1 {
                // MBOX_DATA
                self.csr_rdata.next = self.mram_h.read_data.val();
            }
        }

        // ---- CTRL_RESET: this block's registers back to power-on values
        // (but the interface configuration, the port's identity: see the
        // module doc)
        if self.wr.val() & (self.csr_addr.val() == 0x20) & self.csr_wdata.val().get_bit(1) {
            self.ctrl_en.d.next = false;
            self.int_st.d.next = 0.into();
            self.int_en.d.next = 0.into();
            self.eq_lo.d.next = 0.into();
            self.eq_b.d.next = 0.into();
            self.eq_n.d.next = 0.into();
            self.eq_c.d.next = 0.into();
            self.mbusy.d.next = false;
            self.mop.d.next = 0.into();
            self.mlen.d.next = 0.into();
            self.mstatus.d.next = 0.into();
            self.mseq.d.next = 0.into();
            // a reset already running is not restarted
            self.soft_rst.d.next = !self.rst_busy.val();
        }

        // ---- outputs
        self.irq.next = (self.int_st.q.val() & self.int_en.q.val()).any();
        self.cfg_enable.next = self.ctrl_en.q.val();
        self.cfg_soft_reset.next = self.soft_rst.q.val();
        self.cfg_mac.next = self.mac.q.val();
        self.cfg_ipv4.next = self.ip.q.val();
        self.cfg_netmask.next = self.mask.q.val();
        self.cfg_gateway.next = self.gw.q.val();
        self.cfg_mtu.next = self.mtu.q.val();
        self.cycles.next = self.cyc.q.val();
        self.eq_base.next = self.eq_b.q.val();
        self.eq_entries.next = self.eq_n.q.val();
        self.eq_consumer.next = self.eq_c.q.val();
        self.mb_busy.next = self.mbusy.q.val();
        self.mb_opcode.next = self.mop.q.val();
        self.mb_len.next = self.mlen.q.val();
        self.db_qp_valid.next = self.dq_v.q.val();
        self.db_qp_num.next = self.dq_n.q.val();
        self.db_qp_off.next = self.dq_o.q.val();
        self.db_qp_value.next = self.dq_d.q.val();
        self.db_cq_valid.next = self.dc_v.q.val();
        self.db_cq_num.next = self.dc_n.q.val();
        self.db_cq_off.next = self.dc_o.q.val();
        self.db_cq_value.next = self.dc_d.q.val();

        if self.reset.val() {
            self.ctrl_en.d.next = false;
            self.soft_rst.d.next = false;
            self.mac.d.next = 0.into();
            self.ip.d.next = 0.into();
            self.mask.d.next = 0.into();
            self.gw.d.next = 0.into();
            self.mtu.d.next = 1500.into();
            self.int_st.d.next = 0.into();
            self.int_en.d.next = 0.into();
            self.cyc.d.next = 0.into();
            self.eq_b.d.next = 0.into();
            self.eq_n.d.next = 0.into();
            self.eq_c.d.next = 0.into();
            self.mbusy.d.next = false;
            self.mop.d.next = 0.into();
            self.mlen.d.next = 0.into();
            self.mstatus.d.next = 0.into();
            self.mseq.d.next = 0.into();
            self.rd_pend.d.next = false;
            self.dq_v.d.next = false;
            self.dc_v.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::tick;
    use rnic_wire::abi::csr;

    fn params() -> HostRegsParams {
        HostRegsParams {
            caps: csr::CAP_CRC | csr::CAP_MARKERS | (4 << csr::CAP_MAX_SGE_SHIFT),
            max_qp: 64,
            max_cq: 64,
            max_tpt: 256,
            max_pbl: 4096,
            max_queue_entries: 4096,
        }
    }

    struct Tb(HostRegs);

    impl Tb {
        fn new() -> Self {
            let mut u = HostRegs::new(params());
            u.clock.connect();
            u.reset.connect();
            u.csr_valid.connect();
            u.csr_write.connect();
            u.csr_addr.connect();
            u.csr_wdata.connect();
            u.link_up.connect();
            u.fw_ready.connect();
            u.rst_busy.connect();
            u.db_open.connect();
            u.int_event.connect();
            u.int_eq_overflow.connect();
            u.mb_done.connect();
            u.mb_done_status.connect();
            u.mb_done_len.connect();
            u.mb_fw_addr.connect();
            u.mb_fw_write.connect();
            u.mb_fw_wdata.connect();
            u.connect_all();
            u.reset.next = true;
            tick!(u);
            tick!(u);
            u.reset.next = false;
            u.db_open.next = true;
            Tb(u)
        }
        fn write(&mut self, addr: u32, v: u32) {
            let u = &mut self.0;
            u.csr_valid.next = true;
            u.csr_write.next = true;
            u.csr_addr.next = (addr as u64).into();
            u.csr_wdata.next = (v as u64).into();
            tick!(*u);
            u.csr_valid.next = false;
            u.csr_write.next = false;
        }
        fn read(&mut self, addr: u32) -> u32 {
            let u = &mut self.0;
            u.csr_valid.next = true;
            u.csr_write.next = false;
            u.csr_addr.next = (addr as u64).into();
            tick!(*u);
            u.csr_valid.next = false;
            assert!(u.csr_rvalid.val(), "rvalid one clock after the request");
            let v = u.csr_rdata.val().to_u64() as u32;
            tick!(*u);
            assert!(!u.csr_rvalid.val());
            v
        }
    }

    /// Each profile's core reports the tables it has: the board core's 16
    /// QPs, 256 TPT entries and 512 page-list entries (the driver sizes its
    /// QP numbers and registrations from these), the sim core's 64, 2^TPT
    /// and 2^PBL index bits.
    #[test]
    fn sizes_follow_the_profile() {
        use crate::profile::{PR_BOARD, PR_SIM};
        let b = params_for(PR_BOARD);
        assert_eq!((b.max_qp, b.max_tpt, b.max_pbl), (16, 256, 512));
        let s = params_for(PR_SIM);
        assert_eq!(
            (s.max_qp, s.max_tpt, s.max_pbl),
            (
                64,
                1 << crate::protection::tpt::TPT_INDEX_BITS,
                1 << crate::protection::tpt::PBL_INDEX_BITS
            )
        );
        assert_eq!(
            (s.caps, s.max_cq),
            (CORE_PARAMS.caps | csr::CAP_WQE_PUSH, CORE_PARAMS.max_cq)
        );
        // the push buffer is the sim profile's alone
        assert_eq!(b.caps, CORE_PARAMS.caps);
        // the block built for the board reads them back
        let u = HostRegsN::<PR_BOARD>::default();
        assert_eq!(u.k_max_qp.val().to_u64(), 16);
        assert_eq!(u.k_max_pbl.val().to_u64(), 512);
    }

    /// Identification, configuration, interrupts, cycle counter, EQ and
    /// unknown offsets, against the `rnic_wire::abi::csr` map.
    #[test]
    fn registers() {
        let mut t = Tb::new();
        let p = params();
        assert_eq!(t.read(csr::ID), csr::ID_VALUE);
        assert_eq!(t.read(csr::ABI_VERSION), rnic_wire::abi::ABI_VERSION);
        assert_eq!(t.read(csr::CAPS), p.caps);
        assert_eq!(t.read(csr::MAX_QP), p.max_qp);
        assert_eq!(t.read(csr::MAX_CQ), p.max_cq);
        assert_eq!(t.read(csr::MAX_TPT), p.max_tpt);
        assert_eq!(t.read(csr::MAX_PBL), p.max_pbl);
        assert_eq!(t.read(csr::MAX_QUEUE_ENTRIES), p.max_queue_entries);
        // read-only: writes ignored
        t.write(csr::ID, 0);
        t.write(csr::MAX_QP, 7);
        assert_eq!(t.read(csr::ID), csr::ID_VALUE);
        assert_eq!(t.read(csr::MAX_QP), p.max_qp);
        // configuration
        let cfg = [
            (csr::MAC_LO, 0x0403_0201, 0x0403_0201),
            (csr::MAC_HI, 0xAAAA_0605, 0x0605),
            (csr::IPV4_ADDR, 0x0A00_0001, 0x0A00_0001),
            (csr::IPV4_NETMASK, 0xFFFF_FF00, 0xFFFF_FF00),
            (csr::IPV4_GATEWAY, 0x0A00_00FE, 0x0A00_00FE),
            (csr::MTU, 9000, 9000),
        ];
        for (a, v, _) in cfg {
            t.write(a, v);
        }
        for (a, _, want) in cfg {
            assert_eq!(t.read(a), want, "register {a:#x}");
        }
        assert_eq!(t.0.cfg_mac.val().to_u64(), 0x0605_0403_0201);
        assert_eq!(t.0.cfg_ipv4.val().to_u64(), 0x0A00_0001);
        assert_eq!(t.0.cfg_mtu.val().to_u64(), 9000);
        // CTRL / STATUS
        assert_eq!(t.read(csr::CTRL), 0);
        t.write(csr::CTRL, csr::CTRL_ENABLE);
        assert!(!t.0.cfg_soft_reset.val());
        assert_eq!(t.read(csr::CTRL), csr::CTRL_ENABLE);
        assert!(t.0.cfg_enable.val());
        assert_eq!(t.read(csr::STATUS), 0);
        t.0.fw_ready.next = true;
        t.0.link_up.next = true;
        assert_eq!(t.read(csr::STATUS), csr::STATUS_READY | csr::STATUS_LINK_UP);
        // interrupts: set by strobes, masked into irq, write 1 to clear
        t.0.int_event.next = true;
        tick!(t.0);
        t.0.int_event.next = false;
        t.0.int_eq_overflow.next = true;
        tick!(t.0);
        t.0.int_eq_overflow.next = false;
        assert_eq!(
            t.read(csr::INT_STATUS),
            csr::INT_EVENT | csr::INT_EQ_OVERFLOW
        );
        assert!(!t.0.irq.val());
        t.write(csr::INT_MASK, csr::INT_EQ_OVERFLOW);
        assert!(t.0.irq.val());
        t.write(csr::INT_STATUS, csr::INT_EQ_OVERFLOW);
        assert!(!t.0.irq.val());
        assert_eq!(t.read(csr::INT_STATUS), csr::INT_EVENT);
        assert_eq!(t.read(csr::INT_MASK), csr::INT_EQ_OVERFLOW);
        // cycle counter counts clocks
        let c0 = t.read(csr::CYCLES_LO);
        let c1 = t.read(csr::CYCLES_LO);
        assert_eq!(c1 - c0, 2, "one read = 2 clocks");
        assert_eq!(t.read(csr::CYCLES_HI), 0);
        // EQ base: taken on the _HI write
        t.write(csr::EQ_BASE_LO, 0x1234_5640);
        assert_eq!(t.read(csr::EQ_BASE_LO), 0);
        t.write(csr::EQ_BASE_HI, 0x9);
        assert_eq!(t.read(csr::EQ_BASE_LO), 0x1234_5640);
        assert_eq!(t.read(csr::EQ_BASE_HI), 0x9);
        assert_eq!(t.0.eq_base.val().to_u64(), 0x9_1234_5640);
        t.write(csr::EQ_ENTRIES, 256);
        t.write(csr::EQ_CONSUMER, 17);
        assert_eq!(t.read(csr::EQ_ENTRIES), 256);
        assert_eq!(t.read(csr::EQ_CONSUMER), 17);
        // unknown offsets read 0, writes go nowhere
        for a in [
            0x50,
            0x70,
            0xFC,
            0x110,
            0x3FC,
            0x800,
            0xFFFC,
            0x7F_FFFC,
            0xFF_FFFC,
            // unaligned offsets of registers that hold non-zero values
            csr::ID + 1,
            csr::MTU + 2,
            csr::MBOX_SEQ + 3,
        ] {
            t.write(a, 0xFFFF_FFFF);
            assert_eq!(t.read(a), 0, "offset {a:#x}");
        }
        assert_eq!(t.read(csr::MTU), 9000);
        assert_eq!(t.read(csr::INT_MASK), csr::INT_EQ_OVERFLOW);
    }

    /// `CTRL_RESET`: one `cfg_soft_reset` pulse, `CTRL_RESET` reads 1 while
    /// the sequencer is busy (and in the clock of the pulse), every register
    /// but the interface configuration back to its power-on value
    /// (`CTRL_ENABLE` too, although written with it), the interface
    /// configuration kept, a command in progress dropped; doorbells go out
    /// only while `db_open`.
    #[test]
    fn ctrl_reset_and_doorbell_gate() {
        let mut t = Tb::new();
        t.write(csr::CTRL, csr::CTRL_ENABLE);
        t.write(csr::MAC_LO, 0x0403_0201);
        t.write(csr::IPV4_ADDR, 0x0A00_0001);
        t.write(csr::MTU, 9000);
        t.write(csr::INT_MASK, 7);
        t.write(csr::EQ_BASE_LO, 0x1000);
        t.write(csr::EQ_BASE_HI, 1);
        t.write(csr::EQ_ENTRIES, 64);
        t.write(csr::EQ_CONSUMER, 5);
        t.write(csr::MBOX_CTRL, 0x12);
        t.0.int_event.next = true;
        tick!(t.0);
        t.0.int_event.next = false;
        assert!(t.0.irq.val() && t.0.mb_busy.val());
        let c0 = t.read(csr::CYCLES_LO);
        // the reset
        t.write(csr::CTRL, csr::CTRL_ENABLE | csr::CTRL_RESET);
        assert!(t.0.cfg_soft_reset.val());
        assert!(!t.0.cfg_enable.val() && !t.0.irq.val() && !t.0.mb_busy.val());
        t.0.rst_busy.next = true;
        tick!(t.0);
        assert!(!t.0.cfg_soft_reset.val(), "one pulse");
        assert_eq!(t.read(csr::CTRL), csr::CTRL_RESET);
        // a second CTRL_RESET while busy starts nothing
        t.write(csr::CTRL, csr::CTRL_RESET);
        assert!(!t.0.cfg_soft_reset.val());
        t.0.rst_busy.next = false;
        assert_eq!(t.read(csr::CTRL), 0);
        for (a, v) in [
            (csr::MAC_LO, 0x0403_0201),
            (csr::IPV4_ADDR, 0x0A00_0001),
            (csr::MTU, 9000),
            (csr::INT_STATUS, 0),
            (csr::INT_MASK, 0),
            (csr::EQ_BASE_LO, 0),
            (csr::EQ_BASE_HI, 0),
            (csr::EQ_ENTRIES, 0),
            (csr::EQ_CONSUMER, 0),
            (csr::MBOX_CTRL, 0),
            (csr::MBOX_SEQ, 0),
        ] {
            assert_eq!(t.read(a), v, "register {a:#x} after CTRL_RESET");
        }
        assert!(
            t.read(csr::CYCLES_LO) > c0,
            "the cycle counter keeps counting"
        );
        // doorbells: out while db_open, dropped otherwise
        let qp = csr::qp_doorbell_page(3);
        let cq = csr::cq_doorbell_page(2);
        t.write(qp, 9);
        assert!(t.0.db_qp_valid.val());
        t.write(cq, 4);
        assert!(t.0.db_cq_valid.val());
        t.0.db_open.next = false;
        t.write(qp, 10);
        assert!(!t.0.db_qp_valid.val());
        t.write(cq, 5);
        assert!(!t.0.db_cq_valid.val());
    }

    /// A mailbox round trip: the host's parameters reach the firmware side,
    /// the firmware's result and status reach the host.
    #[test]
    fn mailbox() {
        let mut t = Tb::new();
        for i in 0..8u32 {
            t.write(csr::MBOX_DATA + 4 * i, 0x1000 + i);
        }
        t.write(csr::MBOX_LEN, 32);
        assert!(!t.0.mb_busy.val());
        t.write(csr::MBOX_CTRL, 0x12);
        assert!(t.0.mb_busy.val());
        assert_eq!(t.0.mb_opcode.val().to_u64(), 0x12);
        assert_eq!(t.0.mb_len.val().to_u64(), 32);
        assert_eq!(t.read(csr::MBOX_CTRL), csr::MBOX_BUSY | 0x12);
        // while busy the host cannot change data, length or start another
        t.write(csr::MBOX_DATA, 0xDEAD);
        t.write(csr::MBOX_LEN, 99);
        t.write(csr::MBOX_CTRL, 0x5);
        assert_eq!(t.0.mb_opcode.val().to_u64(), 0x12);
        // firmware reads the parameters
        for i in 0..8u64 {
            t.0.mb_fw_addr.next = i.into();
            tick!(t.0);
            assert_eq!(t.0.mb_fw_rdata.val().to_u64(), 0x1000 + i);
        }
        // and writes a result
        for i in 0..3u64 {
            t.0.mb_fw_addr.next = i.into();
            t.0.mb_fw_wdata.next = (0xA0 + i).into();
            t.0.mb_fw_write.next = true;
            tick!(t.0);
        }
        t.0.mb_fw_write.next = false;
        t.write(csr::INT_MASK, csr::INT_MBOX_DONE);
        assert!(!t.0.irq.val());
        t.0.mb_done.next = true;
        t.0.mb_done_status.next = 3.into();
        t.0.mb_done_len.next = 12.into();
        tick!(t.0);
        t.0.mb_done.next = false;
        assert!(t.0.irq.val());
        assert_eq!(t.read(csr::MBOX_CTRL) & csr::MBOX_BUSY, 0);
        assert_eq!(t.read(csr::MBOX_STATUS), 3);
        assert_eq!(t.read(csr::MBOX_LEN), 12);
        assert_eq!(t.read(csr::MBOX_SEQ), 1);
        assert_eq!(t.read(csr::INT_STATUS), csr::INT_MBOX_DONE);
        for i in 0..3u32 {
            assert_eq!(t.read(csr::MBOX_DATA + 4 * i), 0xA0 + i);
        }
        assert_eq!(t.read(csr::MBOX_DATA + 12), 0x1003);
        // a firmware write or done while idle does nothing
        t.0.mb_fw_addr.next = 0.into();
        t.0.mb_fw_wdata.next = 0x77.into();
        t.0.mb_fw_write.next = true;
        t.0.mb_done.next = true;
        tick!(t.0);
        t.0.mb_fw_write.next = false;
        t.0.mb_done.next = false;
        assert_eq!(t.read(csr::MBOX_DATA), 0xA0);
        assert_eq!(t.read(csr::MBOX_SEQ), 1);
    }

    /// Doorbell writes become strobes with the page number, the offset in
    /// the page and the value; doorbell pages read 0.
    #[test]
    fn doorbells() {
        use rnic_wire::abi::doorbell::{CQ_ARM, QP_RQ_PRODUCER};
        let mut t = Tb::new();
        let cases = [
            (csr::qp_doorbell_page(0), true, 0u64, 0u64),
            (csr::qp_doorbell_page(5) + QP_RQ_PRODUCER, true, 5, 4),
            (csr::qp_doorbell_page(1023) + 0xFFC, true, 1023, 0xFFC),
            (csr::cq_doorbell_page(0), false, 0, 0),
            (csr::cq_doorbell_page(77) + CQ_ARM, false, 77, 4),
            (csr::cq_doorbell_page(1023), false, 1023, 0),
        ];
        for (i, &(a, qp, n, off)) in cases.iter().enumerate() {
            let v = 0x5000 + i as u32;
            t.write(a, v);
            let u = &t.0;
            assert_eq!(u.db_qp_valid.val(), qp, "case {i}");
            assert_eq!(u.db_cq_valid.val(), !qp, "case {i}");
            if qp {
                assert_eq!(u.db_qp_num.val().to_u64(), n);
                assert_eq!(u.db_qp_off.val().to_u64(), off);
                assert_eq!(u.db_qp_value.val().to_u64(), v as u64);
            } else {
                assert_eq!(u.db_cq_num.val().to_u64(), n);
                assert_eq!(u.db_cq_off.val().to_u64(), off);
                assert_eq!(u.db_cq_value.val().to_u64(), v as u64);
            }
            tick!(t.0);
            assert!(!t.0.db_qp_valid.val() && !t.0.db_cq_valid.val());
            assert_eq!(t.read(a), 0);
        }
        // between the QP and CQ areas, and reads: no strobe
        for a in [csr::qp_doorbell_page(1024), csr::CQ_DOORBELL_BASE - 4] {
            t.write(a, 1);
            assert!(!t.0.db_qp_valid.val() && !t.0.db_cq_valid.val());
        }
        t.read(csr::qp_doorbell_page(3));
        assert!(!t.0.db_qp_valid.val());
    }
}
