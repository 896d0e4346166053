//! RDMA Write between two co-simulated rnic nodes, through the verbs API.
//!
//! B registers a buffer for remote write and tells A its address and rkey
//! (here: by reading them off B's `Mr`, as an out-of-band exchange would);
//! A writes a message into it with one `post_send` and polls its CQ for
//! the completion — or, while the RTL has no send CQEs
//! (`SEND_CQE_IN_RTL`), watches B's memory instead.
//!
//! `cargo run -p rnic-sim --example rdma_write`

use std::process::ExitCode;

use rnic_driver::{
    AccessFlags, DmaMem, MpaOptions, RemoteAddr, SendOp, SendWr, WcOpcode, WcStatus, WorkCompletion,
};
use rnic_sim::link::{cycle_time, LinkConfig};
use rnic_sim::rtl_run::{connect_pair, open_node, run_until, world_pair, SEND_CQE_IN_RTL};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rdma_write: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let e = |e: rnic_driver::Error| format!("{e:?}");
    let pcap = std::path::Path::new("target/sim/rdma_write.pcap");
    let world = world_pair(LinkConfig::default(), Some(pcap))?;
    let a = open_node(&world, 0, 1500)?;
    let b = open_node(&world, 1, 1500)?;

    // protection domain, completion queues, queue pair on each side
    let (pd_a, pd_b) = (a.alloc_pd().map_err(e)?, b.alloc_pd().map_err(e)?);
    let (cq_a, cq_b) = (a.create_cq(16).map_err(e)?, b.create_cq(16).map_err(e)?);
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 16, 16).map_err(e)?;
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 16, 16).map_err(e)?;
    let mpa = MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    };
    connect_pair(&a, &qp_a, &b, &qp_b, mpa, b"hi", b"hello")?;
    println!("connected: A QP {} ↔ B QP {}", qp_a.qpn(), qp_b.qpn());

    // memory: A's source, B's sink with remote write access
    let msg = b"Hello over iWARP, written straight into B's memory!";
    let src = a.alloc_dma(4096).map_err(e)?;
    let dst = b.alloc_dma(4096).map_err(e)?;
    src.write(0, msg).map_err(|x| format!("{x:?}"))?;
    let local = AccessFlags::from_bits(ACCESS_LOCAL_WRITE).map_err(e)?;
    let remote = AccessFlags::from_bits(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE).map_err(e)?;
    let mr_a = pd_a.reg_mr(&src, 0, 4096, local).map_err(e)?;
    let mr_b = pd_b.reg_mr(&dst, 0, 4096, remote).map_err(e)?;
    println!("B's region: va {:#x} rkey {:#x}", mr_b.va(), mr_b.rkey());

    // the RDMA Write
    let sge = [mr_a.sge(0, msg.len() as u32).map_err(e)?];
    qp_a.post_send(&[SendWr {
        wr_id: 1,
        op: SendOp::RdmaWrite(RemoteAddr {
            addr: mr_b.va() + 100,
            rkey: mr_b.rkey(),
        }),
        sges: &sge,
        signaled: SEND_CQE_IN_RTL,
        solicited: false,
        fence: false,
        inline_data: None,
    }])
    .map_err(e)?;
    let mut got = vec![0u8; msg.len()];
    let clocks = if SEND_CQE_IN_RTL {
        let mut wc = [WorkCompletion::default()];
        let c = run_until(&world, 100_000, |_| cq_a.poll(&mut wc) == Ok(1))
            .map_err(|c| format!("no completion in {c} clocks"))?;
        let w = wc[0];
        if w.wr_id != 1 || w.status != WcStatus::Success || w.opcode != WcOpcode::RdmaWrite {
            return Err(format!("completion {w:?}"));
        }
        println!("A's Write completion after {c} clocks (the last segment left A)");
        // a requester's completion says the data left, not that it landed
        // at B (the RTL completes a Write when its last segment is framed)
        run_until(&world, 100_000, |_| {
            dst.read(100, &mut got).is_ok() && got == msg
        })
        .map_err(|c| format!("the write did not land in {c} more clocks"))?
            + c
    } else {
        run_until(&world, 100_000, |_| {
            dst.read(100, &mut got).is_ok() && got == msg
        })
        .map_err(|c| format!("the write did not land in {c} clocks"))?
    };
    if got != msg {
        return Err(format!("B holds {:?}", String::from_utf8_lossy(&got)));
    }
    println!(
        "B's memory at +100 after {clocks} clocks ({:?}): {:?}",
        cycle_time(clocks),
        String::from_utf8_lossy(&got)
    );
    println!("pcap: {}", pcap.display());
    Ok(())
}
