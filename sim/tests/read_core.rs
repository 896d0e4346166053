//! The RDMA Read responder inside `rnic_core` (Verilator): `rreq_queue` on
//! `ddp_rx`'s untagged stream, `read_resp` with the shared TPT check unit,
//! the fourth DMA read client and the stream hand-over from `tx_seg`.
//!
//! The firmware programs a connection in RDMA mode, a QP (IRD, PD,
//! rx_read_msn) and the Data Source region (TPT entry + scattered page
//! list) through `fw_*`; the peer's Read Requests are built with
//! `rnic_wire::model::TxStream` (`Message::ReadRequest`) and framed with
//! `model::net::data_frame` into `mac_rx_*`.
//!
//! Checked against independent references: every frame on `mac_tx_*`
//! parses with smoltcp (`parse_frame`, checksums checked); the TCP payloads
//! are fed, in order, into the wire model's `Receiver` (the peer side: MPA
//! CRC and markers, DDP/RDMAP headers, TO continuity, L on the last segment,
//! Read Responses matched in order with `expect_read_response`), whose sink
//! regions must end up equal to the source octets (host memory through
//! `TptEntry::page_of`); a TPT violation (no Remote Read right) gives one
//! Terminate record with RDMAP Remote Protection "Access rights violation"
//! (0/1/2, RFC 5040 §7) and no Read Response.

mod core_rig;

use std::cell::RefCell;
use std::rc::Rc;

use rnic_fw::hal::{Hal, HalExt};
use rnic_sim::dma::{DmaConfig, DmaServer};
use rnic_sim::fw_hal::{CoSimHal, FwNode};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::mac_port::MacTxPort;
use rnic_sim::rng::Rng;
use rnic_wire::abi::context::{
    ConnContext, ConnMode, QpContext, RtrKind, TableId, MPA_CRC_RX, MPA_CRC_TX, MPA_MARKERS_RX,
    MPA_MARKERS_TX,
};
use rnic_wire::abi::mailbox::QpState;
use rnic_wire::abi::tpt::{
    Stag, TptEntry, TptState, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, TPT_ENTRY_SIZE,
};
use rnic_wire::model::net::data_frame;
use rnic_wire::model::{
    parse_frame, Endpoint, Event, Message, MpaSettings, Receiver, RxConfig, Tpt, TxStream,
};
use rnic_wire::rdmap::ReadRequestRepr;
use rnic_wire::terminate::{RemoteProtectionError, TerminateCause};

const CONN: u32 = 2;
const QPN: u32 = 11;
const PD: u32 = 3;
const PEER_PD: u32 = 9;
const ISS: u32 = 0xFFFF_F000;
const PAGE: u64 = 4096;

struct Rig {
    node: Rc<RefCell<FwNode>>,
    hal: CoSimHal,
    dma: DmaServer,
    mem: HostMemory,
    mac: MacTxPort,
    rng: Rng,
    local: Endpoint,
    peer: Endpoint,
    peer_tx: TxStream,
    /// The peer's receiver of our stream (the reference).
    peer_rx: Receiver,
    /// Source regions: (entry, its pages' bus addresses in PBL order).
    regions: Vec<(TptEntry, u32, Vec<u64>)>,
    pbl_next: u32,
    frames: usize,
    events: Vec<Event>,
    terms: Vec<(u16, u32, u32)>,
    first_tx: Option<u64>,
    last_tx: u64,
    last_rx: u64,
}

impl Rig {
    fn new(seed: u64, markers: bool) -> Rig {
        let node = FwNode::shared();
        {
            let mut n = node.borrow_mut();
            n.serve_host_side = false;
            n.set_ulp(true);
            n.core.set_fw_raw_to_mac(1);
        }
        let mut rng = Rng::new(seed);
        let peer_iss = rng.next_u32();
        let ours = MpaSettings {
            crc: true,
            markers,
            seq_start: ISS,
        };
        let theirs = MpaSettings {
            crc: true,
            markers,
            seq_start: peer_iss,
        };
        let mut r = Rig {
            hal: CoSimHal::new(node.clone()),
            node,
            dma: DmaServer::new(DmaConfig {
                read_jitter: 25,
                seed,
                ..DmaConfig::default()
            }),
            mem: HostMemory::new(0x1_0000_0000, 0x2_0000_0000),
            mac: MacTxPort::new(),
            rng,
            local: Endpoint {
                mac: [2, 0, 0, 0, 0, 1],
                ip: [10, 0, 0, 1],
                port: 7100,
            },
            peer: Endpoint {
                mac: [2, 0, 0, 0, 0, 2],
                ip: [10, 0, 0, 2],
                port: 40100,
            },
            peer_tx: TxStream::new(theirs, 1460),
            peer_rx: Receiver::new(
                RxConfig {
                    mpa: ours,
                    pd: PEER_PD,
                    ird: 0,
                },
                Tpt::new(),
            ),
            regions: Vec::new(),
            pbl_next: 0,
            frames: 0,
            events: Vec::new(),
            terms: Vec::new(),
            first_tx: None,
            last_tx: 0,
            last_rx: 0,
        };
        let mk = if markers {
            MPA_MARKERS_RX | MPA_MARKERS_TX
        } else {
            0
        };
        let q = QpContext {
            state: QpState::Rts,
            flags: 0,
            rtr: RtrKind::None,
            sq_log2: 2,
            pd: PD,
            send_cqn: 0,
            recv_cqn: 0,
            sq_ring: 0x1_0000_0000,
            rq_ring: 0,
            rq_log2: 0,
            conn: CONN,
            ird: 4,
            ord: 1,
            tx_send_msn: 1,
            tx_read_msn: 1,
            rx_send_msn: 1,
            rx_read_msn: 1,
            term_cause: 0,
        };
        r.hal.write_qp(QPN, &q).expect("QP write");
        let c = ConnContext {
            mode: ConnMode::Rdma,
            mpa_flags: MPA_CRC_RX | MPA_CRC_TX | mk,
            snd_wscale: 0,
            rcv_wscale: 0,
            local_ip: u32::from_be_bytes(r.local.ip),
            peer_ip: u32::from_be_bytes(r.peer.ip),
            local_port: r.local.port,
            peer_port: r.peer.port,
            local_mac: r.local.mac,
            peer_mac: r.peer.mac,
            mss: 1460,
            mulpdu: 1440,
            rcv_nxt: peer_iss,
            snd_nxt: ISS,
            snd_una: ISS,
            snd_wnd: 1 << 20,
            rcv_wnd: 1 << 20,
            tx_marker_ref: ISS,
            rx_marker_ref: peer_iss,
            qpn: QPN,
        };
        r.hal.write_conn(CONN, &c).expect("connection write");
        r
    }

    /// Registers a region of `npages` scattered 4 KiB pages filled with
    /// random octets, starting `first_off` into the first; returns its STag.
    fn region(
        &mut self,
        index: u32,
        key: u8,
        access: u8,
        va_page: u64,
        first_off: u64,
        npages: u32,
    ) -> u32 {
        let mut pages = Vec::new();
        for _ in 0..npages {
            let a = self.mem.alloc_dma(2 * PAGE, PAGE).unwrap();
            let d = self.rng.bytes(PAGE as usize);
            self.mem.write(a, &d).unwrap();
            pages.push(a);
        }
        for i in (1..pages.len()).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            pages.swap(i, j);
        }
        let base = self.pbl_next;
        for (i, &a) in pages.iter().enumerate() {
            self.hal
                .write_table(TableId::Pbl, base + i as u32, &a.to_le_bytes())
                .expect("PBL write");
        }
        self.pbl_next += npages;
        let e = TptEntry {
            state: TptState::Valid,
            key,
            access,
            page_shift: 12,
            pd: PD,
            va: va_page + first_off,
            length: npages as u64 * PAGE - first_off,
            pbl_base: base,
            npages,
        };
        let mut b = [0u8; TPT_ENTRY_SIZE];
        e.emit(&mut b).unwrap();
        self.hal
            .write_table(TableId::Tpt, index, &b)
            .expect("TPT write");
        self.regions.push((e, base, pages));
        Stag::new(index, key).unwrap().0
    }

    /// The source octets at `va` of region `ri` (host memory via page_of).
    fn source(&self, ri: usize, va: u64, len: usize) -> Vec<u8> {
        let (e, base, pages) = &self.regions[ri];
        (0..len)
            .map(|i| {
                let (pg, off) = e.page_of(va + i as u64).unwrap();
                let mut b = [0u8];
                self.mem
                    .read(pages[(pg - base) as usize] + off, &mut b)
                    .unwrap();
                b[0]
            })
            .collect()
    }

    /// The peer reads `len` octets at `src_to` of `src_stag` into a fresh
    /// sink of its own (registered in the reference receiver).
    fn request(
        &mut self,
        sink_stag: u32,
        src_stag: u32,
        src_to: u64,
        len: u32,
        answered: bool,
    ) -> ReadRequestRepr {
        let sink_to = 0x9000_0000_0000 + self.rng.below(1 << 20);
        let rr = ReadRequestRepr {
            sink_stag,
            sink_to,
            size: len,
            src_stag,
            src_to,
        };
        if answered {
            self.peer_rx.tpt_mut().register(
                sink_stag,
                PEER_PD,
                ACCESS_LOCAL_WRITE,
                sink_to,
                vec![0; len as usize],
            );
            self.peer_rx.expect_read_response(rr);
        }
        let segs = self.peer_tx.send(&Message::ReadRequest(rr)).unwrap();
        let mut n = self.node.borrow_mut();
        for s in segs {
            let f = data_frame(&self.peer, &self.local, s.seq, ISS, &s.payload);
            n.mac_rx.push(f, false);
        }
        rr
    }

    fn run(&mut self, limit: u64) {
        core_rig::until_quiet(limit, 800, || {
            let s = core_rig::clock(
                &self.node,
                &mut self.mac,
                &mut self.dma,
                &mut self.mem,
                &mut self.terms,
                None,
            );
            if s.sending {
                self.last_rx = s.cycle;
            }
            let busy = s.sending || s.dma_busy || s.mac_tx;
            let cyc = s.cycle;
            if let Some(f) = s.frame {
                let v = parse_frame(&f).expect("frame parses with smoltcp, checksums good");
                assert_eq!(v.tuple.src_port, self.local.port);
                assert_eq!(v.tuple.dst_port, self.peer.port);
                assert_eq!(v.dst_mac, self.peer.mac);
                if !v.payload.is_empty() {
                    self.frames += 1;
                    self.first_tx.get_or_insert(cyc);
                    self.last_tx = cyc;
                    let ev = self
                        .peer_rx
                        .receive(v.seq, v.payload)
                        .expect("our stream, in order");
                    for e in &ev {
                        assert!(
                            !matches!(e, Event::SendTerminate(_)),
                            "the reference receiver refused our stream: {e:?}"
                        );
                    }
                    self.events.extend(ev);
                }
            }
            busy
        });
        assert!(
            self.dma.faults().is_empty(),
            "DMA faults {:?}",
            self.dma.faults()
        );
    }

    fn completed(&self) -> usize {
        self.events
            .iter()
            .filter(|e| matches!(e, Event::ReadResponseCompleted { .. }))
            .count()
    }

    fn sink(&self, stag: u32) -> Vec<u8> {
        self.peer_rx.tpt().region(stag).unwrap().bytes.clone()
    }

    fn cnt(&self) -> [u64; 7] {
        let n = self.node.borrow();
        [
            n.core.get_cnt_rrq_req(),
            n.core.get_cnt_rrq_drop(),
            n.core.get_cnt_rrq_term(),
            n.core.get_cnt_rresp(),
            n.core.get_cnt_rresp_segs(),
            n.core.get_cnt_rresp_term(),
            n.core.get_cnt_rresp_drop(),
        ]
    }
}

fn responses_byte_exact(markers: bool, seed: u64) {
    let t0 = std::time::Instant::now();
    let mut r = Rig::new(seed, markers);
    let va_page = 0x0000_5000_0000_0000;
    let src = r.region(5, 0x77, ACCESS_REMOTE_READ, va_page, 0x1a3, 4);
    let base = r.regions[0].0.va;
    // latency: one 64-octet Read alone, last Read Request beat in → first
    // Read Response beat out (TPT check, stream grant, DMA read, framer)
    let sink = Stag::new(39, 0x0f).unwrap().0;
    let rr = r.request(sink, src, base + 8, 64, true);
    r.run(200_000);
    assert_eq!(r.sink(sink), r.source(0, base + 8, 64));
    eprintln!(
        "read_core (markers {markers}): 64-octet Read: last request beat in -> first response beat out {} clocks (DMA read latency included)",
        r.first_tx.unwrap() - r.last_rx
    );
    let _ = rr;
    r.first_tx = None;
    r.frames = 0;
    // sizes: one octet, one segment, several (MULPDU), across pages
    let cases: [(u64, u32); 4] = [(0, 1), (17, 100), (500, 3000), (2000, 12000)];
    let mut reqs = Vec::new();
    for (k, &(off, len)) in cases.iter().enumerate() {
        let sink = Stag::new(40 + k as u32, 0x10 + k as u8).unwrap().0;
        let rr = r.request(sink, src, base + off, len, true);
        reqs.push((rr, off));
    }
    r.run(2_000_000);
    assert!(r.terms.is_empty(), "no Terminate: {:x?}", r.terms);
    assert_eq!(r.completed(), cases.len() + 1, "Read Responses completed");
    for (rr, off) in &reqs {
        let want = r.source(0, base + off, rr.size as usize);
        assert_eq!(
            r.sink(rr.sink_stag),
            want,
            "Read of {} octets at +{off}: sink differs",
            rr.size
        );
    }
    let c = r.cnt();
    assert_eq!(c[0], 5, "requests queued");
    assert_eq!(c[3], 5, "responses");
    assert_eq!((c[1], c[2], c[5], c[6]), (0, 0, 0, 0));
    assert_eq!(c[4] as usize, r.frames + 1, "one segment per frame");
    let n = r.node.borrow();
    assert_eq!(n.core.get_cnt_dma_rd_cpl_bad(), 0);
    assert_eq!(n.core.get_cnt_tx_desc_drop(), 0);
    let octets: u32 = cases.iter().map(|c| c.1).sum();
    let clocks = r.last_tx - r.first_tx.unwrap();
    eprintln!(
        "read_core (markers {markers}): {} Read Responses, {octets} octets in {} frames; first to last response beat {clocks} clocks ({:.2} Gb/s at 156.25 MHz); {} clocks in {:.2} s",
        cases.len(),
        r.frames,
        octets as f64 * 8.0 * 156.25e6 / clocks as f64 / 1e9,
        n.core.cycle(),
        t0.elapsed().as_secs_f64()
    );
}

#[test]
fn read_responses_byte_exact_crc() {
    responses_byte_exact(false, 0x5eed);
}

#[test]
fn read_responses_byte_exact_crc_markers() {
    responses_byte_exact(true, 0xbeef);
}

/// A Read Request for a region without the Remote Read right: RDMAP Remote
/// Protection "Access rights violation" (0/1/2), no Read Response; the QP
/// answers nothing more from then on (RFC 5040 §5.1, until its context is
/// written again): a good Read Request is dropped and counted.
#[test]
fn tpt_violation_terminates_without_response() {
    let mut r = Rig::new(0x7e, false);
    let ro = r.region(6, 0x21, ACCESS_LOCAL_WRITE, 0x6000_0000, 0, 1);
    let good = r.region(7, 0x22, ACCESS_REMOTE_READ, 0x7000_0000, 0, 1);
    r.request(Stag::new(50, 1).unwrap().0, ro, 0x6000_0000, 64, false);
    r.run(500_000);
    let want = TerminateCause::from(RemoteProtectionError::AccessRightsViolation).to_bits();
    assert_eq!(r.terms, vec![(want, CONN, QPN)]);
    assert_eq!(r.frames, 0, "no Read Response");
    // the QP is stopped: a good request is dropped quietly
    r.request(Stag::new(51, 1).unwrap().0, good, 0x7000_0000, 64, false);
    r.run(500_000);
    assert_eq!(r.frames, 0);
    assert_eq!(r.terms.len(), 1);
    let c = r.cnt();
    assert_eq!((c[0], c[3], c[5], c[6]), (2, 0, 1, 1));
}
