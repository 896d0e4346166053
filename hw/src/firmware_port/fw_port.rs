//! `fw_port`: the firmware's device port (`rnic_wire::abi::context::port`).
//!
//! Access: the shape of the host's BAR0 port with the `fw_` prefix
//! (`fw_valid`, `fw_write`, `fw_addr[24]`, `fw_wdata[32]` in; `fw_rdata[32]`
//! and `fw_rvalid` exactly **one clock** after a read request). Offsets at or
//! above `port::SIZE` and the ones not listed read 0 and ignore writes.
//!
//! | offset | register | what the block does |
//! |---|---|---|
//! | 0x000 `TABLE_SEL` | RW | `table id << 24 \| index` |
//! | 0x004 `TABLE_CMD` | W: 1 `TABLE_READ`, 2 `TABLE_WRITE`; R: bit 0 busy, bit 1 error of the last command | a write: 3 clocks, one `tw_*` strobe {table, index, 64 octets} in the second; a read: 3 clocks, the entry lands in `TABLE_DATA` (the shadow is read and written in 256-bit halves). Error (nothing done): unknown table, index at or above the table's size, or a read of a table without read-back (TPT, page list). Commands while busy are ignored. |
//! | 0x008 `EXC_STATUS` | R | `valid << 31 \| reason << 16 \| len` of the exception queue head |
//! | 0x00C `EXC_CONN` | R | head's connection (0xFFFF_FFFF none) |
//! | 0x010 `EXC_POP` | W 1 | `exc_pop` (same clock) |
//! | 0x014 `TX_SEND` | W: length 1..=2048 sends `TX_DATA[..len]` on `raw_tx_*`; R: bit 31 busy | other lengths, or a send while busy, are ignored |
//! | 0x018 `RX_INJECT` | W: length 1..=2048 puts `TX_DATA[..len]` on `inj_*`, the receive pipeline's second input (in front of the parser, as if it had arrived, verdict "checksums good"); R: bit 31 busy | shares `TX_DATA` and the busy bit with `TX_SEND`: other lengths, or a write while busy, are ignored |
//! | 0x020/0x024 `CYCLES_LO/HI` | R | the cycle counter; reading `_LO` latches `_HI` |
//! | 0x028 `CLOCK_KHZ` | R | parameter |
//! | 0x0B0/0x0B4/0x0B8/0x0BC/0x02C `LIM_CONN`/`LIM_QP`/`LIM_CQ`/`LIM_TPT`/`LIM_PBL` | R | parameters: the table sizes (entries) of the core profile |
//! | 0x048 `LIM_MTU` | R | parameter: the largest MTU the profile's frame buffers take |
//! | 0x030 `MBOX_CMD` | R | `waiting << 31 \| opcode`; the first read raises `fw_ready` (BAR0 `STATUS_READY`) |
//! | 0x034 `MBOX_LEN` | R: parameter length; W: result length | |
//! | 0x038 `MBOX_DONE` | W: status | finishes the command (`mb_done`) |
//! | 0x03C `EVENT_PUSH` | W 1: push `EVENT_DATA` (ignored while full); R: bit 0 full | `ev_valid`/`ev_data` until `ev_ready` |
//! | 0x040 `FLUSH_QP` | W: QP number | one-clock `flush_valid`/`flush_qpn` |
//! | 0x050..0x064 `CFG_*` | R | BAR0's MAC low/high, IPv4, netmask, gateway, MTU |
//! | 0x070 `TERM_STATUS` | R | `valid << 31 \| cause` of the Terminate request shown on `term_*` (`TerminateCause::to_bits`) |
//! | 0x074/0x078/0x07C `TERM_CONN`/`TERM_QPN`/`TERM_SEG_LEN` | R | its connection, QP, echoed DDP segment length (0: nothing echoed) |
//! | 0x080 `TERM_POP` | W 1 | `term_pop` (same clock): the next request shows |
//! | 0x084..0x090 | — | reserved (an incoming-Terminate latch once; the exception queue's `TerminateRx` carries every incoming Terminate, losslessly) |
//! | 0x094 `RETX_CONN` | W: connection index | one-clock `retx_valid`/`retx_conn` (the TX log's replay request, `tx_log`); indices >= 256 are ignored |
//! | 0x098 `RETX_STATUS` | R | `retx_status`: bit 0 busy, bits 31:16 log entries in use |
//! | 0x09C..0x0AC `RETX_COUNT`, `RETX_FULL`, `RETX_EMPTY`, `RETX_BUSY`, `RETX_LOST` | R | `retx_count`, `retx_full`, `retx_empty`, `retx_busy`, `retx_lost`: FPDUs re-sent, clocks the log was full, replays that found nothing, requests ignored while busy, descriptors not logged |
//! | 0x0C0..0x0EF `TERM_HDR` | R | the echo: the erroneous segment's first 48 octets (DDP header, then a Read Request's RDMAP header), octet i in byte i % 4 of word i / 4 |
//! | 0x100..0x13F `TABLE_DATA` | RW | the staging entry (writes ignored while busy) |
//! | 0x140..0x17F `EVENT_DATA` | W | the event staging entry (writes ignored while full); reads 0 |
//! | 0x400..0x7FF `MBOX_DATA` | RW | the mailbox data RAM in `host_regs` (writes only while a command waits) |
//! | 0x800..0xFFF `EXC_DATA` | R | the exception queue head's frame |
//! | 0x1000..0x17FF `TX_DATA` | W | the raw TX frame buffer (writes ignored while sending); reads 0 |
//!
//! **Device reset** (`dev_reset`, BAR0 `CTRL_RESET`): `note_set` raises
//! the reset notice. From then on every firmware write does nothing (the
//! firmware's actions from before the reset cannot reach the device), a
//! `MBOX_CMD` read shows no command and does not raise `fw_ready`, and,
//! once the sequence is over (`seq_busy` low), `EXC_STATUS` shows an entry
//! `valid | DeviceReset (11) << 16 | 0` with `EXC_CONN` 0xFFFF_FFFF; its
//! `EXC_POP` clears the notice (the exception queue itself was emptied by
//! the reset). `srst` (the sequencer's datapath reset) clears the table
//! command, event, flush, raw TX and `fw_ready` state but not the notice
//! nor a read in flight. `clr_go` starts the table walk: a zero entry
//! written through the table-write path (`tw_*` and the shadow) into every
//! connection, QP (with `conn` = `NO_CONN`), CQ (the completion writer's
//! 16 at most) and TPT entry of the profile, 3 clocks each, each started
//! only while `clr_room` (the core's configuration queues are empty);
//! `clr_busy` until the last one is written.
//!
//! Table reads: the connection, QP and CQ tables are shadowed here (the
//! last entry the firmware wrote, 64 entries each, one RAM of 256-bit
//! halves: a command's second half takes one more clock); a read
//! of a connection entry overlays the fields the fast path updates,
//! `rcv_nxt` and `snd_una` — and the TX side's `snd_nxt` and the peer's
//! `snd_wnd` — from the connection table's read port (`ct_rd_idx`/
//! `ct_rd_sel` out, `ct_rd_rcv_nxt`/`ct_rd_snd_una`/`ct_rd_snd_nxt`/
//! `ct_rd_snd_wnd` in, one clock).
//! During a write the port also points `ct_rd_idx` at the entry one clock
//! before the `tw_*` strobe, so the core can keep the device's fields when a
//! connection stays in RDMA mode (`rnic_wire::abi::context`).

use rust_hdl::prelude::*;

/// Sizes of the tables (entries) and the clock, as the port reports them.
#[derive(Clone, Copy, Debug)]
pub struct FwPortParams {
    pub n_conn: u32,
    pub n_qp: u32,
    pub n_cq: u32,
    pub n_tpt: u32,
    pub n_pbl: u32,
    pub clock_khz: u32,
    /// The largest MTU the core's frame buffers take (octets).
    pub max_mtu: u32,
}

/// Most entries of a shadowed table (connection, QP, CQ).
pub const SHADOW_ENTRIES: u32 = 64;

/// The port of the core profile `PR` (`crate::profile::PROFILES[PR]`):
/// [`Default`] builds it with that profile's [`FwPortParams`].
#[derive(LogicBlock)]
pub struct FwPortN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub fw_valid: Signal<In, Bit>,
    pub fw_write: Signal<In, Bit>,
    pub fw_addr: Signal<In, Bits<24>>,
    pub fw_wdata: Signal<In, Bits<32>>,
    pub fw_rdata: Signal<Out, Bits<32>>,
    pub fw_rvalid: Signal<Out, Bit>,
    // table write strobe: the entry's octets, octet i in bits 8i+7..8i
    pub tw_valid: Signal<Out, Bit>,
    pub tw_table: Signal<Out, Bits<8>>,
    pub tw_index: Signal<Out, Bits<24>>,
    pub tw_data: Signal<Out, Bits<512>>,
    // connection table read port
    pub ct_rd_sel: Signal<Out, Bit>,
    pub ct_rd_idx: Signal<Out, Bits<8>>,
    pub ct_rd_rcv_nxt: Signal<In, Bits<32>>,
    pub ct_rd_snd_una: Signal<In, Bits<32>>,
    /// snd_nxt (octets 36..40) and snd_wnd (44..48) as the device keeps them.
    pub ct_rd_snd_nxt: Signal<In, Bits<32>>,
    pub ct_rd_snd_wnd: Signal<In, Bits<32>>,
    // exception queue
    pub exc_valid: Signal<In, Bit>,
    pub exc_reason: Signal<In, Bits<8>>,
    pub exc_len: Signal<In, Bits<16>>,
    pub exc_conn: Signal<In, Bits<32>>,
    pub exc_rd_sel: Signal<Out, Bit>,
    pub exc_rd_word: Signal<Out, Bits<9>>,
    pub exc_rd_data: Signal<In, Bits<32>>,
    pub exc_pop: Signal<Out, Bit>,
    // raw TX frame stream
    pub raw_tx_data: Signal<Out, Bits<64>>,
    pub raw_tx_keep: Signal<Out, Bits<4>>,
    pub raw_tx_last: Signal<Out, Bit>,
    pub raw_tx_valid: Signal<Out, Bit>,
    pub raw_tx_ready: Signal<In, Bit>,
    // the same buffer into the receive pipeline (`RX_INJECT`): one frame,
    // 64-bit beats, `keep` = octet count, `last`; held until `inj_ready`
    pub inj_data: Signal<Out, Bits<64>>,
    pub inj_keep: Signal<Out, Bits<4>>,
    pub inj_last: Signal<Out, Bit>,
    pub inj_valid: Signal<Out, Bit>,
    pub inj_ready: Signal<In, Bit>,
    // host mailbox (host_regs' firmware side)
    pub mb_busy: Signal<In, Bit>,
    pub mb_opcode: Signal<In, Bits<16>>,
    pub mb_len: Signal<In, Bits<16>>,
    pub mb_done: Signal<Out, Bit>,
    pub mb_done_status: Signal<Out, Bits<32>>,
    pub mb_done_len: Signal<Out, Bits<16>>,
    pub mb_fw_addr: Signal<Out, Bits<8>>,
    pub mb_fw_write: Signal<Out, Bit>,
    pub mb_fw_wdata: Signal<Out, Bits<32>>,
    pub mb_fw_rdata: Signal<In, Bits<32>>,
    // event records (64 octets) for the host's event queue
    pub ev_valid: Signal<Out, Bit>,
    pub ev_data: Signal<Out, Bits<512>>,
    pub ev_ready: Signal<In, Bit>,
    pub flush_valid: Signal<Out, Bit>,
    pub flush_qpn: Signal<Out, Bits<32>>,
    pub fw_ready: Signal<Out, Bit>,
    pub cfg_mac: Signal<In, Bits<48>>,
    pub cfg_ipv4: Signal<In, Bits<32>>,
    pub cfg_netmask: Signal<In, Bits<32>>,
    pub cfg_gateway: Signal<In, Bits<32>>,
    pub cfg_mtu: Signal<In, Bits<32>>,
    pub cycles: Signal<In, Bits<64>>,
    // Terminate requests (the core's `term_*`; docs/rtl.md "Terminate
    // transmit: requests to the firmware")
    pub term_valid: Signal<In, Bit>,
    pub term_cause: Signal<In, Bits<16>>,
    pub term_conn: Signal<In, Bits<32>>,
    pub term_qpn: Signal<In, Bits<32>>,
    pub term_seg_len: Signal<In, Bits<16>>,
    pub term_hdr: Signal<In, Bits<384>>,
    pub term_pop: Signal<Out, Bit>,
    // TX log (`tx_log`): replay request and its status / counters
    pub retx_valid: Signal<Out, Bit>,
    pub retx_conn: Signal<Out, Bits<8>>,
    pub retx_status: Signal<In, Bits<32>>,
    pub retx_count: Signal<In, Bits<32>>,
    pub retx_full: Signal<In, Bits<32>>,
    pub retx_empty: Signal<In, Bits<32>>,
    pub retx_busy: Signal<In, Bits<32>>,
    pub retx_lost: Signal<In, Bits<32>>,
    // device reset (`dev_reset`)
    /// The sequencer's datapath reset.
    pub srst: Signal<In, Bit>,
    /// A reset starts: raise the notice.
    pub note_set: Signal<In, Bit>,
    /// The reset sequence is running.
    pub seq_busy: Signal<In, Bit>,
    /// Start the table walk (one clock).
    pub clr_go: Signal<In, Bit>,
    /// The next walk entry may be written.
    pub clr_room: Signal<In, Bit>,
    /// The table walk runs.
    pub clr_busy: Signal<Out, Bit>,
    k_n_conn: Constant<Bits<24>>,
    k_n_qp: Constant<Bits<24>>,
    k_n_cq: Constant<Bits<24>>,
    k_n_tpt: Constant<Bits<24>>,
    k_n_pbl: Constant<Bits<24>>,
    k_khz: Constant<Bits<32>>,
    k_mtu: Constant<Bits<32>>,
    ones32: Constant<Bits<32>>,
    /// CQ entries the walk clears: the completion writer's contexts.
    k_cl_cq: Constant<Bits<24>>,
    /// The reset notice is up (firmware writes ignored).
    note: DFF<Bit>,
    /// The table walk: running, table (0..=3), index.
    clr: DFF<Bit>,
    cl_tbl: DFF<Bits<2>>,
    cl_idx: DFF<Bits<24>>,
    /// Entries of the table `cl_tbl`.
    cl_lim: Signal<Local, Bits<24>>,
    tsel: DFF<Bits<32>>,
    /// TABLE_DATA. A table read fills it as a shift by halves (state 1:
    /// the entry's low half into the high half; state 3: down by 256, the
    /// high half in), so each bit chooses among at most three sources.
    stage: DFF<Bits<512>>,
    /// The connection table's live fields (`ovl`'s low 128 bits) as read
    /// in state 1, for the high half that arrives in state 3.
    ovl_q: DFF<Bits<128>>,
    /// 0 idle, 1 read, low half (shadow and read port addressed), 3 read,
    /// high half, 2 write, low half (read port addressed; the strobe goes
    /// out in this state), 4 write, high half.
    tstate: DFF<Bits<3>>,
    terr: DFF<Bit>,
    /// The shadow in 256-bit halves, address {table[1:0], index[5:0],
    /// half}: 8 DP16KD instead of 15 for 512-bit words (ECP5's widest port
    /// is 36 bits, so the block count follows the width); a table command
    /// takes one more clock for the second half.
    shadow: RAM<Bits<256>, 9>,
    ones256: Constant<Bits<256>>,
    /// The shadow's half addressed this clock.
    sh_half: Signal<Local, Bit>,
    evst: DFF<Bits<512>>,
    evp: DFF<Bit>,
    tx_busy: DFF<Bit>,
    /// The buffer goes to `inj_*` (`RX_INJECT`), not to `raw_tx_*`.
    tx_inj: DFF<Bit>,
    tx_ra: DFF<Bits<8>>,
    tx_lastb: DFF<Bits<8>>,
    tx_lkeep: DFF<Bits<4>>,
    tx_lo: RAM<Bits<32>, 8>,
    tx_hi: RAM<Bits<32>, 8>,
    mres: DFF<Bits<16>>,
    rdy: DFF<Bit>,
    fl_v: DFF<Bit>,
    fl_q: DFF<Bits<32>>,
    rd_pend: DFF<Bit>,
    rd_addr: DFF<Bits<24>>,
    cyc_hi: DFF<Bits<32>>,
    wr: Signal<Local, Bit>,
    rd: Signal<Local, Bit>,
    tbl: Signal<Local, Bits<8>>,
    tidx: Signal<Local, Bits<24>>,
    t_ok: Signal<Local, Bit>,
    t_rd_ok: Signal<Local, Bit>,
    sh_addr: Signal<Local, Bits<8>>,
    ra_n: Signal<Local, Bits<8>>,
    tx_take: Signal<Local, Bit>,
    tx_len: Signal<Local, Bits<11>>,
    /// The connection table's fields for the high half (entry bits
    /// 256..384: rcv_nxt, snd_nxt, snd_una, snd_wnd).
    ovl: Signal<Local, Bits<128>>,
}

/// The co-simulation core's port ([`CORE_PARAMS`]).
pub type FwPort = FwPortN<{ crate::profile::PR_SIM }>;

impl<const PR: usize> FwPortN<PR> {
    pub fn new(p: FwPortParams) -> Self {
        assert!(p.n_conn <= SHADOW_ENTRIES && p.n_qp <= SHADOW_ENTRIES);
        assert!(p.n_cq <= SHADOW_ENTRIES && p.n_tpt < 1 << 24 && p.n_pbl < 1 << 24);
        let k24 = |v: u32| Constant::new((v as u64).into());
        Self {
            clock: Default::default(),
            reset: Default::default(),
            fw_valid: Default::default(),
            fw_write: Default::default(),
            fw_addr: Default::default(),
            fw_wdata: Default::default(),
            fw_rdata: Default::default(),
            fw_rvalid: Default::default(),
            tw_valid: Default::default(),
            tw_table: Default::default(),
            tw_index: Default::default(),
            tw_data: Default::default(),
            ct_rd_sel: Default::default(),
            ct_rd_idx: Default::default(),
            ct_rd_rcv_nxt: Default::default(),
            ct_rd_snd_una: Default::default(),
            ct_rd_snd_nxt: Default::default(),
            ct_rd_snd_wnd: Default::default(),
            exc_valid: Default::default(),
            exc_reason: Default::default(),
            exc_len: Default::default(),
            exc_conn: Default::default(),
            exc_rd_sel: Default::default(),
            exc_rd_word: Default::default(),
            exc_rd_data: Default::default(),
            exc_pop: Default::default(),
            raw_tx_data: Default::default(),
            raw_tx_keep: Default::default(),
            raw_tx_last: Default::default(),
            raw_tx_valid: Default::default(),
            raw_tx_ready: Default::default(),
            inj_data: Default::default(),
            inj_keep: Default::default(),
            inj_last: Default::default(),
            inj_valid: Default::default(),
            inj_ready: Default::default(),
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
            ev_valid: Default::default(),
            ev_data: Default::default(),
            ev_ready: Default::default(),
            flush_valid: Default::default(),
            flush_qpn: Default::default(),
            fw_ready: Default::default(),
            cfg_mac: Default::default(),
            cfg_ipv4: Default::default(),
            cfg_netmask: Default::default(),
            cfg_gateway: Default::default(),
            cfg_mtu: Default::default(),
            cycles: Default::default(),
            term_valid: Default::default(),
            term_cause: Default::default(),
            term_conn: Default::default(),
            term_qpn: Default::default(),
            term_seg_len: Default::default(),
            term_hdr: Default::default(),
            term_pop: Default::default(),
            retx_valid: Default::default(),
            retx_conn: Default::default(),
            retx_status: Default::default(),
            retx_count: Default::default(),
            retx_full: Default::default(),
            retx_empty: Default::default(),
            retx_busy: Default::default(),
            retx_lost: Default::default(),
            srst: Default::default(),
            note_set: Default::default(),
            seq_busy: Default::default(),
            clr_go: Default::default(),
            clr_room: Default::default(),
            clr_busy: Default::default(),
            k_cl_cq: k24(p.n_cq.min(1 << crate::completion::cpl_write::CQ_BITS)),
            note: Default::default(),
            clr: Default::default(),
            cl_tbl: Default::default(),
            cl_idx: Default::default(),
            cl_lim: Default::default(),
            k_n_conn: k24(p.n_conn),
            k_n_qp: k24(p.n_qp),
            k_n_cq: k24(p.n_cq),
            k_n_tpt: k24(p.n_tpt),
            k_n_pbl: k24(p.n_pbl),
            k_khz: Constant::new((p.clock_khz as u64).into()),
            k_mtu: Constant::new((p.max_mtu as u64).into()),
            ones32: Constant::new(0xFFFF_FFFFu64.into()),
            ones256: Constant::new(Bits::<256>::mask()),
            sh_half: Default::default(),
            tsel: Default::default(),
            stage: Default::default(),
            ovl_q: Default::default(),
            tstate: Default::default(),
            terr: Default::default(),
            shadow: Default::default(),
            evst: Default::default(),
            evp: Default::default(),
            tx_busy: Default::default(),
            tx_inj: Default::default(),
            tx_ra: Default::default(),
            tx_lastb: Default::default(),
            tx_lkeep: Default::default(),
            tx_lo: Default::default(),
            tx_hi: Default::default(),
            mres: Default::default(),
            rdy: Default::default(),
            fl_v: Default::default(),
            fl_q: Default::default(),
            rd_pend: Default::default(),
            rd_addr: Default::default(),
            cyc_hi: Default::default(),
            wr: Default::default(),
            rd: Default::default(),
            tbl: Default::default(),
            tidx: Default::default(),
            t_ok: Default::default(),
            t_rd_ok: Default::default(),
            sh_addr: Default::default(),
            ra_n: Default::default(),
            tx_take: Default::default(),
            tx_len: Default::default(),
            ovl: Default::default(),
        }
    }
}

/// The core's parameters: 64 connections (`conn_table`'s default), 64 QPs
/// and CQs, the TPT and page list of `tpt`, the notional 156.25 MHz clock
/// (DESIGN.md section 4).
pub const CORE_PARAMS: FwPortParams = FwPortParams {
    n_conn: 1 << crate::receive::conn_table::DEFAULT_LOG2_CONNS,
    n_qp: 64,
    n_cq: 64,
    n_tpt: 1 << crate::protection::tpt::TPT_INDEX_BITS,
    n_pbl: 1 << crate::protection::tpt::PBL_INDEX_BITS,
    clock_khz: 156_250,
    max_mtu: rnic_wire::abi::caps::TX_MAX_MTU as u32,
};

impl<const PR: usize> Default for FwPortN<PR> {
    fn default() -> Self {
        Self::new(crate::profile::PROFILES[PR].fw)
    }
}

impl<const PR: usize> Logic for FwPortN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, tsel, stage, ovl_q, tstate, terr, evst, evp, tx_busy, tx_inj, tx_ra,
            tx_lastb, tx_lkeep, mres, rdy, fl_v, fl_q, rd_pend, rd_addr, cyc_hi, note, clr, cl_tbl,
            cl_idx
        );
        self.shadow.read_clock.next = self.clock.val();
        self.shadow.write_clock.next = self.clock.val();
        self.tx_lo.read_clock.next = self.clock.val();
        self.tx_lo.write_clock.next = self.clock.val();
        self.tx_hi.read_clock.next = self.clock.val();
        self.tx_hi.write_clock.next = self.clock.val();

        // While the reset notice is up, the firmware's writes do nothing.
        self.wr.next = self.fw_valid.val() & self.fw_write.val() & !self.note.q.val();
        self.rd.next = self.fw_valid.val() & !self.fw_write.val();
        self.fl_v.d.next = false;

        // ---- tables
        self.tbl.next = self.tsel.q.val().get_bits::<8>(24);
        self.tidx.next = self.tsel.q.val().get_bits::<24>(0);
        // TableId: Conn 0, Qp 1, Cq 2, Tpt 3, Pbl 4 (rnic_wire::abi::context)
        self.t_rd_ok.next = ((self.tbl.val() == 0) & (self.tidx.val() < self.k_n_conn.val()))
            | ((self.tbl.val() == 1) & (self.tidx.val() < self.k_n_qp.val()))
            | ((self.tbl.val() == 2) & (self.tidx.val() < self.k_n_cq.val()));
        self.t_ok.next = self.t_rd_ok.val()
            | ((self.tbl.val() == 3) & (self.tidx.val() < self.k_n_tpt.val()))
            | ((self.tbl.val() == 4) & (self.tidx.val() < self.k_n_pbl.val()));
        // shadow entry: {table[1:0], index[5:0]}
        self.sh_addr.next = (bit_cast::<8, 2>(self.tbl.val().get_bits::<2>(0)) << 6)
            | bit_cast::<8, 6>(self.tidx.val().get_bits::<6>(0));
        // The high half is read in state 1 (its data in state 3) and
        // written in state 4.
        self.sh_half.next = (self.tstate.q.val() == 1) | (self.tstate.q.val() == 4);
        self.shadow.read_address.next = (bit_cast::<9, 8>(self.sh_addr.val()) << 1)
            | bit_cast::<9, 1>(self.sh_half.val().into());
        self.shadow.write_address.next = (bit_cast::<9, 8>(self.sh_addr.val()) << 1)
            | bit_cast::<9, 1>(self.sh_half.val().into());
        self.shadow.write_data.next = self.stage.q.val().get_bits::<256>(0);
        if self.sh_half.val() {
            self.shadow.write_data.next = self.stage.q.val().get_bits::<256>(256);
        }
        self.shadow.write_enable.next = false;
        self.ct_rd_idx.next = self.tidx.val().get_bits::<8>(0);
        self.ct_rd_sel.next = false;
        self.tw_valid.next = false;
        self.tw_table.next = self.tbl.val();
        self.tw_index.next = self.tidx.val();
        self.tw_data.next = self.stage.q.val();
        // rcv_nxt (octets 32..36), snd_nxt (36..40), snd_una (40..44) and
        // snd_wnd (44..48) from the table itself (its read port answers in
        // state 1: kept in the stage's high half until the half comes).
        self.ovl.next = bit_cast::<128, 32>(self.ct_rd_rcv_nxt.val())
            | (bit_cast::<128, 32>(self.ct_rd_snd_nxt.val()) << 32)
            | (bit_cast::<128, 32>(self.ct_rd_snd_una.val()) << 64)
            | (bit_cast::<128, 32>(self.ct_rd_snd_wnd.val()) << 96);
        if self.tstate.q.val() == 1 {
            self.tstate.d.next = 3.into();
            // The entry's low half waits in the stage's high half.
            self.stage.d.next = (self.stage.q.val() & bit_cast::<512, 256>(self.ones256.val()))
                | (bit_cast::<512, 256>(self.shadow.read_data.val()) << 256);
            self.ovl_q.d.next = self.ovl.val();
        }
        if self.tstate.q.val() == 3 {
            self.tstate.d.next = 0.into();
            // Down by a half; the high half in.
            self.stage.d.next = (self.stage.q.val() >> 256)
                | (bit_cast::<512, 256>(self.shadow.read_data.val()) << 256);
            if self.tbl.val() == 0 {
                // the high half's low 128 bits: the table's fields (state 1)
                self.stage.d.next = (self.stage.q.val() >> 256)
                    | (bit_cast::<512, 128>(self.ovl_q.q.val()) << 256)
                    | (bit_cast::<512, 128>(self.shadow.read_data.val().get_bits::<128>(128))
                        << 384);
            }
        }
        if self.tstate.q.val() == 2 {
            self.tstate.d.next = 4.into();
            self.tw_valid.next = true;
            self.shadow.write_enable.next = self.t_rd_ok.val();
        }
        if self.tstate.q.val() == 4 {
            self.tstate.d.next = 0.into();
            self.shadow.write_enable.next = self.t_rd_ok.val();
        }
        // ---- the reset's table walk (the firmware's commands are ignored
        // meanwhile: the notice is up)
        self.cl_lim.next = self.k_n_conn.val();
        if self.cl_tbl.q.val() == 1 {
            self.cl_lim.next = self.k_n_qp.val();
        }
        if self.cl_tbl.q.val() == 2 {
            self.cl_lim.next = self.k_cl_cq.val();
        }
        if self.cl_tbl.q.val() == 3 {
            self.cl_lim.next = self.k_n_tpt.val();
        }
        if self.clr.q.val() & (self.tstate.q.val() == 0) & self.clr_room.val() {
            self.tsel.d.next = (bit_cast::<32, 2>(self.cl_tbl.q.val()) << 24)
                | bit_cast::<32, 24>(self.cl_idx.q.val());
            self.stage.d.next = 0.into();
            if self.cl_tbl.q.val() == 1 {
                // QpContext.conn (octets 36..40) = NO_CONN: no send side
                self.stage.d.next = bit_cast::<512, 32>(self.ones32.val()) << 288;
            }
            self.tstate.d.next = 2.into();
            self.cl_idx.d.next = self.cl_idx.q.val() + 1;
            if self.cl_idx.q.val() + 1 == self.cl_lim.val() {
                self.cl_idx.d.next = 0.into();
                self.cl_tbl.d.next = self.cl_tbl.q.val() + 1;
                if self.cl_tbl.q.val() == 3 {
                    self.clr.d.next = false;
                }
            }
        }
        if self.clr_go.val() {
            self.clr.d.next = true;
            self.cl_tbl.d.next = 0.into();
            self.cl_idx.d.next = 0.into();
        }
        self.clr_busy.next = self.clr.q.val() | (self.tstate.q.val() != 0);

        if self.wr.val() & (self.tstate.q.val() == 0) {
            if self.fw_addr.val() == 0x000 {
                self.tsel.d.next = self.fw_wdata.val();
            }
            if self.fw_addr.val() == 0x004 {
                // TABLE_READ 1, TABLE_WRITE 2
                if (self.fw_wdata.val() == 1) & self.t_rd_ok.val() {
                    self.tstate.d.next = 1.into();
                    self.ct_rd_sel.next = self.tbl.val() == 0;
                    self.terr.d.next = false;
                } else if (self.fw_wdata.val() == 2) & self.t_ok.val() {
                    self.tstate.d.next = 2.into();
                    self.ct_rd_sel.next = self.tbl.val() == 0;
                    self.terr.d.next = false;
                } else {
                    self.terr.d.next = true;
                }
            }
            // TABLE_DATA 0x100..0x13F
            if self.fw_addr.val().get_bits::<18>(6) == 4 {
                for i in 0..16 {
                    if self.fw_addr.val().get_bits::<4>(2) == i {
                        self.stage.d.next = (self.stage.q.val()
                            & !(bit_cast::<512, 32>(self.ones32.val()) << (32 * i)))
                            | (bit_cast::<512, 32>(self.fw_wdata.val()) << (32 * i));
                    }
                }
            }
        }

        // ---- events: EVENT_DATA 0x140..0x17F, EVENT_PUSH 0x03C
        if self.wr.val() & !self.evp.q.val() {
            if self.fw_addr.val().get_bits::<18>(6) == 5 {
                for i in 0..16 {
                    if self.fw_addr.val().get_bits::<4>(2) == i {
                        self.evst.d.next = (self.evst.q.val()
                            & !(bit_cast::<512, 32>(self.ones32.val()) << (32 * i)))
                            | (bit_cast::<512, 32>(self.fw_wdata.val()) << (32 * i));
                    }
                }
            }
            if (self.fw_addr.val() == 0x03C) & self.fw_wdata.val().get_bit(0) {
                self.evp.d.next = true;
            }
        }
        if self.evp.q.val() & self.ev_ready.val() {
            self.evp.d.next = false;
        }
        self.ev_valid.next = self.evp.q.val();
        self.ev_data.next = self.evst.q.val();

        // ---- flush
        if self.wr.val() & (self.fw_addr.val() == 0x040) {
            self.fl_v.d.next = true;
            self.fl_q.d.next = self.fw_wdata.val();
        }
        self.flush_valid.next = self.fl_v.q.val();
        self.flush_qpn.next = self.fl_q.q.val();

        // ---- exception queue: EXC_POP 0x010, EXC_DATA 0x800..0xFFF
        self.exc_pop.next =
            self.wr.val() & (self.fw_addr.val() == 0x010) & self.fw_wdata.val().get_bit(0);
        self.exc_rd_word.next = self.fw_addr.val().get_bits::<9>(2);
        self.exc_rd_sel.next = self.rd.val() & (self.fw_addr.val().get_bits::<13>(11) == 1);

        // ---- Terminate requests: TERM_POP 0x080
        self.term_pop.next =
            self.wr.val() & (self.fw_addr.val() == 0x080) & self.fw_wdata.val().get_bit(0);

        // ---- TX log replay: RETX_CONN 0x094 (connection < 256)
        self.retx_valid.next = self.wr.val()
            & (self.fw_addr.val() == 0x094)
            & !self.fw_wdata.val().get_bits::<24>(8).any();
        self.retx_conn.next = self.fw_wdata.val().get_bits::<8>(0);

        // ---- mailbox: MBOX_DATA 0x400..0x7FF, MBOX_LEN 0x034, MBOX_DONE 0x038
        self.mb_fw_addr.next = self.fw_addr.val().get_bits::<8>(2);
        self.mb_fw_wdata.next = self.fw_wdata.val();
        self.mb_fw_write.next = self.wr.val() & (self.fw_addr.val().get_bits::<14>(10) == 1);
        if self.wr.val() & (self.fw_addr.val() == 0x034) {
            self.mres.d.next = self.fw_wdata.val().get_bits::<16>(0);
        }
        self.mb_done.next = self.wr.val() & (self.fw_addr.val() == 0x038);
        self.mb_done_status.next = self.fw_wdata.val();
        self.mb_done_len.next = self.mres.q.val();
        if self.rd.val() & (self.fw_addr.val() == 0x030) & !self.note.q.val() {
            self.rdy.d.next = true;
        }
        // the reset notice: raised by the sequencer, popped by the firmware
        // once the sequence is over
        if self.fw_valid.val()
            & self.fw_write.val()
            & (self.fw_addr.val() == 0x010)
            & self.fw_wdata.val().get_bit(0)
            & !self.seq_busy.val()
        {
            self.note.d.next = false;
        }
        if self.note_set.val() {
            self.note.d.next = true;
        }
        self.fw_ready.next = self.rdy.q.val();

        // ---- raw TX: TX_DATA 0x1000..0x17FF (two 32-bit RAMs, one per half
        // of a beat), TX_SEND 0x014 out on raw_tx_*, RX_INJECT 0x018 into
        // the receive pipeline on inj_*
        self.tx_lo.write_address.next = self.fw_addr.val().get_bits::<8>(3);
        self.tx_hi.write_address.next = self.fw_addr.val().get_bits::<8>(3);
        self.tx_lo.write_data.next = self.fw_wdata.val();
        self.tx_hi.write_data.next = self.fw_wdata.val();
        self.tx_lo.write_enable.next = self.wr.val()
            & !self.tx_busy.q.val()
            & (self.fw_addr.val().get_bits::<13>(11) == 2)
            & !self.fw_addr.val().get_bit(2);
        self.tx_hi.write_enable.next = self.wr.val()
            & !self.tx_busy.q.val()
            & (self.fw_addr.val().get_bits::<13>(11) == 2)
            & self.fw_addr.val().get_bit(2);
        self.tx_take.next = self.tx_busy.q.val()
            & ((!self.tx_inj.q.val() & self.raw_tx_ready.val())
                | (self.tx_inj.q.val() & self.inj_ready.val()));
        self.ra_n.next = self.tx_ra.q.val();
        // len - 1 for len in 1..=2048, modulo 2048
        self.tx_len.next = self.fw_wdata.val().get_bits::<11>(0) - 1;
        if self.tx_take.val() {
            if self.tx_ra.q.val() == self.tx_lastb.q.val() {
                self.tx_busy.d.next = false;
            } else {
                self.ra_n.next = self.tx_ra.q.val() + 1;
            }
        }
        if self.wr.val()
            & ((self.fw_addr.val() == 0x014) | (self.fw_addr.val() == 0x018))
            & !self.tx_busy.q.val()
            & (self.fw_wdata.val() >= 1)
            & (self.fw_wdata.val() <= 2048)
        {
            // FRAME_WINDOW
            self.tx_busy.d.next = true;
            self.tx_inj.d.next = self.fw_addr.val() == 0x018;
            self.ra_n.next = 0.into();
            self.tx_lastb.d.next = self.tx_len.val().get_bits::<8>(3);
            self.tx_lkeep.d.next = bit_cast::<4, 3>(self.tx_len.val().get_bits::<3>(0)) + 1;
        }
        self.tx_ra.d.next = self.ra_n.val();
        // the RAMs always show the beat at tx_ra (read address = its next value)
        self.tx_lo.read_address.next = self.ra_n.val();
        self.tx_hi.read_address.next = self.ra_n.val();
        self.raw_tx_valid.next = self.tx_busy.q.val() & !self.tx_inj.q.val();
        self.inj_valid.next = self.tx_busy.q.val() & self.tx_inj.q.val();
        self.raw_tx_data.next = (bit_cast::<64, 32>(self.tx_hi.read_data.val()) << 32)
            | bit_cast::<64, 32>(self.tx_lo.read_data.val());
        self.raw_tx_last.next = self.tx_ra.q.val() == self.tx_lastb.q.val();
        self.raw_tx_keep.next = 8.into();
        if self.tx_ra.q.val() == self.tx_lastb.q.val() {
            self.raw_tx_keep.next = self.tx_lkeep.q.val();
        }
        // the same beat on inj_* (only one of the two is valid)
        self.inj_data.next = (bit_cast::<64, 32>(self.tx_hi.read_data.val()) << 32)
            | bit_cast::<64, 32>(self.tx_lo.read_data.val());
        self.inj_last.next = self.tx_ra.q.val() == self.tx_lastb.q.val();
        self.inj_keep.next = 8.into();
        if self.tx_ra.q.val() == self.tx_lastb.q.val() {
            self.inj_keep.next = self.tx_lkeep.q.val();
        }

        // ---- reads: the address is registered, the answer muxed one clock later
        self.rd_pend.d.next = self.rd.val();
        if self.rd.val() {
            self.rd_addr.d.next = self.fw_addr.val();
            if self.fw_addr.val() == 0x020 {
                self.cyc_hi.d.next = self.cycles.val().get_bits::<32>(32);
            }
        }
        self.fw_rvalid.next = self.rd_pend.q.val();
        self.fw_rdata.next = 0.into();
        if self.rd_pend.q.val() {
            // Registers 0x000..0x0FC (word-aligned only): one case on the
            // word index, so that the read-back is a multiplexer indexed by
            // the address rather than a chain of full-address compares.
            if (self.rd_addr.q.val().get_bits::<16>(8) == 0)
                & (self.rd_addr.q.val().get_bits::<2>(0) == 0)
            {
                match self.rd_addr.q.val().get_bits::<6>(2).index() {
                    0 => {
                        // 0x000 TABLE_SEL
                        self.fw_rdata.next = self.tsel.q.val();
                    }
                    1 => {
                        // 0x004 TABLE_CMD
                        self.fw_rdata.next = bit_cast::<32, 1>((self.tstate.q.val() != 0).into())
                            | (bit_cast::<32, 1>(self.terr.q.val().into()) << 1);
                    }
                    2 => {
                        // 0x008 EXC_STATUS
                        self.fw_rdata.next = (bit_cast::<32, 1>(self.exc_valid.val().into()) << 31)
                            | (bit_cast::<32, 8>(self.exc_reason.val()) << 16)
                            | bit_cast::<32, 16>(self.exc_len.val());
                        if self.note.q.val() {
                            // ExceptionReason::DeviceReset, once the reset is over
                            self.fw_rdata.next = (bit_cast::<32, 1>((!self.seq_busy.val()).into())
                                << 31)
                                | (11 << 16);
                        }
                    }
                    3 => {
                        // 0x00C EXC_CONN
                        self.fw_rdata.next = self.exc_conn.val();
                        if self.note.q.val() {
                            self.fw_rdata.next = self.ones32.val();
                        }
                    }
                    5 => {
                        // 0x014 TX_SEND (busy)
                        self.fw_rdata.next = bit_cast::<32, 1>(self.tx_busy.q.val().into()) << 31;
                    }
                    6 => {
                        // 0x018 RX_INJECT (busy)
                        self.fw_rdata.next = bit_cast::<32, 1>(self.tx_busy.q.val().into()) << 31;
                    }
                    8 => {
                        // 0x020 CYCLES_LO: the counter one clock after the request
                        self.fw_rdata.next = self.cycles.val().get_bits::<32>(0);
                    }
                    9 => {
                        // 0x024 CYCLES_HI
                        self.fw_rdata.next = self.cyc_hi.q.val();
                    }
                    10 => {
                        // 0x028 CLOCK_KHZ
                        self.fw_rdata.next = self.k_khz.val();
                    }
                    11 => {
                        // 0x02C LIM_PBL
                        self.fw_rdata.next = bit_cast::<32, 24>(self.k_n_pbl.val());
                    }
                    12 => {
                        // 0x030 MBOX_CMD
                        self.fw_rdata.next = (bit_cast::<32, 1>(self.mb_busy.val().into()) << 31)
                            | bit_cast::<32, 16>(self.mb_opcode.val());
                        if self.note.q.val() {
                            self.fw_rdata.next = 0.into();
                        }
                    }
                    13 => {
                        // 0x034 MBOX_LEN
                        self.fw_rdata.next = bit_cast::<32, 16>(self.mb_len.val());
                    }
                    15 => {
                        // 0x03C EVENT_PUSH
                        self.fw_rdata.next = bit_cast::<32, 1>(self.evp.q.val().into());
                    }
                    18 => {
                        // 0x048 LIM_MTU
                        self.fw_rdata.next = self.k_mtu.val();
                    }
                    20 => {
                        // 0x050 CFG_MAC_LO
                        self.fw_rdata.next = self.cfg_mac.val().get_bits::<32>(0);
                    }
                    21 => {
                        // 0x054 CFG_MAC_HI
                        self.fw_rdata.next =
                            bit_cast::<32, 16>(self.cfg_mac.val().get_bits::<16>(32));
                    }
                    22 => {
                        // 0x058 CFG_IPV4
                        self.fw_rdata.next = self.cfg_ipv4.val();
                    }
                    23 => {
                        // 0x05C CFG_NETMASK
                        self.fw_rdata.next = self.cfg_netmask.val();
                    }
                    24 => {
                        // 0x060 CFG_GATEWAY
                        self.fw_rdata.next = self.cfg_gateway.val();
                    }
                    25 => {
                        // 0x064 CFG_MTU
                        self.fw_rdata.next = self.cfg_mtu.val();
                    }
                    28 => {
                        // 0x070 TERM_STATUS
                        self.fw_rdata.next = (bit_cast::<32, 1>(self.term_valid.val().into())
                            << 31)
                            | bit_cast::<32, 16>(self.term_cause.val());
                    }
                    29 => {
                        // 0x074 TERM_CONN
                        self.fw_rdata.next = self.term_conn.val();
                    }
                    30 => {
                        // 0x078 TERM_QPN
                        self.fw_rdata.next = self.term_qpn.val();
                    }
                    31 => {
                        // 0x07C TERM_SEG_LEN
                        self.fw_rdata.next = bit_cast::<32, 16>(self.term_seg_len.val());
                    }
                    38 => {
                        // 0x098 RETX_STATUS
                        self.fw_rdata.next = self.retx_status.val();
                    }
                    39 => {
                        // 0x09C RETX_COUNT
                        self.fw_rdata.next = self.retx_count.val();
                    }
                    40 => {
                        // 0x0A0 RETX_FULL
                        self.fw_rdata.next = self.retx_full.val();
                    }
                    41 => {
                        // 0x0A4 RETX_EMPTY
                        self.fw_rdata.next = self.retx_empty.val();
                    }
                    42 => {
                        // 0x0A8 RETX_BUSY
                        self.fw_rdata.next = self.retx_busy.val();
                    }
                    43 => {
                        // 0x0AC RETX_LOST
                        self.fw_rdata.next = self.retx_lost.val();
                    }
                    44 => {
                        // 0x0B0 LIM_CONN
                        self.fw_rdata.next = bit_cast::<32, 24>(self.k_n_conn.val());
                    }
                    45 => {
                        // 0x0B4 LIM_QP
                        self.fw_rdata.next = bit_cast::<32, 24>(self.k_n_qp.val());
                    }
                    46 => {
                        // 0x0B8 LIM_CQ
                        self.fw_rdata.next = bit_cast::<32, 24>(self.k_n_cq.val());
                    }
                    47 => {
                        // 0x0BC LIM_TPT
                        self.fw_rdata.next = bit_cast::<32, 24>(self.k_n_tpt.val());
                    }
                    _ => {}
                }
            }
            // TERM_HDR 0x0C0..0x0EF: 12 words of the echo
            if self.rd_addr.q.val().get_bits::<18>(6) == 3 {
                match self.rd_addr.q.val().get_bits::<4>(2).index() {
                    0 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(0),
                    1 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(32),
                    2 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(64),
                    3 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(96),
                    4 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(128),
                    5 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(160),
                    6 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(192),
                    7 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(224),
                    8 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(256),
                    9 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(288),
                    10 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(320),
                    11 => self.fw_rdata.next = self.term_hdr.val().get_bits::<32>(352),
                    _ => {}
                }
            }
            // TABLE_DATA 0x100..0x13F: word i of the staging entry
            if self.rd_addr.q.val().get_bits::<18>(6) == 4 {
                match self.rd_addr.q.val().get_bits::<4>(2).index() {
                    0 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(0),
                    1 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(32),
                    2 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(64),
                    3 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(96),
                    4 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(128),
                    5 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(160),
                    6 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(192),
                    7 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(224),
                    8 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(256),
                    9 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(288),
                    10 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(320),
                    11 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(352),
                    12 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(384),
                    13 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(416),
                    14 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(448),
                    15 => self.fw_rdata.next = self.stage.q.val().get_bits::<32>(480),
                    _ => {}
                }
            }
            if self.rd_addr.q.val().get_bits::<14>(10) == 1 {
                self.fw_rdata.next = self.mb_fw_rdata.val();
            }
            if self.rd_addr.q.val().get_bits::<13>(11) == 1 {
                self.fw_rdata.next = self.exc_rd_data.val();
            }
        }

        if self.reset.val() | self.srst.val() {
            self.tstate.d.next = 0.into();
            self.terr.d.next = false;
            self.evp.d.next = false;
            self.tx_busy.d.next = false;
            self.tx_inj.d.next = false;
            self.rdy.d.next = false;
            self.fl_v.d.next = false;
            self.clr.d.next = false;
        }
        if self.reset.val() {
            self.rd_pend.d.next = false;
            self.note.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use rnic_wire::abi::context::{port, ConnContext, ConnMode, TableId, CONN_CTX_SIZE};

    struct TbN<const PR: usize>(FwPortN<PR>);
    type Tb = TbN<{ crate::profile::PR_SIM }>;

    fn words(b: &[u8]) -> Vec<u32> {
        b.chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(w)
            })
            .collect()
    }

    fn to_bytes(b: &Bits<512>) -> Vec<u8> {
        (0..64)
            .map(|i| b.get_bits::<8>(8 * i).to_u64() as u8)
            .collect()
    }

    impl<const PR: usize> TbN<PR> {
        fn new() -> Self {
            let mut u = FwPortN::<PR>::default();
            u.clock.connect();
            u.reset.connect();
            u.fw_valid.connect();
            u.fw_write.connect();
            u.fw_addr.connect();
            u.fw_wdata.connect();
            u.ct_rd_rcv_nxt.connect();
            u.ct_rd_snd_una.connect();
            u.ct_rd_snd_nxt.connect();
            u.ct_rd_snd_wnd.connect();
            u.exc_valid.connect();
            u.exc_reason.connect();
            u.exc_len.connect();
            u.exc_conn.connect();
            u.exc_rd_data.connect();
            u.raw_tx_ready.connect();
            u.inj_ready.connect();
            u.mb_busy.connect();
            u.mb_opcode.connect();
            u.mb_len.connect();
            u.mb_fw_rdata.connect();
            u.ev_ready.connect();
            u.cfg_mac.connect();
            u.cfg_ipv4.connect();
            u.cfg_netmask.connect();
            u.cfg_gateway.connect();
            u.cfg_mtu.connect();
            u.cycles.connect();
            u.term_valid.connect();
            u.term_cause.connect();
            u.term_conn.connect();
            u.term_qpn.connect();
            u.term_seg_len.connect();
            u.term_hdr.connect();
            u.retx_status.connect();
            u.retx_count.connect();
            u.retx_full.connect();
            u.retx_empty.connect();
            u.retx_busy.connect();
            u.retx_lost.connect();
            u.srst.connect();
            u.note_set.connect();
            u.seq_busy.connect();
            u.clr_go.connect();
            u.clr_room.connect();
            u.connect_all();
            u.reset.next = true;
            tick!(u);
            tick!(u);
            u.reset.next = false;
            TbN(u)
        }
        fn set(&mut self, addr: u32, v: u32, write: bool) {
            let u = &mut self.0;
            u.fw_valid.next = true;
            u.fw_write.next = write;
            u.fw_addr.next = (addr as u64).into();
            u.fw_wdata.next = (v as u64).into();
        }
        /// Settles combinational outputs after input changes (no edge).
        fn settle(&mut self) {
            assert!(rust_hdl::prelude::simulate(&mut self.0, 1000));
        }
        fn idle(&mut self) {
            self.0.fw_valid.next = false;
            self.0.fw_write.next = false;
        }
        fn write(&mut self, addr: u32, v: u32) {
            self.set(addr, v, true);
            tick!(self.0);
            self.idle();
        }
        fn read(&mut self, addr: u32) -> u32 {
            self.set(addr, 0, false);
            tick!(self.0);
            self.idle();
            assert!(self.0.fw_rvalid.val());
            self.0.fw_rdata.val().to_u64() as u32
        }
        /// Issues a table command; returns the strobes seen until not busy.
        fn table_cmd(&mut self, table: u32, index: u32, cmd: u32) -> Vec<(u64, u64, Vec<u8>)> {
            self.write(port::TABLE_SEL, table << 24 | index);
            self.set(port::TABLE_CMD, cmd, true);
            self.settle();
            // the connection table's read port is addressed in the command clock
            let sel = self.0.ct_rd_sel.val();
            assert_eq!(
                sel,
                table == 0 && self.read_ok_hint(table, index, cmd),
                "ct_rd_sel"
            );
            tick!(self.0);
            self.idle();
            let mut seen = Vec::new();
            for _ in 0..4 {
                if self.0.tw_valid.val() {
                    seen.push((
                        self.0.tw_table.val().to_u64(),
                        self.0.tw_index.val().to_u64(),
                        to_bytes(&self.0.tw_data.val()),
                    ));
                }
                if self.read(port::TABLE_CMD) & 1 == 0 {
                    break;
                }
            }
            seen
        }
        fn read_ok_hint(&self, table: u32, index: u32, cmd: u32) -> bool {
            let valid_cmd = cmd == port::TABLE_READ || cmd == port::TABLE_WRITE;
            table == 0 && index < crate::profile::PROFILES[PR].fw.n_conn && valid_cmd
        }
    }

    fn ctx(i: u32) -> ConnContext {
        ConnContext {
            mode: ConnMode::Rdma,
            mpa_flags: 3,
            snd_wscale: 2,
            rcv_wscale: 7,
            local_ip: 0x0A00_0001,
            peer_ip: 0x0A00_0002 + i,
            local_port: 7174,
            peer_port: 40000 + i as u16,
            local_mac: [2, 0, 0, 0, 0, 1],
            peer_mac: [2, 0, 0, 0, 0, 2],
            mss: 1460,
            mulpdu: 1440,
            rcv_nxt: 1000 + i,
            snd_nxt: 2000,
            snd_una: 3000,
            snd_wnd: 65535,
            rcv_wnd: 1 << 20,
            tx_marker_ref: 4,
            rx_marker_ref: 5,
            qpn: i,
        }
    }

    /// Table writes: one strobe with the staged octets; errors for unknown
    /// tables and out-of-range indices; reads return the shadow with the
    /// connection table's `rcv_nxt`/`snd_una`.
    #[test]
    fn tables() {
        let mut t = Tb::new();
        for i in [0u32, 5, 63] {
            let mut b = [0u8; CONN_CTX_SIZE];
            ctx(i).emit(&mut b).unwrap();
            for (w, v) in words(&b).into_iter().enumerate() {
                t.write(port::TABLE_DATA + 4 * w as u32, v);
            }
            let seen = t.table_cmd(TableId::Conn as u32, i, port::TABLE_WRITE);
            assert_eq!(seen, vec![(0, i as u64, b.to_vec())]);
            assert_eq!(t.read(port::TABLE_CMD), 0, "not busy, no error");
        }
        // clobber the staging entry, then read entry 5 back
        for w in 0..16 {
            t.write(port::TABLE_DATA + 4 * w, 0xFFFF_FFFF);
        }
        t.0.ct_rd_rcv_nxt.next = 0x1111_2222.into();
        t.0.ct_rd_snd_una.next = 0x3333_4444.into();
        t.0.ct_rd_snd_nxt.next = 0x5555_6666.into();
        t.0.ct_rd_snd_wnd.next = 0x0007_8000.into();
        assert!(t.table_cmd(0, 5, port::TABLE_READ).is_empty());
        let got: Vec<u8> = (0..16)
            .flat_map(|w| t.read(port::TABLE_DATA + 4 * w).to_le_bytes())
            .collect();
        let mut want = ctx(5);
        want.rcv_nxt = 0x1111_2222;
        want.snd_una = 0x3333_4444;
        want.snd_nxt = 0x5555_6666;
        want.snd_wnd = 0x0007_8000;
        assert_eq!(ConnContext::parse(&got).unwrap(), want);
        // TPT and page list: writes reach the strobe up to the table size
        let tpt: Vec<u8> = (0..64).map(|i| i as u8).collect();
        for (w, v) in words(&tpt).into_iter().enumerate() {
            t.write(port::TABLE_DATA + 4 * w as u32, v);
        }
        let seen = t.table_cmd(TableId::Tpt as u32, 255, port::TABLE_WRITE);
        assert_eq!(seen, vec![(3, 255, tpt.clone())]);
        let seen = t.table_cmd(TableId::Pbl as u32, 4095, port::TABLE_WRITE);
        assert_eq!(seen.len(), 1);
        // errors: nothing happens, bit 1 set
        for (table, index, cmd) in [
            (0, 64, port::TABLE_WRITE),
            (1, 64, port::TABLE_READ),
            (2, 1000, port::TABLE_WRITE),
            (3, 256, port::TABLE_WRITE),
            (4, 4096, port::TABLE_WRITE),
            (5, 0, port::TABLE_WRITE),
            (255, 0, port::TABLE_READ),
            (3, 0, port::TABLE_READ),
            (0, 0, 3),
        ] {
            assert!(
                t.table_cmd(table, index, cmd).is_empty(),
                "{table} {index} {cmd}"
            );
            assert_eq!(t.read(port::TABLE_CMD), 2, "{table} {index} {cmd}");
        }
        // a QP entry round trip (no overlay)
        let qp: Vec<u8> = (0..64).map(|i| (i * 7) as u8).collect();
        for (w, v) in words(&qp).into_iter().enumerate() {
            t.write(port::TABLE_DATA + 4 * w as u32, v);
        }
        assert_eq!(t.table_cmd(1, 9, port::TABLE_WRITE).len(), 1);
        assert_eq!(t.table_cmd(2, 9, port::TABLE_WRITE).len(), 1);
        for w in 0..16 {
            t.write(port::TABLE_DATA + 4 * w, 0);
        }
        t.table_cmd(1, 9, port::TABLE_READ);
        let got: Vec<u8> = (0..16)
            .flat_map(|w| t.read(port::TABLE_DATA + 4 * w).to_le_bytes())
            .collect();
        assert_eq!(got, qp);
        assert_eq!(t.read(port::TABLE_SEL), 1 << 24 | 9);
    }

    /// Raw TX: the frame comes out whole under random `ready`; sends while
    /// busy, bad lengths and buffer writes while sending are ignored.
    #[test]
    fn raw_tx() {
        let mut t = Tb::new();
        let mut rng = Rng::new(7);
        for len in [1usize, 7, 8, 9, 60, 77, 1514, 2048] {
            let f = rng.bytes(len);
            for (w, v) in words(&f).into_iter().enumerate() {
                t.write(port::TX_DATA + 4 * w as u32, v);
            }
            t.write(port::TX_SEND, 0);
            t.write(port::TX_SEND, 2049);
            assert!(!t.0.raw_tx_valid.val(), "bad lengths are ignored");
            t.write(port::TX_SEND, len as u32);
            assert_eq!(t.read(port::TX_SEND), 1 << 31);
            // ignored while busy
            t.write(port::TX_DATA, 0xDEAD_BEEF);
            t.write(port::TX_SEND, 3);
            let mut got = Vec::new();
            let mut cycles = 0;
            loop {
                let ready = rng.below(3) != 0;
                t.0.raw_tx_ready.next = ready;
                let (v, last) = (t.0.raw_tx_valid.val(), t.0.raw_tx_last.val());
                if v && ready {
                    let k = t.0.raw_tx_keep.val().to_u64() as usize;
                    assert!(k == 8 || last);
                    let d = t.0.raw_tx_data.val().to_u64().to_le_bytes();
                    got.extend_from_slice(&d[..k]);
                }
                tick!(t.0);
                cycles += 1;
                assert!(cycles < 2000, "frame did not finish");
                if v && ready && last {
                    break;
                }
            }
            t.0.raw_tx_ready.next = false;
            assert_eq!(got, f, "len {len}");
            assert!(!t.0.raw_tx_valid.val());
            assert_eq!(t.read(port::TX_SEND), 0);
        }
        // back to back at full rate: one beat per clock
        let f = rng.bytes(64);
        for (w, v) in words(&f).into_iter().enumerate() {
            t.write(port::TX_DATA + 4 * w as u32, v);
        }
        t.0.raw_tx_ready.next = true;
        t.write(port::TX_SEND, 64);
        let mut n = 0;
        while t.0.raw_tx_valid.val() {
            n += 1;
            tick!(t.0);
        }
        assert_eq!(n, 8);
    }

    /// `RX_INJECT`: the buffer comes out whole on `inj_*` under random
    /// `inj_ready`, never on `raw_tx_*`; a `TX_SEND` while it runs is
    /// ignored (one buffer, one busy bit); the next `TX_SEND` goes out on
    /// `raw_tx_*` again, not on `inj_*`.
    #[test]
    fn rx_inject() {
        let mut t = Tb::new();
        let mut rng = Rng::new(11);
        for len in [1usize, 60, 77, 1514] {
            let f = rng.bytes(len);
            for (w, v) in words(&f).into_iter().enumerate() {
                t.write(port::TX_DATA + 4 * w as u32, v);
            }
            t.write(port::RX_INJECT, 2049);
            assert!(!t.0.inj_valid.val(), "bad lengths are ignored");
            t.write(port::RX_INJECT, len as u32);
            assert_eq!(t.read(port::RX_INJECT), 1 << 31);
            assert_eq!(t.read(port::TX_SEND), 1 << 31, "one busy bit");
            t.write(port::TX_SEND, 8);
            let mut got = Vec::new();
            let mut cycles = 0;
            loop {
                let ready = rng.below(3) != 0;
                t.0.inj_ready.next = ready;
                t.0.raw_tx_ready.next = true;
                assert!(!t.0.raw_tx_valid.val(), "nothing on raw_tx");
                let (v, last) = (t.0.inj_valid.val(), t.0.inj_last.val());
                if v && ready {
                    let k = t.0.inj_keep.val().to_u64() as usize;
                    assert!(k == 8 || last);
                    let d = t.0.inj_data.val().to_u64().to_le_bytes();
                    got.extend_from_slice(&d[..k]);
                }
                tick!(t.0);
                cycles += 1;
                assert!(cycles < 1000, "frame did not finish");
                if v && ready && last {
                    break;
                }
            }
            t.0.inj_ready.next = false;
            assert_eq!(got, f, "len {len}");
            assert!(!t.0.inj_valid.val() && !t.0.raw_tx_valid.val());
            assert_eq!(t.read(port::RX_INJECT), 0);
        }
        // a send after an injection leaves on raw_tx_*
        t.write(port::TX_SEND, 16);
        assert!(t.0.raw_tx_valid.val() && !t.0.inj_valid.val());
    }

    /// Exceptions, mailbox, events, flush, configuration and time.
    #[test]
    fn queues_and_registers() {
        let mut t = Tb::new();
        // exception head
        t.0.exc_valid.next = true;
        t.0.exc_reason.next = 4.into();
        t.0.exc_len.next = 60.into();
        t.0.exc_conn.next = 0xFFFF_FFFF_u64.into();
        assert_eq!(t.read(port::EXC_STATUS), 1 << 31 | 4 << 16 | 60);
        assert_eq!(t.read(port::EXC_CONN), 0xFFFF_FFFF);
        t.set(port::EXC_DATA + 4 * 9, 0, false);
        t.settle();
        assert!(t.0.exc_rd_sel.val());
        assert_eq!(t.0.exc_rd_word.val().to_u64(), 9);
        tick!(t.0);
        t.idle();
        t.0.exc_rd_data.next = 0xCAFE.into();
        t.settle();
        // the queue answers one clock later: the port forwards it as rdata
        assert!(t.0.fw_rvalid.val());
        assert_eq!(t.0.fw_rdata.val().to_u64(), 0xCAFE);
        t.set(port::EXC_POP, 1, true);
        t.settle();
        assert!(t.0.exc_pop.val());
        tick!(t.0);
        t.idle();
        t.settle();
        assert!(!t.0.exc_pop.val());
        // TX log replay request and status registers
        t.set(port::RETX_CONN, 37, true);
        t.settle();
        assert!(t.0.retx_valid.val());
        assert_eq!(t.0.retx_conn.val().to_u64(), 37);
        tick!(t.0);
        t.idle();
        t.settle();
        assert!(!t.0.retx_valid.val());
        t.set(port::RETX_CONN, 256, true);
        t.settle();
        assert!(!t.0.retx_valid.val(), "connection >= 256 ignored");
        tick!(t.0);
        t.idle();
        t.0.retx_status.next = 0x0003_0001.into();
        t.0.retx_count.next = 11.into();
        t.0.retx_full.next = 12.into();
        t.0.retx_empty.next = 13.into();
        t.0.retx_busy.next = 14.into();
        t.0.retx_lost.next = 15.into();
        assert_eq!(t.read(port::RETX_STATUS), 0x0003_0001);
        assert_eq!(t.read(port::RETX_COUNT), 11);
        assert_eq!(t.read(port::RETX_FULL), 12);
        assert_eq!(t.read(port::RETX_EMPTY), 13);
        assert_eq!(t.read(port::RETX_BUSY), 14);
        assert_eq!(t.read(port::RETX_LOST), 15);
        // mailbox
        assert!(!t.0.fw_ready.val());
        assert_eq!(t.read(port::MBOX_CMD), 0);
        assert!(t.0.fw_ready.val());
        t.0.mb_busy.next = true;
        t.0.mb_opcode.next = 0x12.into();
        t.0.mb_len.next = 44.into();
        assert_eq!(t.read(port::MBOX_CMD), 1 << 31 | 0x12);
        assert_eq!(t.read(port::MBOX_LEN), 44);
        t.set(port::MBOX_DATA + 8, 0x55, true);
        t.settle();
        assert!(t.0.mb_fw_write.val());
        assert_eq!(t.0.mb_fw_addr.val().to_u64(), 2);
        tick!(t.0);
        t.idle();
        t.write(port::MBOX_LEN, 12);
        t.set(port::MBOX_DONE, 7, true);
        t.settle();
        assert!(t.0.mb_done.val());
        assert_eq!(t.0.mb_done_status.val().to_u64(), 7);
        assert_eq!(t.0.mb_done_len.val().to_u64(), 12);
        tick!(t.0);
        t.idle();
        t.settle();
        assert!(!t.0.mb_done.val());
        // events
        let ev: Vec<u8> = (0..64).map(|i| (200 - i) as u8).collect();
        for (w, v) in words(&ev).into_iter().enumerate() {
            t.write(port::EVENT_DATA + 4 * w as u32, v);
        }
        assert_eq!(t.read(port::EVENT_PUSH), 0);
        t.write(port::EVENT_PUSH, 1);
        assert!(t.0.ev_valid.val());
        assert_eq!(to_bytes(&t.0.ev_data.val()), ev);
        assert_eq!(t.read(port::EVENT_PUSH), 1, "full");
        t.write(port::EVENT_DATA, 0); // ignored while full
        assert_eq!(to_bytes(&t.0.ev_data.val()), ev);
        t.0.ev_ready.next = true;
        tick!(t.0);
        t.0.ev_ready.next = false;
        assert!(!t.0.ev_valid.val());
        assert_eq!(t.read(port::EVENT_PUSH), 0);
        // flush
        t.write(port::FLUSH_QP, 33);
        assert!(t.0.flush_valid.val());
        assert_eq!(t.0.flush_qpn.val().to_u64(), 33);
        tick!(t.0);
        assert!(!t.0.flush_valid.val());
        // configuration mirror, clock, cycles
        t.0.cfg_mac.next = 0x0605_0403_0201_u64.into();
        t.0.cfg_ipv4.next = 0x0A00_0001.into();
        t.0.cfg_netmask.next = 0xFFFF_FF00_u64.into();
        t.0.cfg_gateway.next = 0x0A00_00FE.into();
        t.0.cfg_mtu.next = 1500.into();
        assert_eq!(t.read(port::CFG_MAC_LO), 0x0403_0201);
        assert_eq!(t.read(port::CFG_MAC_HI), 0x0605);
        assert_eq!(t.read(port::CFG_IPV4), 0x0A00_0001);
        assert_eq!(t.read(port::CFG_NETMASK), 0xFFFF_FF00);
        assert_eq!(t.read(port::CFG_GATEWAY), 0x0A00_00FE);
        assert_eq!(t.read(port::CFG_MTU), 1500);
        assert_eq!(t.read(port::CLOCK_KHZ), 156_250);
        assert_eq!(CORE_PARAMS.clock_khz, 156_250);
        t.0.cycles.next = 0x0000_0007_0000_0010_u64.into();
        assert_eq!(t.read(port::CYCLES_LO), 0x10);
        t.0.cycles.next = 0x0000_0008_0000_0011_u64.into();
        assert_eq!(t.read(port::CYCLES_HI), 7, "latched by the _LO read");
        // unknown and write-only offsets read 0
        for a in [
            0x01C,
            0x044,
            0x068,
            0x180,
            port::TX_DATA,
            port::EVENT_DATA,
            port::RX_INJECT,
            0x2000,
            // unaligned offsets of registers that hold non-zero values
            port::CFG_MAC_LO + 1,
            port::CFG_MTU + 2,
            port::CLOCK_KHZ + 3,
        ] {
            assert_eq!(t.read(a), 0, "{a:#x}");
        }
    }

    /// Terminate requests: the head's fields and its 48-octet echo read
    /// through `TERM_*`, `TERM_POP` pops it in the same clock (and only a
    /// write of 1 there does). Reference: the cause bits of
    /// `rnic_wire::terminate` and the octets of a DDP header emitted by
    /// `rnic_wire::ddp`.
    #[test]
    fn terminate_requests() {
        use rnic_wire::ddp::DdpRepr;
        use rnic_wire::terminate::{TaggedBufferError, TerminateCause};
        let mut t = Tb::new();
        assert_eq!(t.read(port::TERM_STATUS), 0, "nothing to send");
        let cause = TerminateCause::from(TaggedBufferError::InvalidStag).to_bits();
        let ddp = DdpRepr::Untagged {
            last: true,
            rsvd_ulp: 0x41,
            rsvd_ulp_ext: 0,
            qn: 0,
            msn: 0x0102_0304,
            mo: 0x0A0B_0C0D,
        };
        let mut echo = [0u8; port::TERM_HDR_LEN];
        ddp.emit(&mut echo).unwrap();
        for (i, b) in echo.iter_mut().enumerate().skip(18) {
            *b = 0x80 | i as u8;
        }
        let mut hdr = Bits::<384>::default();
        for (i, b) in echo.iter().enumerate() {
            hdr = hdr | (bit_cast::<384, 8>((*b as u64).into()) << (8 * i as u64));
        }
        t.0.term_valid.next = true;
        t.0.term_cause.next = (cause as u64).into();
        t.0.term_conn.next = 7.into();
        t.0.term_qpn.next = 0x21.into();
        t.0.term_seg_len.next = 274.into();
        t.0.term_hdr.next = hdr;
        assert_eq!(t.read(port::TERM_STATUS), 1 << 31 | cause as u32);
        assert_eq!(t.read(port::TERM_CONN), 7);
        assert_eq!(t.read(port::TERM_QPN), 0x21);
        assert_eq!(t.read(port::TERM_SEG_LEN), 274);
        let got: Vec<u8> = (0..12)
            .flat_map(|w| t.read(port::TERM_HDR + 4 * w).to_le_bytes())
            .collect();
        assert_eq!(got, echo);
        // only a write of 1 to TERM_POP pops, in the clock of the write
        for (addr, v) in [
            (port::TERM_POP, 0),
            (port::TERM_STATUS, 1),
            (port::EXC_POP, 1),
        ] {
            t.set(addr, v, true);
            t.settle();
            assert!(!t.0.term_pop.val(), "{addr:#x} {v}");
            tick!(t.0);
            t.idle();
        }
        t.set(port::TERM_POP, 1, true);
        t.settle();
        assert!(t.0.term_pop.val());
        tick!(t.0);
        t.idle();
        t.settle();
        assert!(!t.0.term_pop.val());
        t.0.term_valid.next = false;
        assert_eq!(t.read(port::TERM_STATUS) >> 31, 0);
    }

    /// The limit registers read back each profile's sizes
    /// (`profile::PROFILES`), and the board's port refuses a table write at
    /// the first index past its smaller connection table and page list
    /// while taking the last one inside them.
    #[test]
    fn limit_registers_report_the_profile() {
        use crate::profile::{BOARD, PR_BOARD, SIM};
        fn check<const PR: usize>(p: &crate::profile::Profile) {
            let mut t = TbN::<PR>::new();
            assert_eq!(t.read(port::LIM_CONN), 1 << p.conn_log2, "{}", p.name);
            assert_eq!(t.read(port::LIM_CONN), p.fw.n_conn);
            assert_eq!(t.read(port::LIM_QP), p.fw.n_qp);
            assert_eq!(t.read(port::LIM_CQ), p.fw.n_cq);
            assert_eq!(t.read(port::LIM_TPT), 1 << p.tpt_log2);
            assert_eq!(t.read(port::LIM_TPT), p.fw.n_tpt);
            assert_eq!(t.read(port::LIM_PBL), 1 << p.pbl_log2);
            assert_eq!(t.read(port::LIM_PBL), p.fw.n_pbl);
            assert_eq!(t.read(port::LIM_MTU), p.fw.max_mtu);
            assert_eq!(t.read(port::CLOCK_KHZ), p.fw.clock_khz);
            // the frame buffers take a frame of the reported MTU
            assert!(p.fw.max_mtu as u64 + crate::profile::ETH_FRAME_OVERHEAD <= p.max_frame);
        }
        check::<{ crate::profile::PR_SIM }>(&SIM);
        check::<PR_BOARD>(&BOARD);
        assert_eq!(BOARD.fw.clock_khz, 62_500, "the board's core clock");
        let mut t = TbN::<PR_BOARD>::new();
        for (table, n) in [
            (TableId::Conn, 1u32 << BOARD.conn_log2),
            (TableId::Pbl, 512),
        ] {
            let size = table.entry_size();
            let data = vec![0u8; size];
            for (index, ok) in [(n - 1, true), (n, false)] {
                for (k, w) in words(&data).iter().enumerate() {
                    t.write(port::TABLE_DATA + 4 * k as u32, *w);
                }
                t.table_cmd(table as u32, index, port::TABLE_WRITE);
                let err = t.read(port::TABLE_CMD) & 2 != 0;
                assert_eq!(err, !ok, "{table:?} index {index}");
            }
        }
    }
}
