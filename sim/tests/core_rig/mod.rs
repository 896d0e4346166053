//! Pieces shared by the core-level test rigs (a Verilated `rnic_core`
//! driven directly, no driver): the clock step of `read_core` and
//! `read_req_core` (MAC drive, DMA serve, Terminate/placement pops), their
//! run-until-quiet loop, the firmware-port QP/CQ/connection setup of
//! `read_req_core` and `send_cqe_core`, and the connection + QP table
//! writes of `tx_flow` and `tx_datapath`.
#![allow(dead_code)] // shared by several test binaries, each using a subset

use std::cell::RefCell;
use std::rc::Rc;

use rnic_fw::hal::HalExt;
use rnic_sim::dma::DmaServer;
use rnic_sim::fw_hal::{CoSimHal, FwNode};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::mac_port::MacTxPort;
use rnic_wire::abi::context::{ConnContext, ConnMode, CqContext, CqState, QpContext, RtrKind};
use rnic_wire::abi::mailbox::QpState;
use rnic_wire::abi::wqe::WQE_SIZE;
use rnic_wire::model::Endpoint;
use verilator_sys::rnic_core::Model;

/// `ConnMode::Rdma` on the core's `ct_wr_mode` pins.
pub const MODE_RDMA: u64 = 2;

/// What one clock of [`clock`] saw.
pub struct Step {
    /// A frame was being fed into `mac_rx_*`.
    pub sending: bool,
    /// The DMA server has work outstanding.
    pub dma_busy: bool,
    /// `mac_tx_valid` was high.
    pub mac_tx: bool,
    /// `dma_wr_valid` was high / a DMA write beat was taken.
    pub dma_wr_valid: bool,
    pub dma_wr_fire: bool,
    /// The clock the step sampled (before its tick).
    pub cycle: u64,
    /// The frame `mac_tx_*` finished on this clock.
    pub frame: Option<Vec<u8>>,
}

/// One clock of a firmware-port rig: feeds `mac_rx_*`, takes `mac_tx_*`
/// (always ready), serves DMA from `mem`, pops the Terminate and placement
/// records (into `terms` and, if given, `placed`).
pub fn clock(
    node: &Rc<RefCell<FwNode>>,
    mac: &mut MacTxPort,
    dma: &mut DmaServer,
    mem: &mut HostMemory,
    terms: &mut Vec<(u16, u32, u32)>,
    placed: Option<&mut Vec<(u32, u64, u16)>>,
) -> Step {
    let n = &mut *node.borrow_mut();
    let sending = n.mac_rx.pending() > 0;
    n.mac_rx.drive(&mut n.core);
    let p = &mut n.core.0;
    mac.drive_ready(p, true);
    dma.drive(p, mem);
    p.eval();
    let tv = p.get_term_valid() != 0;
    let pv = p.get_placed_valid() != 0;
    p.set_term_pop(tv as u64);
    p.set_placed_pop(pv as u64);
    if tv {
        terms.push((
            p.get_term_cause() as u16,
            p.get_term_conn() as u32,
            p.get_term_qpn() as u32,
        ));
    }
    if let (true, Some(placed)) = (pv, placed) {
        placed.push((
            p.get_placed_stag() as u32,
            p.get_placed_to(),
            p.get_placed_len() as u16,
        ));
    }
    p.eval();
    let step = Step {
        sending,
        dma_busy: !dma.idle(),
        mac_tx: p.get_mac_tx_valid() != 0,
        dma_wr_valid: p.get_dma_wr_valid() != 0,
        dma_wr_fire: p.get_dma_wr_valid() != 0 && p.get_dma_wr_ready() != 0,
        cycle: p.cycle(),
        frame: None,
    };
    let frame = mac.sample(&*p);
    dma.sample(&*p, mem);
    p.tick();
    Step { frame, ..step }
}

/// Calls `step` (which returns whether anything was busy) until it has
/// been quiet for `quiet_for` clocks in a row; panics "hung" after `limit`.
pub fn until_quiet(limit: u64, quiet_for: u32, mut step: impl FnMut() -> bool) {
    let mut quiet = 0;
    let mut c = 0;
    while quiet < quiet_for {
        c += 1;
        assert!(c < limit, "hung");
        quiet = if step() { 0 } else { quiet + 1 };
    }
}

/// A QP in Rts on connection `conn`, with its send CQ, written through the
/// firmware port as the firmware does (CQ, QP, then the connection).
pub struct FwQp {
    pub cqn: u32,
    pub cq_ring: u64,
    pub cq_log2: u32,
    pub cq_armed: u32,
    pub qpn: u32,
    pub sq_ring: u64,
    pub sq_log2: u32,
    pub pd: u32,
    pub ord: u16,
    pub conn: u32,
}

/// A connection context in RDMA mode (CRC both ways, no markers) from
/// `local` to `peer`: our stream starts at `iss`, theirs at `peer_iss`.
pub fn rdma_conn(
    local: &Endpoint,
    peer: &Endpoint,
    iss: u32,
    peer_iss: u32,
    rcv_wnd: u32,
    qpn: u32,
) -> ConnContext {
    use rnic_wire::abi::context::{MPA_CRC_RX, MPA_CRC_TX};
    ConnContext {
        mode: ConnMode::Rdma,
        mpa_flags: MPA_CRC_RX | MPA_CRC_TX,
        snd_wscale: 0,
        rcv_wscale: 0,
        local_ip: u32::from_be_bytes(local.ip),
        peer_ip: u32::from_be_bytes(peer.ip),
        local_port: local.port,
        peer_port: peer.port,
        local_mac: local.mac,
        peer_mac: peer.mac,
        mss: 1460,
        mulpdu: 1440,
        rcv_nxt: peer_iss,
        snd_nxt: iss,
        snd_una: iss,
        snd_wnd: 0x10000,
        rcv_wnd,
        tx_marker_ref: iss,
        rx_marker_ref: peer_iss,
        qpn,
    }
}

/// Writes `q`'s CQ, QP and the connection `c` through the firmware port.
pub fn setup_fw_qp(hal: &mut CoSimHal, q: &FwQp, c: &ConnContext) {
    let cq = CqContext {
        state: CqState::Valid,
        log2_entries: q.cq_log2 as u8,
        ring: q.cq_ring,
        producer: 0,
        consumer: 0,
        armed: q.cq_armed,
    };
    hal.write_cq(q.cqn, &cq).expect("CQ write");
    let qp = QpContext {
        state: QpState::Rts,
        flags: 0,
        rtr: RtrKind::None,
        sq_log2: q.sq_log2 as u8,
        pd: q.pd,
        send_cqn: q.cqn,
        recv_cqn: 0,
        sq_ring: q.sq_ring,
        rq_ring: 0,
        rq_log2: 0,
        conn: q.conn,
        ird: 1,
        ord: q.ord,
        tx_send_msn: 1,
        tx_read_msn: 1,
        rx_send_msn: 1,
        rx_read_msn: 1,
        term_cause: 0,
    };
    hal.write_qp(q.qpn, &qp).expect("QP write");
    hal.write_conn(q.conn, c).expect("connection write");
    register_identity_fw(hal, q.pd);
}

/// A connection on the core's `ct_wr_*` pins and a QP bound to it on
/// `qp_wr_*` (connection first, as the firmware does); `snd_wnd` is left
/// alone when `None`. Returns the SQ ring allocated in `mem`.
pub struct CtQp<'a> {
    pub qpn: u32,
    pub conn: u32,
    pub local: &'a Endpoint,
    pub peer: &'a Endpoint,
    pub mpa_flags: u64,
    pub rcv_nxt: u32,
    pub rcv_wnd: u32,
    pub seq_start: u32,
    pub snd_wnd: Option<u32>,
    pub mulpdu: u16,
    pub log2: u32,
}

/// The lkey of the identity region [`register_identity`] writes: TPT index
/// 0, key 0x77 (the lkey the raw-WQE tests have always used).
pub const IDENT_LKEY: u32 = 0x77;
/// The rigs' host memory, `HostMemory::new(IDENT_VA, IDENT_VA + IDENT_LEN)`.
pub const IDENT_VA: u64 = 0x1_0000_0000;
pub const IDENT_LEN: u64 = 0x1_0000_0000;
/// Page-list entries of the identity region (the table's last four).
pub const IDENT_PBL: u32 = 4092;

/// The identity region of a raw-WQE rig: lkey [`IDENT_LKEY`], every
/// access right, PD `pd`, `va` = bus address over the whole rig memory in
/// four 1 GiB pages, written on the core's `tpt_wr_*`/`pbl_wr_*` pins.
/// Send WQEs are checked through the TPT (docs/rtl.md "Send-side SGE
/// checks"); with 1 GiB pages no page end cuts a segment, so the tests'
/// `TxStream` references are unchanged.
pub fn register_identity(core: &mut Model, pd: u32) {
    use rnic_wire::abi::tpt::{Stag, TptEntry, TptState, ACCESS_ALL, TPT_ENTRY_SIZE};
    let e = TptEntry {
        state: TptState::Valid,
        key: Stag(IDENT_LKEY).key(),
        access: ACCESS_ALL,
        page_shift: 30,
        pd,
        va: IDENT_VA,
        length: IDENT_LEN,
        pbl_base: IDENT_PBL,
        npages: 4,
    };
    for i in 0..4u32 {
        core.set_pbl_wr_en(1);
        core.set_pbl_wr_index((IDENT_PBL + i) as u64);
        core.set_pbl_wr_data(IDENT_VA + ((i as u64) << 30));
        core.tick();
    }
    core.set_pbl_wr_en(0);
    let mut b = [0u8; TPT_ENTRY_SIZE];
    e.emit(&mut b).unwrap();
    let mut w = [0u32; 8];
    for (i, c) in b.chunks(4).enumerate() {
        w[i] = u32::from_le_bytes(c.try_into().unwrap());
    }
    core.set_tpt_wr_en(1);
    core.set_tpt_wr_index(Stag(IDENT_LKEY).index() as u64);
    core.set_tpt_wr_data(&w);
    core.tick();
    core.set_tpt_wr_en(0);
    core.tick();
}

/// [`register_identity`] through the firmware port (`TableId::Tpt`/`Pbl`).
pub fn register_identity_fw(hal: &mut CoSimHal, pd: u32) {
    use rnic_fw::hal::Hal;
    use rnic_wire::abi::context::TableId;
    use rnic_wire::abi::tpt::{Stag, TptEntry, TptState, ACCESS_ALL, TPT_ENTRY_SIZE};
    let e = TptEntry {
        state: TptState::Valid,
        key: Stag(IDENT_LKEY).key(),
        access: ACCESS_ALL,
        page_shift: 30,
        pd,
        va: IDENT_VA,
        length: IDENT_LEN,
        pbl_base: IDENT_PBL,
        npages: 4,
    };
    for i in 0..4u32 {
        let a = IDENT_VA + ((i as u64) << 30);
        hal.write_table(TableId::Pbl, IDENT_PBL + i, &a.to_le_bytes())
            .expect("page-list write");
    }
    let mut b = [0u8; TPT_ENTRY_SIZE];
    e.emit(&mut b).unwrap();
    hal.write_table(TableId::Tpt, Stag(IDENT_LKEY).index(), &b)
        .expect("TPT write");
}

pub fn write_ct_qp(core: &mut Model, mem: &mut HostMemory, q: &CtQp<'_>) -> u64 {
    let mac48 = |m: [u8; 6]| m.iter().fold(0u64, |a, &b| a << 8 | b as u64);
    let c = core;
    c.set_ct_wr_valid(1);
    c.set_ct_wr_idx(q.conn as u64);
    c.set_ct_wr_used(1);
    c.set_ct_wr_local_ip(u32::from_be_bytes(q.local.ip) as u64);
    c.set_ct_wr_peer_ip(u32::from_be_bytes(q.peer.ip) as u64);
    c.set_ct_wr_local_port(q.local.port as u64);
    c.set_ct_wr_peer_port(q.peer.port as u64);
    c.set_ct_wr_mode(MODE_RDMA);
    c.set_ct_wr_mpa(q.mpa_flags);
    c.set_ct_wr_rcv_nxt(q.rcv_nxt as u64);
    c.set_ct_wr_rcv_wnd(q.rcv_wnd as u64);
    c.set_ct_wr_rcv_wscale(0);
    c.set_ct_wr_snd_una(q.seq_start as u64);
    c.set_ct_wr_snd_nxt(q.seq_start as u64);
    if let Some(w) = q.snd_wnd {
        c.set_ct_wr_snd_wnd(w as u64);
        c.set_ct_wr_snd_wscale(0);
    }
    c.set_ct_wr_local_mac(mac48(q.local.mac));
    c.set_ct_wr_peer_mac(mac48(q.peer.mac));
    c.set_ct_wr_mulpdu(q.mulpdu as u64);
    c.set_ct_wr_tx_marker_ref(q.seq_start as u64);
    c.tick();
    c.set_ct_wr_valid(0);
    let ring = mem.alloc_dma((WQE_SIZE as u64) << q.log2, 4096).unwrap();
    c.set_qp_wr_valid(1);
    c.set_qp_wr_idx(q.conn as u64);
    c.set_qp_wr_qpn(q.qpn as u64);
    c.set_qp_wr_state(QpState::Rts as u64);
    c.set_qp_wr_pd(1);
    c.set_qp_wr_sq_ring(ring);
    c.set_qp_wr_sq_log2(q.log2 as u64);
    c.set_qp_wr_conn(q.conn as u64);
    c.set_qp_wr_tx_send_msn(1);
    c.set_qp_wr_tx_read_msn(1);
    c.tick();
    c.set_qp_wr_valid(0);
    c.tick();
    register_identity(c, 1);
    ring
}
