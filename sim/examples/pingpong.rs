//! Send/Receive ping-pong between two co-simulated rnic nodes, like
//! `ibv_rc_pingpong`: A sends a message, B's receive completes and B sends
//! it back; each side re-posts its receive. Prints the round-trip time and
//! half of it (the one-way latency, post → receive completion polled).
//!
//! `cargo run -p rnic-sim --example pingpong [-- SIZE ITERS]`

use std::process::ExitCode;

use rnic_driver::{
    AccessFlags, Cq, MpaOptions, Mr, Qp, RecvWr, SendOp, SendWr, WcStatus, WorkCompletion,
};
use rnic_sim::link::LinkConfig;
use rnic_sim::rtl_run::{connect_pair, open_node, run_until, world_pair};
use rnic_sim::sim_bus::SimBus;
use rnic_wire::abi::tpt::ACCESS_LOCAL_WRITE;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let size: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(64);
    let iters: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(50);
    match run(size, iters) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pingpong: {e}");
            ExitCode::FAILURE
        }
    }
}

fn e(e: rnic_driver::Error) -> String {
    format!("{e:?}")
}

/// Posts one receive of `size` octets into `mr`.
fn post_recv(qp: &Qp<SimBus>, mr: &Mr<SimBus>, size: u32, id: u64) -> Result<(), String> {
    let sge = [mr.sge(0, size).map_err(e)?];
    qp.post_recv(&[RecvWr {
        wr_id: id,
        sges: &sge,
    }])
    .map_err(e)
}

/// Posts one Send of `size` octets from `mr` (unsignaled: no send CQEs in
/// the RTL yet).
fn post_send(qp: &Qp<SimBus>, mr: &Mr<SimBus>, size: u32, id: u64) -> Result<(), String> {
    let sge = [mr.sge(0, size).map_err(e)?];
    qp.post_send(&[SendWr {
        wr_id: id,
        op: SendOp::Send,
        sges: &sge,
        signaled: false,
        solicited: false,
        fence: false,
        inline_data: None,
    }])
    .map_err(e)
}

fn run(size: u32, iters: u32) -> Result<(), String> {
    let world = world_pair(LinkConfig::default(), None)?;
    let a = open_node(&world, 0, 1500)?;
    let b = open_node(&world, 1, 1500)?;
    let (pd_a, pd_b) = (a.alloc_pd().map_err(e)?, b.alloc_pd().map_err(e)?);
    let (cq_a, cq_b) = (a.create_cq(64).map_err(e)?, b.create_cq(64).map_err(e)?);
    // the send queues must hold every Send: nothing retires them without
    // send CQEs
    let sq = (iters + 1).next_power_of_two();
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, sq, 4).map_err(e)?;
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, sq, 4).map_err(e)?;
    let mpa = MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    };
    connect_pair(&a, &qp_a, &b, &qp_b, mpa, b"ping?", b"pong!")?;
    let len = size.max(1) as usize;
    let buf_a = a.alloc_dma(len).map_err(e)?;
    let buf_b = b.alloc_dma(len).map_err(e)?;
    let acc = AccessFlags::from_bits(ACCESS_LOCAL_WRITE).map_err(e)?;
    let mr_a = pd_a.reg_mr(&buf_a, 0, len, acc).map_err(e)?;
    let mr_b = pd_b.reg_mr(&buf_b, 0, len, acc).map_err(e)?;
    println!(
        "local QP {} ↔ remote QP {}, {size} octets × {iters} round trips",
        qp_a.qpn(),
        qp_b.qpn()
    );

    let wait = |cq: &Cq<SimBus>, who: &str| -> Result<WorkCompletion, String> {
        let mut wc = [WorkCompletion::default()];
        run_until(&world, 200_000, |_| cq.poll(&mut wc) == Ok(1))
            .map_err(|c| format!("{who}: no receive completion in {c} clocks"))?;
        match wc[0] {
            w if w.status == WcStatus::Success && w.byte_len == size => Ok(w),
            w => Err(format!("{who}: {w:?}")),
        }
    };
    post_recv(&qp_a, &mr_a, size, 0)?;
    post_recv(&qp_b, &mr_b, size, 0)?;
    let t0 = world.borrow().cycle();
    for i in 1..=iters as u64 {
        post_send(&qp_a, &mr_a, size, i)?; // ping
        wait(&cq_b, "B")?;
        post_recv(&qp_b, &mr_b, size, i)?;
        post_send(&qp_b, &mr_b, size, i)?; // pong
        wait(&cq_a, "A")?;
        post_recv(&qp_a, &mr_a, size, i)?;
    }
    let clocks = world.borrow().cycle() - t0;
    let rtt_ns = clocks as f64 * 6.4 / iters as f64;
    println!(
        "{iters} iters in {clocks} clocks: round trip {:.2} µs, one way {:.2} µs (156.25 MHz, 1 µs link delay each way, 500 ns DMA round trip)",
        rtt_ns / 1000.0,
        rtt_ns / 2000.0
    );
    Ok(())
}
