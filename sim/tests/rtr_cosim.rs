//! RFC 6581's peer-to-peer model between two co-simulated nodes (RTL +
//! firmware + driver), for every RTR type and with either node as the
//! initiator: both nodes offer and accept only that type, so it is the one
//! negotiated. Then the stream must work as if there had been no RTR: a
//! Send each way and an RDMA Read each way (the Send and Read RTRs used
//! MSN 1 of their queue, so the device's MSNs must start at 2 on both
//! sides, or the first Send or Read would be refused with an MSN
//! Terminate), every octet checked, no Terminate. On the wire (pcap,
//! decoded by rnic-wire) the initiator's first FPDU is the zero-length
//! RTR message of that type.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

use rnic_driver::{
    AccessFlags, ConnectParams, Context, DmaMem, EventKind, MpaOptions, Qp, RecvWr, RemoteAddr,
    SendOp, SendWr, WcOpcode, WcStatus, WorkCompletion,
};
use rnic_sim::link::LinkConfig;
use rnic_sim::node::World;
use rnic_sim::rtl_run::{net_config, open_node, run_until, world_pair, PORT, READ_DEPTH};
use rnic_sim::sim_bus::SimBus;
use rnic_wire::abi::context::RtrKind;
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
use rnic_wire::ddp::DdpSegment;
use rnic_wire::mpa::{Fpdu, FpduRepr, RtrTypes};
use rnic_wire::rdmap::RdmapRepr;

const BUDGET: u64 = 400_000;
const LEN: usize = 3000;

fn only(kind: RtrKind) -> RtrTypes {
    RtrTypes {
        send: kind == RtrKind::Send,
        write: kind == RtrKind::Write,
        read: kind == RtrKind::Read,
    }
}

fn event(ctx: &Context<SimBus>, kind: EventKind, who: &str) -> u32 {
    loop {
        let ev = ctx
            .get_cm_event(Duration::from_millis(20))
            .unwrap_or_else(|e| panic!("{who}: no {kind:?}: {e:?}"));
        if ev.kind == kind {
            return ev.handle;
        }
        assert!(
            !matches!(ev.kind, EventKind::ConnectionLost | EventKind::QpError),
            "{who}: {ev:?}"
        );
    }
}

/// `who` sends `LEN` octets to `to`, which posted a receive: byte-exact.
#[allow(clippy::too_many_arguments)]
fn send(
    w: &Rc<RefCell<World>>,
    from: &Qp<SimBus>,
    src: &rnic_driver::Mr<SimBus>,
    src_buf: &rnic_sim::sim_bus::SimDma,
    to: &Qp<SimBus>,
    dst: &rnic_driver::Mr<SimBus>,
    dst_buf: &rnic_sim::sim_bus::SimDma,
    rcq: &rnic_driver::Cq<SimBus>,
    seed: u8,
) {
    let data: Vec<u8> = (0..LEN).map(|i| (i as u8).wrapping_mul(seed)).collect();
    src_buf.write(0, &data).unwrap();
    let rs = [dst.sge(0, LEN as u32).unwrap()];
    to.post_recv(&[RecvWr {
        wr_id: 1,
        sges: &rs,
    }])
    .unwrap();
    let ss = [src.sge(0, LEN as u32).unwrap()];
    from.post_send(&[SendWr {
        wr_id: 2,
        op: SendOp::Send,
        sges: &ss,
        signaled: false,
        solicited: false,
        fence: false,
        inline_data: None,
    }])
    .unwrap();
    let mut wc = [WorkCompletion::default()];
    run_until(w, BUDGET, |_| rcq.poll(&mut wc).unwrap() == 1).expect("receive completion");
    assert_eq!(
        (wc[0].status, wc[0].opcode, wc[0].byte_len as usize),
        (WcStatus::Success, WcOpcode::Recv, LEN),
        "{:?}",
        wc[0]
    );
    let mut got = vec![0u8; LEN];
    dst_buf.read(0, &mut got).unwrap();
    assert!(got == data, "Send data");
}

/// `from` reads `LEN` octets of `src` (remote) into `into`: byte-exact.
#[allow(clippy::too_many_arguments)]
fn read(
    w: &Rc<RefCell<World>>,
    from: &Qp<SimBus>,
    into: &rnic_driver::Mr<SimBus>,
    into_buf: &rnic_sim::sim_bus::SimDma,
    scq: &rnic_driver::Cq<SimBus>,
    src: &rnic_driver::Mr<SimBus>,
    src_buf: &rnic_sim::sim_bus::SimDma,
    seed: u8,
) {
    let data: Vec<u8> = (0..LEN).map(|i| (i as u8) ^ seed).collect();
    src_buf.write(0, &data).unwrap();
    let sges = [into.sge(0, LEN as u32).unwrap()];
    from.post_send(&[SendWr {
        wr_id: 3,
        op: SendOp::RdmaRead(RemoteAddr {
            addr: src.va(),
            rkey: src.rkey(),
        }),
        sges: &sges,
        signaled: true,
        solicited: false,
        fence: false,
        inline_data: None,
    }])
    .unwrap();
    let mut wc = [WorkCompletion::default()];
    run_until(w, BUDGET, |_| scq.poll(&mut wc).unwrap() == 1).expect("Read completion");
    assert_eq!(
        (wc[0].status, wc[0].opcode),
        (WcStatus::Success, WcOpcode::RdmaRead),
        "{:?}",
        wc[0]
    );
    let mut got = vec![0u8; LEN];
    into_buf.read(0, &mut got).unwrap();
    assert!(got == data, "Read data");
}

/// The first FPDU with payload octets that node `mac_last` sent.
fn first_fpdu(w: &Rc<RefCell<World>>, pcap: &PathBuf, mac_last: u8) -> Vec<u8> {
    w.borrow_mut().link.as_mut().unwrap().flush_pcap().unwrap();
    let f = std::fs::File::open(pcap).unwrap();
    let mut r = pcap_file::pcap::PcapReader::new(f).unwrap();
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        if let Ok(seg) = rnic_wire::model::parse_frame(&p.data) {
            if seg.src_mac[5] == mac_last
                && !seg.payload.is_empty()
                && !seg.payload.starts_with(b"MPA ID")
            {
                return seg.payload.to_vec();
            }
        }
    }
    panic!("no FPDU from node {mac_last}");
}

fn session(kind: RtrKind, initiator: usize) {
    let name = format!("rtr_{kind:?}_{initiator}");
    let pcap = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.pcap"));
    let w = world_pair(LinkConfig::default(), Some(&pcap)).unwrap();
    let ctx = [
        open_node(&w, 0, 1500).unwrap(),
        open_node(&w, 1, 1500).unwrap(),
    ];
    for n in 0..2 {
        w.borrow_mut().nodes[n].fw.config.rtr_types = only(kind);
    }
    let pd = [ctx[0].alloc_pd().unwrap(), ctx[1].alloc_pd().unwrap()];
    let scq = [ctx[0].create_cq(16).unwrap(), ctx[1].create_cq(16).unwrap()];
    let rcq = [ctx[0].create_cq(16).unwrap(), ctx[1].create_cq(16).unwrap()];
    let qp = [
        pd[0].create_qp(&scq[0], &rcq[0], 8, 8).unwrap(),
        pd[1].create_qp(&scq[1], &rcq[1], 8, 8).unwrap(),
    ];
    let (i, r) = (initiator, 1 - initiator);
    let _l = ctx[r].listen(PORT, 4).unwrap();
    qp[i]
        .connect(
            &ConnectParams {
                peer_ip: net_config(r as u8 + 1, 1500).ip,
                peer_port: PORT,
                local_port: 0,
                ird: READ_DEPTH,
                ord: READ_DEPTH,
                mpa: MpaOptions {
                    revision: 2,
                    crc: true,
                    markers: false,
                },
            },
            b"",
        )
        .unwrap();
    let creq = event(&ctx[r], EventKind::ConnectRequest, "responder");
    ctx[r]
        .accept(creq, &qp[r], READ_DEPTH, READ_DEPTH, b"")
        .unwrap();
    event(&ctx[r], EventKind::Established, "responder");
    event(&ctx[i], EventKind::Established, "initiator");
    for (n, q) in qp.iter().enumerate() {
        let q = *w.borrow().nodes[n].fw.qps().get(q.qpn()).unwrap();
        assert_eq!(q.rtr, kind, "node {n}: the negotiated RTR");
    }
    let acc = |b| AccessFlags::from_bits(b).unwrap();
    let all = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;
    let bufs: Vec<_> = (0..2)
        .map(|n| {
            [
                ctx[n].alloc_dma(4096).unwrap(),
                ctx[n].alloc_dma(4096).unwrap(),
            ]
        })
        .collect();
    let mrs: Vec<_> = (0..2)
        .map(|n| {
            [
                pd[n].reg_mr(&bufs[n][0], 0, 4096, acc(all)).unwrap(),
                pd[n].reg_mr(&bufs[n][1], 0, 4096, acc(all)).unwrap(),
            ]
        })
        .collect();
    // a Send each way, then a Read each way
    for (a, b, seed) in [(i, r, 3u8), (r, i, 5)] {
        send(
            &w,
            &qp[a],
            &mrs[a][0],
            &bufs[a][0],
            &qp[b],
            &mrs[b][1],
            &bufs[b][1],
            &rcq[b],
            seed,
        );
    }
    for (a, b, seed) in [(i, r, 7u8), (r, i, 9)] {
        read(
            &w,
            &qp[a],
            &mrs[a][1],
            &bufs[a][1],
            &scq[a],
            &mrs[b][0],
            &bufs[b][0],
            seed,
        );
    }
    for n in 0..2 {
        let terms = w.borrow().nodes[n].hw.borrow().terms.clone();
        assert!(terms.is_empty(), "node {n}: Terminate {terms:?}");
    }
    // the initiator's first FPDU: the zero-length RTR of that type
    let f = first_fpdu(&w, &pcap, i as u8 + 1);
    let fp = Fpdu::new_checked(&f[..]).unwrap();
    let repr = FpduRepr::parse(&fp, true).expect("CRC");
    let seg = DdpSegment::new_checked(repr.ulpdu).unwrap();
    let m = RdmapRepr::parse(&seg).unwrap();
    let ok = match (kind, m) {
        (RtrKind::Write, RdmapRepr::RdmaWrite { payload, .. }) => payload.is_empty(),
        (RtrKind::Read, RdmapRepr::ReadRequest { msn, request }) => msn == 1 && request.size == 0,
        (RtrKind::Send, RdmapRepr::Send { msn, payload, .. }) => msn == 1 && payload.is_empty(),
        _ => false,
    };
    assert!(ok, "{kind:?}: the initiator's first FPDU is {m:?}");
    println!("{name}: {} clocks", w.borrow().cycle());
}

#[test]
fn write_rtr_both_ways() {
    session(RtrKind::Write, 0);
    session(RtrKind::Write, 1);
}

#[test]
fn read_rtr_both_ways() {
    session(RtrKind::Read, 0);
    session(RtrKind::Read, 1);
}

#[test]
fn send_rtr_both_ways() {
    session(RtrKind::Send, 0);
    session(RtrKind::Send, 1);
}
