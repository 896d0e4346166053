//! The RDMA Read requester inside `rnic_core` (Verilator): the firmware
//! programs a connection in RDMA mode, a QP (ORD 2, `send_cqn`) and its send
//! CQ, and registers the Data Sink region (TPT entry + a scattered page
//! list) through `fw_*` (`rnic_fw::hal::Hal`); the host writes RDMA Read
//! WQEs (`SendWqe::emit`) and rings the SQ doorbell through BAR0.
//!
//! Checked against independent references:
//! * each Read Request frame parses with smoltcp (`rnic_wire::model::
//!   parse_frame`, checksums checked) and its TCP payload equals, octet for
//!   octet, what `rnic_wire::model::TxStream` emits for
//!   `Message::ReadRequest` (SinkSTag = SGE lkey, SinkTO = SGE address,
//!   RDMARDSZ = SGE length, SrcSTag/SrcTO = the WQE's remote fields,
//!   MSN on QN 1);
//! * the peer's Read Responses are built with `TxStream`
//!   (`Message::ReadResponse`, L only on the last segment, RFC 5040 §4.5)
//!   and `model::net::data_frame`; the data lands byte-exact at the page the
//!   ABI's `TptEntry::page_of` names, nothing else in the sink pages moves;
//! * one CQE per SIGNALED Read, written after its last Read Response was
//!   placed (RFC 5040 §5.3, Reads complete in order), parses with
//!   `Cqe::parse`: opcode `RdmaRead`, wr_id, `Success`, byte_len, QP, phase;
//!   no CQE for the unsignaled one;
//! * a Read Response with no Read outstanding → one Terminate record with
//!   RDMAP Remote Operation "Unexpected OpCode" (0/2/6, RFC 5040 §7) from
//!   `rnic_wire::terminate`, and no CQE.

mod core_rig;

use std::cell::RefCell;
use std::rc::Rc;

use rnic_fw::hal::Hal;
use rnic_sim::dma::{DmaConfig, DmaServer};
use rnic_sim::fw_hal::{CoSimHal, FwNode, HostCsr};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::mac_port::MacTxPort;
use rnic_sim::rng::Rng;
use rnic_wire::abi::context::TableId;
use rnic_wire::abi::cqe::{Cqe, WcOpcode, WcStatus, CQE_SIZE};
use rnic_wire::abi::csr::qp_doorbell_page;
use rnic_wire::abi::doorbell::QP_SQ_PRODUCER;
use rnic_wire::abi::tpt::{Stag, TptEntry, TptState, ACCESS_LOCAL_WRITE, TPT_ENTRY_SIZE};
use rnic_wire::abi::wqe::{SendOpcode, SendWqe, Sge, SgeList, WQE_FLAG_SIGNALED, WQE_SIZE};
use rnic_wire::model::net::data_frame;
use rnic_wire::model::{parse_frame, Endpoint, Message, MpaSettings, TxStream};
use rnic_wire::rdmap::ReadRequestRepr;
use rnic_wire::terminate::{RemoteOperationError, TerminateCause};

const CONN: u32 = 4;
const QPN: u32 = 9;
const CQN: u32 = 3;
const CQ_LOG2: u32 = 2;
const SQ_LOG2: u32 = 4;
const PD: u32 = 1;
/// Our initial send sequence number = TX SeqStart (RFC 5044 §4.3).
const ISS: u32 = 1000;
const PAGE: u64 = 4096;
/// Fill of the sink pages before the test: what is not placed must stay.
const FILL: u8 = 0xEE;

struct Rig {
    node: Rc<RefCell<FwNode>>,
    hal: CoSimHal,
    host: HostCsr,
    dma: DmaServer,
    mem: HostMemory,
    mac: MacTxPort,
    rng: Rng,
    local: Endpoint,
    peer: Endpoint,
    /// Reference of our TX stream (the Read Requests we must send).
    our_tx: TxStream,
    /// The peer's TX stream (its Read Responses).
    peer_tx: TxStream,
    sq: u64,
    sq_prod: u32,
    cq: u64,
    /// Sink region: entry, STag, its pages' bus addresses (PBL order).
    sink: TptEntry,
    sink_stag: u32,
    pages: Vec<u64>,
    /// Expected content of every sink page.
    image: Vec<Vec<u8>>,
    /// TCP payloads of our data frames, in order (pure ACKs skipped).
    sent: Vec<(u32, Vec<u8>)>,
    terms: Vec<(u16, u32, u32)>,
    placed: Vec<(u32, u64, u16)>,
    last_mac_rx: u64,
    last_wr: u64,
}

impl Rig {
    fn new(seed: u64) -> Rig {
        let node = FwNode::shared();
        {
            let mut n = node.borrow_mut();
            n.serve_host_side = false;
            n.set_ulp(true);
            n.core.set_fw_raw_to_mac(1);
        }
        let mut rng = Rng::new(seed);
        let peer_iss = rng.next_u32();
        let mpa_ours = MpaSettings {
            crc: true,
            markers: false,
            seq_start: ISS,
        };
        let mpa_peer = MpaSettings {
            crc: true,
            markers: false,
            seq_start: peer_iss,
        };
        let mut r = Rig {
            hal: CoSimHal::new(node.clone()),
            host: HostCsr { node: node.clone() },
            node,
            dma: DmaServer::new(DmaConfig {
                read_jitter: 20,
                seed,
                ..DmaConfig::default()
            }),
            mem: HostMemory::new(0x1_0000_0000, 0x2_0000_0000),
            mac: MacTxPort::new(),
            rng,
            local: Endpoint {
                mac: [2, 0, 0, 0, 0, 1],
                ip: [10, 0, 0, 1],
                port: 7000,
            },
            peer: Endpoint {
                mac: [2, 0, 0, 0, 0, 2],
                ip: [10, 0, 0, 2],
                port: 40000,
            },
            our_tx: TxStream::new(mpa_ours, 1460),
            peer_tx: TxStream::new(mpa_peer, 1460),
            sq: 0,
            sq_prod: 0,
            cq: 0,
            sink: TptEntry {
                state: TptState::Free,
                key: 0,
                access: 0,
                page_shift: 12,
                pd: PD,
                va: 0,
                length: 0,
                pbl_base: 0,
                npages: 0,
            },
            sink_stag: 0,
            pages: Vec::new(),
            image: Vec::new(),
            sent: Vec::new(),
            terms: Vec::new(),
            placed: Vec::new(),
            last_mac_rx: 0,
            last_wr: 0,
        };
        r.sq = r.mem.alloc_dma((WQE_SIZE as u64) << SQ_LOG2, 4096).unwrap();
        r.cq = r.mem.alloc_dma((CQE_SIZE as u64) << CQ_LOG2, 4096).unwrap();
        let q = core_rig::FwQp {
            cqn: CQN,
            cq_ring: r.cq,
            cq_log2: CQ_LOG2,
            cq_armed: 0,
            qpn: QPN,
            sq_ring: r.sq,
            sq_log2: SQ_LOG2,
            pd: PD,
            ord: 2,
            conn: CONN,
        };
        let c = core_rig::rdma_conn(&r.local, &r.peer, ISS, peer_iss, 1 << 20, QPN);
        core_rig::setup_fw_qp(&mut r.hal, &q, &c);
        r
    }

    /// Registers the Data Sink region (`ACCESS_LOCAL_WRITE`: what `ddp_rx`
    /// checks for a Read Response) over `npages` scattered 4 KiB pages,
    /// starting `first_off` octets into the first one.
    fn register_sink(&mut self, index: u32, key: u8, va_page: u64, first_off: u64, npages: u32) {
        for _ in 0..npages {
            // a gap page between each, and the page list in shuffled order
            let a = self.mem.alloc_dma(2 * PAGE, PAGE).unwrap();
            self.pages.push(a);
        }
        for i in (1..self.pages.len()).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            self.pages.swap(i, j);
        }
        for (i, &a) in self.pages.iter().enumerate() {
            self.mem.write(a, &[FILL; PAGE as usize]).unwrap();
            self.image.push(vec![FILL; PAGE as usize]);
            self.hal
                .write_table(TableId::Pbl, i as u32, &a.to_le_bytes())
                .expect("PBL write");
        }
        self.sink = TptEntry {
            state: TptState::Valid,
            key,
            access: ACCESS_LOCAL_WRITE,
            page_shift: 12,
            pd: PD,
            va: va_page + first_off,
            length: npages as u64 * PAGE - first_off,
            pbl_base: 0,
            npages,
        };
        let mut b = [0u8; TPT_ENTRY_SIZE];
        self.sink.emit(&mut b).unwrap();
        self.hal
            .write_table(TableId::Tpt, index, &b)
            .expect("TPT write");
        self.sink_stag = Stag::new(index, key).unwrap().0;
    }

    /// Writes an RDMA Read WQE (sink: `len` octets at VA `sink_va`; source:
    /// the peer's `src_stag`/`src_to`); returns its wr_id and the Read
    /// Request it must produce.
    fn post_read(
        &mut self,
        sink_va: u64,
        len: u32,
        src_stag: u32,
        src_to: u64,
        signaled: bool,
    ) -> (u64, ReadRequestRepr) {
        let wr_id = self.rng.next_u64();
        let wqe = SendWqe {
            wr_id,
            opcode: SendOpcode::RdmaRead,
            flags: if signaled { WQE_FLAG_SIGNALED } else { 0 },
            imm_or_inv: 0,
            remote_offset: src_to,
            remote_stag: src_stag,
            sges: SgeList::new(&[Sge {
                addr: sink_va,
                length: len,
                lkey: self.sink_stag,
            }])
            .unwrap(),
            inline: None,
        };
        let mut b = [0u8; WQE_SIZE];
        wqe.emit(&mut b).unwrap();
        let slot = (self.sq_prod & ((1 << SQ_LOG2) - 1)) as u64;
        self.mem
            .write(self.sq + slot * WQE_SIZE as u64, &b)
            .unwrap();
        self.sq_prod = self.sq_prod.wrapping_add(1);
        (
            wr_id,
            ReadRequestRepr {
                sink_stag: self.sink_stag,
                sink_to: sink_va,
                size: len,
                src_stag,
                src_to,
            },
        )
    }

    fn doorbell(&mut self) {
        {
            let mut n = self.node.borrow_mut();
            let m = &mut n.core.0;
            m.set_mac_tx_ready(0);
            m.set_dma_rd_req_ready(0);
            m.set_dma_rd_cpl_valid(0);
            m.set_dma_wr_ready(0);
        }
        let p = self.sq_prod;
        self.host.write(qp_doorbell_page(QPN) + QP_SQ_PRODUCER, p);
    }

    /// The peer answers `rr` with `data`: its Read Response segments into
    /// mac_rx; the expected sink image follows `TptEntry::page_of`.
    fn respond(&mut self, rr: &ReadRequestRepr, data: &[u8], expect_placed: bool) {
        let segs = self
            .peer_tx
            .send(&Message::ReadResponse {
                stag: rr.sink_stag,
                to: rr.sink_to,
                data,
            })
            .unwrap();
        let mut n = self.node.borrow_mut();
        for s in segs {
            let f = data_frame(&self.peer, &self.local, s.seq, ISS, &s.payload);
            n.mac_rx.push(f, false);
        }
        if expect_placed {
            for (i, &b) in data.iter().enumerate() {
                let (pg, off) = self.sink.page_of(rr.sink_to + i as u64).unwrap();
                self.image[pg as usize][off as usize] = b;
            }
        }
    }

    /// Clocks until the MAC input is sent and the core is quiet; pops every
    /// placed and Terminate record; collects our data frames.
    fn run(&mut self, limit: u64) {
        core_rig::until_quiet(limit, 600, || {
            let s = core_rig::clock(
                &self.node,
                &mut self.mac,
                &mut self.dma,
                &mut self.mem,
                &mut self.terms,
                Some(&mut self.placed),
            );
            if s.sending {
                self.last_mac_rx = s.cycle;
            }
            let mut busy = s.sending || s.dma_busy || s.mac_tx || s.dma_wr_valid;
            if s.dma_wr_fire {
                self.last_wr = s.cycle;
                busy = true;
            }
            if let Some(f) = s.frame {
                let v = parse_frame(&f).expect("frame parses with smoltcp, checksums good");
                assert_eq!(v.src_mac, self.local.mac);
                assert_eq!(v.dst_mac, self.peer.mac);
                assert_eq!(v.tuple.src_port, self.local.port);
                assert_eq!(v.tuple.dst_port, self.peer.port);
                if !v.payload.is_empty() {
                    self.sent.push((v.seq, v.payload.to_vec()));
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

    /// The next Read Request we must have sent (reference: TxStream).
    fn expect_request(&mut self, k: usize, rr: &ReadRequestRepr) {
        let want = self.our_tx.send(&Message::ReadRequest(*rr)).unwrap();
        assert_eq!(want.len(), 1);
        let (seq, pay) = &self.sent[k];
        assert_eq!(*seq, want[0].seq, "Read Request {k} sequence number");
        assert_eq!(pay, &want[0].payload, "Read Request {k} FPDU octets");
    }

    fn sink_matches(&self) {
        for (i, &a) in self.pages.iter().enumerate() {
            let mut got = vec![0u8; PAGE as usize];
            self.mem.read(a, &mut got).unwrap();
            if let Some(d) = got.iter().zip(&self.image[i]).position(|(x, y)| x != y) {
                panic!(
                    "sink page {i} differs at octet {d}: got {:#x} want {:#x}",
                    got[d], self.image[i][d]
                );
            }
            // the gap page after it: never written
            let mut gap = vec![0u8; PAGE as usize];
            self.mem.read(a + PAGE, &mut gap).unwrap();
            assert!(gap.iter().all(|&b| b == 0), "gap after sink page {i}");
        }
    }

    fn cqe(&self, idx: u32) -> Vec<u8> {
        let slot = (idx & ((1 << CQ_LOG2) - 1)) as u64;
        let mut b = vec![0; CQE_SIZE];
        self.mem
            .read(self.cq + slot * CQE_SIZE as u64, &mut b)
            .unwrap();
        b
    }

    fn cnt(&self) -> (u64, u64, u64, u64) {
        let n = self.node.borrow();
        (
            n.core.get_cnt_rxs_cqe(),
            n.core.get_cnt_rd_cpl(),
            n.core.get_cnt_rd_ord_over(),
            n.core.get_cnt_rd_term(),
        )
    }
}

#[test]
fn read_requests_out_responses_placed_cqe_and_stray_terminates() {
    let t0 = std::time::Instant::now();
    let mut r = Rig::new(0xead);
    let va_page = 0x7f00_1234_5000;
    r.register_sink(6, 0x5a, va_page, 0x321, 3);
    let sink0 = r.sink.va;
    // Read A: unsignaled, 100 octets; Read B: signaled, 5000 octets across
    // page boundaries (4 Read Response segments with MULPDU 1440 - L on the last)
    let (_wa, ra) = r.post_read(sink0 + 7, 100, 0x1111_2233, 0xdead_beef_0000_0010, false);
    let (wb, rb) = r.post_read(sink0 + 3000, 5000, 0x4455_6677, 0x0000_0001_0000_0003, true);
    r.doorbell();
    r.run(200_000);
    assert_eq!(r.sent.len(), 2, "two Read Request frames");
    r.expect_request(0, &ra);
    r.expect_request(1, &rb);
    assert_eq!(r.cnt(), (0, 0, 0, 0), "no completion before the response");

    // the responses, in order (RFC 5040 §5.3)
    let da = r.rng.bytes(100);
    let db = r.rng.bytes(5000);
    r.respond(&ra, &da, true);
    r.respond(&rb, &db, true);
    r.run(400_000);
    r.sink_matches();
    assert!(r.terms.is_empty(), "no Terminate: {:x?}", r.terms);
    let placed: usize = r.placed.iter().map(|p| p.2 as usize).sum();
    assert_eq!(placed, 5100, "placed records cover both responses");
    assert!(r.placed.iter().all(|p| p.0 == r.sink_stag));
    assert_eq!(r.cnt(), (1, 1, 0, 0), "one CQE (B): A completed silently");
    let c = Cqe::parse(&r.cqe(0)).expect("CQE parses");
    assert_eq!(
        c,
        Cqe {
            wr_id: wb,
            byte_len: 5000,
            qpn: QPN,
            opcode: WcOpcode::RdmaRead,
            status: WcStatus::Success,
            flags: 0,
            imm_or_inv: 0,
            term_cause: 0,
            phase: true,
        }
    );
    assert!(
        !Cqe::phase_of(&r.cqe(1)).unwrap(),
        "nothing written for the unsignaled Read"
    );
    assert!(
        r.last_wr > r.last_mac_rx,
        "the CQE comes after the last response frame"
    );
    eprintln!(
        "read_req_core: last Read Response beat on mac_rx -> last beat of the Read's CQE written {} clocks",
        r.last_wr - r.last_mac_rx
    );

    // Read C (signaled, 1 octet): completes as well; index 1
    let (wc, rc) = r.post_read(sink0 + 9000, 1, 0x0102_0304, 77, true);
    r.doorbell();
    r.run(200_000);
    assert_eq!(r.sent.len(), 3);
    r.expect_request(2, &rc);
    let dc = r.rng.bytes(1);
    r.respond(&rc, &dc, true);
    r.run(200_000);
    r.sink_matches();
    let c = Cqe::parse(&r.cqe(1)).expect("CQE parses");
    assert_eq!(
        (c.wr_id, c.byte_len, c.opcode, c.status, c.qpn, c.phase),
        (wc, 1, WcOpcode::RdmaRead, WcStatus::Success, QPN, true)
    );
    assert_eq!(r.cnt(), (2, 2, 0, 0));

    // a stray Read Response (nothing outstanding), 3000 octets in several
    // segments into a sink whose STag, rights and bounds are good: refused
    // before placement (RFC 5040 §5.3, §7): Terminate 0/2/6, not one octet
    // written, no CQE
    let stray = ReadRequestRepr {
        sink_stag: r.sink_stag,
        sink_to: sink0 + 100,
        size: 3000,
        src_stag: 0,
        src_to: 0,
    };
    let placed_before = r.placed.len();
    let ds = r.rng.bytes(3000);
    r.respond(&stray, &ds, false);
    r.run(200_000);
    let want = TerminateCause::from(RemoteOperationError::UnexpectedOpcode).to_bits();
    assert_eq!(
        r.terms.first(),
        Some(&(want, CONN, QPN)),
        "stray Read Response"
    );
    assert_eq!(
        r.placed.len(),
        placed_before,
        "nothing placed for the stray"
    );
    assert_eq!(
        r.cnt(),
        (2, 2, 0, 0),
        "refused by ddp_rx, not after placement"
    );
    assert!(!Cqe::phase_of(&r.cqe(2)).unwrap(), "no CQE for the stray");
    r.sink_matches();
    let n = r.node.borrow();
    assert_eq!(n.core.get_cnt_scq_no_cq(), 0);
    assert_eq!(n.core.get_cnt_tx_desc_drop(), 0);
    assert!(n.core.get_cnt_ddp_term() >= 1);
    let cyc = n.core.cycle();
    eprintln!(
        "read_req_core: {cyc} clocks in {:.2} s ({:.0} clocks/s)",
        t0.elapsed().as_secs_f64(),
        cyc as f64 / t0.elapsed().as_secs_f64()
    );
}

/// ORD hold (RFC 5040 §6.2, RFC 6581: the requester keeps at most ORD Read
/// Requests outstanding, the responder's IRD): ORD 2, ORD + 3 = 5 Reads on
/// one doorbell. Read Requests on the wire minus Read Responses fed back
/// never exceed the ORD; each response lets exactly one more Request go
/// (octets equal `TxStream`'s); all five complete (3 signaled → 3 CQEs in
/// order), none counted over the ORD, no Terminate.
#[test]
fn reads_beyond_ord_wait_for_a_response() {
    const ORD: usize = 2;
    let mut r = Rig::new(0x0d);
    r.register_sink(2, 0x11, 0x4000_0000, 0, 1);
    let s = r.sink.va;
    let mut reads = vec![];
    for k in 0..ORD + 3 {
        let signaled = k % 2 == 0;
        let len = 10 + 7 * k as u32;
        let (wr_id, rr) = r.post_read(s + 200 * k as u64, len, 5, 300 * k as u64, signaled);
        reads.push((wr_id, rr, signaled));
    }
    r.doorbell();
    r.run(200_000);
    assert_eq!(
        r.sent.len(),
        ORD,
        "only ORD Read Requests before a response"
    );
    let mut responded = 0usize;
    let mut ncqe = 0u32;
    while responded < reads.len() {
        let (wr_id, rr, signaled) = reads[responded];
        let d = r.rng.bytes(rr.size as usize);
        r.respond(&rr, &d, true);
        responded += 1;
        r.run(200_000);
        let outstanding = r.sent.len() - responded;
        assert!(
            outstanding <= ORD,
            "{} Read Requests sent, {responded} answered: over ORD {ORD}",
            r.sent.len()
        );
        assert_eq!(r.sent.len(), (responded + ORD).min(reads.len()));
        if signaled {
            let c = Cqe::parse(&r.cqe(ncqe)).expect("CQE parses");
            assert_eq!(
                c,
                Cqe {
                    wr_id,
                    byte_len: rr.size,
                    qpn: QPN,
                    opcode: WcOpcode::RdmaRead,
                    status: WcStatus::Success,
                    flags: 0,
                    imm_or_inv: 0,
                    term_cause: 0,
                    phase: true,
                },
                "CQE of Read {}",
                responded - 1
            );
            ncqe += 1;
        }
    }
    for (k, (_, rr, _)) in reads.iter().enumerate() {
        r.expect_request(k, rr);
    }
    r.sink_matches();
    assert!(r.terms.is_empty(), "no Terminate: {:?}", r.terms);
    assert_eq!(
        r.cnt(),
        (3, 3, 0, 0),
        "3 CQEs written, 3 Reads done, none over the ORD"
    );
    assert!(!Cqe::phase_of(&r.cqe(3)).unwrap(), "no 4th CQE");
}
