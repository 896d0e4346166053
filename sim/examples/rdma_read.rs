//! RDMA Read between two co-simulated rnic nodes: A reads B's registered
//! buffer into its own with one `post_send` (RFC 5040 §4.4) and polls its
//! send CQ for the Read completion.
//!
//! Both ends are the RTL's (docs/rtl.md, "RDMA Read"): B's Read responder
//! (`rreq_queue`, `read_resp`) answers the Read Request; at A, `ddp_rx`
//! places the Read Responses and `rd_track` completes the Read into the
//! send CQ.
//!
//! `cargo run -p rnic-sim --example rdma_read`

use std::process::ExitCode;

use rnic_driver::{
    AccessFlags, DmaMem, MpaOptions, RemoteAddr, SendOp, SendWr, WcOpcode, WcStatus, WorkCompletion,
};
use rnic_sim::link::{cycle_time, LinkConfig};
use rnic_sim::rtl_run::{connect_pair, open_node, run_until, world_pair};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rdma_read: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let e = |e: rnic_driver::Error| format!("{e:?}");
    let world = world_pair(LinkConfig::default(), None)?;
    let a = open_node(&world, 0, 1500)?;
    let b = open_node(&world, 1, 1500)?;
    let (pd_a, pd_b) = (a.alloc_pd().map_err(e)?, b.alloc_pd().map_err(e)?);
    let (cq_a, cq_b) = (a.create_cq(16).map_err(e)?, b.create_cq(16).map_err(e)?);
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 16, 16).map_err(e)?;
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 16, 16).map_err(e)?;
    let mpa = MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    };
    connect_pair(&a, &qp_a, &b, &qp_b, mpa, b"", b"")?;

    // B's source (remote read), A's sink (local write: the device writes it)
    let msg = b"B's data, fetched by A with one RDMA Read";
    let src = b.alloc_dma(4096).map_err(e)?;
    let dst = a.alloc_dma(4096).map_err(e)?;
    src.write(0, msg).map_err(|x| format!("{x:?}"))?;
    let remote = AccessFlags::from_bits(ACCESS_REMOTE_READ).map_err(e)?;
    let local = AccessFlags::from_bits(ACCESS_LOCAL_WRITE).map_err(e)?;
    let mr_b = pd_b.reg_mr(&src, 0, 4096, remote).map_err(e)?;
    let mr_a = pd_a.reg_mr(&dst, 0, 4096, local).map_err(e)?;

    let sge = [mr_a.sge(0, msg.len() as u32).map_err(e)?];
    qp_a.post_send(&[SendWr {
        wr_id: 42,
        op: SendOp::RdmaRead(RemoteAddr {
            addr: mr_b.va(),
            rkey: mr_b.rkey(),
        }),
        sges: &sge,
        signaled: true,
        solicited: false,
        fence: false,
        inline_data: None,
    }])
    .map_err(e)?;
    let mut wc = [WorkCompletion::default()];
    let clocks = run_until(&world, 100_000, |_| cq_a.poll(&mut wc) == Ok(1))
        .map_err(|c| format!("no Read completion in {c} clocks"))?;
    let w = wc[0];
    if w.wr_id != 42 || w.status != WcStatus::Success || w.opcode != WcOpcode::RdmaRead {
        return Err(format!("completion {w:?}"));
    }
    let mut got = vec![0u8; msg.len()];
    dst.read(0, &mut got).map_err(|x| format!("{x:?}"))?;
    if got != msg {
        return Err(format!("read {:?}", String::from_utf8_lossy(&got)));
    }
    println!(
        "RDMA Read of {} octets completed in {clocks} clocks ({:?}): {:?}",
        msg.len(),
        cycle_time(clocks),
        String::from_utf8_lossy(&got)
    );
    Ok(())
}
