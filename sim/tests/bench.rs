//! Measurements for `sim/README.md` (ignored by default; run with
//! `cargo test --release -p rnic-sim --test bench -- --ignored --nocapture`).

mod common;
use common::{make_frame, Reflector};

use std::time::Instant;

use rnic_sim::dma::{CplBeat, DmaConfig, DmaPins, DmaServer, RdReq, WrBeat};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::link::{Link, LinkConfig, Side};
use rnic_sim::rng::Rng;
use rnic_sim::sched::Scheduler;

fn cycles_arg(default: u64) -> u64 {
    std::env::var("BENCH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Two `rnic_core` reflectors over a 10 GbE link, 64 payloads of 64..1460
/// octets (full-size frames) bouncing as TCP segments: both models, both MAC adapters and the link busy.
#[test]
#[ignore]
fn two_models_with_a_link() {
    let n = cycles_arg(2_000_000);
    let mut rng = Rng::new(1);
    let mut a = Reflector::new(u32::MAX);
    for id in 0..64 {
        a.inject
            .push_back(make_frame(id, 0, 64 + rng.below(1397) as usize));
    }
    let mut s = Scheduler::new();
    s.hook_every = 1;
    let na = s.add_node(Box::new(a));
    let nb = s.add_node(Box::new(Reflector::b(u32::MAX)));
    let l = s.connect(
        (na, 0),
        (nb, 0),
        Link::new(LinkConfig {
            delay: 156,
            ..LinkConfig::default()
        }),
    );
    let t = Instant::now();
    s.run(n);
    let dt = t.elapsed().as_secs_f64();
    let st = (s.link(l).stats(Side::A), s.link(l).stats(Side::B));
    let util = (st.0.wire_octets + st.1.wire_octets) as f64 / (2.0 * 8.0 * n as f64);
    println!(
        "two models + link: {:.0} cycles/s ({n} cycles, {:.2} s; {} frames, link utilisation {:.0} %)",
        n as f64 / dt,
        dt,
        st.0.delivered + st.1.delivered,
        100.0 * util
    );
    let ra = s.node_as::<Reflector>(na).unwrap();
    assert_eq!(ra.damaged, 0);
}

/// Same traffic, one model alone (segments fed to its MAC directly).
#[test]
#[ignore]
fn one_model_alone() {
    use rnic_sim::mac_port::{MacRxPort, MacTxPort};
    let n = cycles_arg(2_000_000);
    let mut rng = Rng::new(1);
    let mut m = common::PayTap(verilator_sys::rnic_core::Model::new());
    m.reset(4);
    common::program(&mut m, 0, &common::EP_A, &common::EP_B, 0);
    let mut seq = 0u32;
    let mut rx = MacRxPort::new(3);
    let mut tx = MacTxPort::tap(); // the payload stream, not a MAC
    let t = Instant::now();
    for _ in 0..n {
        if rx.pending() < 2 {
            let len = 64 + rng.below(1397) as usize;
            let p = rng.bytes(len);
            rx.push(
                common::seg_frame(&common::EP_B, &common::EP_A, seq, &p),
                false,
            );
            seq = seq.wrapping_add(len as u32);
        }
        rx.drive(&mut m);
        tx.drive_ready(&mut m, true);
        m.eval();
        std::hint::black_box(tx.sample(&m));
        m.tick();
    }
    let dt = t.elapsed().as_secs_f64();
    println!("one model + MAC adapters: {:.0} cycles/s", n as f64 / dt);
}

/// A device that keeps the DMA server saturated: 4 KiB writes back to back
/// and 16 reads of 4 KiB outstanding, completions always taken.
struct Saturate {
    wr: Vec<WrBeat>,
    wi: usize,
    wr_ready: bool,
    rd_ready: bool,
    tag: u8,
    buf: u64,
    /// Tags free for a new request; a tag is reused only after its
    /// completion's last beat.
    free: std::collections::VecDeque<u8>,
    cpl: CplBeat,
}
impl DmaPins for Saturate {
    fn wr(&self) -> WrBeat {
        self.wr[self.wi]
    }
    fn set_wr_ready(&mut self, r: bool) {
        self.wr_ready = r;
    }
    fn rd_req(&self) -> RdReq {
        RdReq {
            valid: true,
            addr: self.buf + 4096 * (self.tag as u64 % 16),
            len: 4096,
            tag: self.tag,
        }
    }
    fn set_rd_req_ready(&mut self, r: bool) {
        self.rd_ready = r;
    }
    fn set_cpl(&mut self, b: CplBeat) {
        self.cpl = b;
    }
    fn cpl_ready(&self) -> bool {
        true
    }
}

#[test]
#[ignore]
fn dma_server_overhead() {
    let n = cycles_arg(5_000_000);
    let mut mem = HostMemory::new(0x10_0000, 1 << 40);
    let buf = mem.alloc_dma(1 << 20, 4096).unwrap();
    let mut wr = vec![WrBeat {
        valid: true,
        hdr: true,
        len: 4096,
        data: buf + 3,
        keep: 0,
        last: false,
    }];
    for i in 0..512 {
        wr.push(WrBeat {
            valid: true,
            hdr: false,
            len: 0,
            data: i,
            keep: 8,
            last: i == 511,
        });
    }
    for (label, busy, log) in [
        ("idle", false, false),
        ("saturated, log off", true, false),
        ("saturated, log on", true, true),
    ] {
        let mut srv = DmaServer::new(DmaConfig {
            max_outstanding: 16,
            log,
            ..DmaConfig::default()
        });
        let mut dev = Saturate {
            wr: wr.clone(),
            wi: 0,
            wr_ready: false,
            rd_ready: false,
            tag: 0,
            buf,
            free: (1..32).collect(),
            cpl: CplBeat::default(),
        };
        if !busy {
            for b in &mut dev.wr {
                b.valid = false;
            }
        }
        let t = Instant::now();
        for _ in 0..n {
            srv.drive(&mut dev, &mut mem);
            if busy {
                srv.sample(&dev, &mut mem);
                if dev.wr_ready {
                    dev.wi = (dev.wi + 1) % dev.wr.len();
                }
                if dev.rd_ready {
                    dev.tag = dev.free.pop_front().unwrap();
                }
                if dev.cpl.valid && dev.cpl.last {
                    dev.free.push_back(dev.cpl.tag);
                }
            } else {
                srv.sample(&Idle, &mut mem);
            }
        }
        let dt = t.elapsed().as_secs_f64();
        let st = srv.stats();
        println!(
            "DMA server {label}: {:.1} ns/cycle ({:.1} M cycles/s; {:.2} + {:.2} octets/cycle written + read)",
            dt * 1e9 / n as f64,
            n as f64 / dt / 1e6,
            st.write_octets as f64 / n as f64,
            st.read_octets as f64 / n as f64,
        );
        assert_eq!(st.faults, 0);
    }
}

struct Idle;
impl DmaPins for Idle {
    fn wr(&self) -> WrBeat {
        WrBeat::default()
    }
    fn set_wr_ready(&mut self, _: bool) {}
    fn rd_req(&self) -> RdReq {
        RdReq::default()
    }
    fn set_rd_req_ready(&mut self, _: bool) {}
    fn set_cpl(&mut self, _: CplBeat) {}
    fn cpl_ready(&self) -> bool {
        true
    }
}

/// The `make sim` scenario (`rnic-sim run`, seeded, two nodes) as the
/// simulator's speed figure: clocks per CPU-second of this build's
/// binary, written to `target/bench/cosim-speed.json`. With
/// `BENCH_BASELINE=<path to another rnic-sim>` that binary runs the same
/// scenario right after, and the bench prints both figures and their
/// ratio and checks that both simulated the same clocks, frames and rows.
/// `BENCH_MAX_SIZE` shortens the sweep (default: the scenario's 1 MiB).
#[test]
#[ignore]
fn cosim_clocks_per_cpu_second() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    let max = std::env::var("BENCH_MAX_SIZE").ok();
    let run = |bin: &str, tag: &str| -> (serde_json::Value, u64, f64) {
        let json = dir.join(format!("cosim-{tag}-report.json"));
        let mut cmd = std::process::Command::new(bin);
        cmd.args(["run", "--quiet", "--pcap"])
            .arg(dir.join(format!("cosim-{tag}.pcap")))
            .arg("--json")
            .arg(&json);
        if let Some(m) = &max {
            cmd.args(["--max-size", m]);
        }
        let out = cmd.output().expect("run rnic-sim");
        assert!(out.status.success(), "{bin} failed: {out:?}");
        let text = std::fs::read_to_string(&json).unwrap();
        let report: serde_json::Value = serde_json::from_str(&text).expect("the report parses");
        let cycles = report["total_cycles"].as_u64().expect("total_cycles");
        let cpu = report["cpu_s"].as_f64().expect("cpu_s");
        (report, cycles, cpu)
    };
    let (text, cycles, cpu) = run(env!("CARGO_BIN_EXE_rnic-sim"), "current");
    let rate = cycles as f64 / cpu;
    println!(
        "co-simulation (rnic-sim run{}): {cycles} clocks in {cpu:.2} CPU-s = {rate:.0} clocks per CPU-second",
        max.as_ref()
            .map(|m| format!(" --max-size {m}"))
            .unwrap_or_default()
    );
    let mut summary = format!(
        "{{\"scenario\":\"rnic-sim run\",\"max_size\":{},\"total_cycles\":{cycles},\"cpu_s\":{cpu},\"clocks_per_cpu_s\":{rate:.0}",
        max.as_deref().unwrap_or("1048576")
    );
    if let Ok(base) = std::env::var("BENCH_BASELINE") {
        let (btext, bcycles, bcpu) = run(&base, "baseline");
        let brate = bcycles as f64 / bcpu;
        println!(
            "baseline {base}: {bcycles} clocks in {bcpu:.2} CPU-s = {brate:.0} clocks per CPU-second; this build is x{:.2}",
            rate / brate
        );
        for f in [
            "total_cycles",
            "connect_cycles",
            "data_cycles",
            "frames_a_to_b",
            "frames_b_to_a",
            "octets_a_to_b",
            "octets_b_to_a",
            "rows",
        ] {
            assert_eq!(text[f], btext[f], "{f} differs from the baseline's");
        }
        summary += &format!(
            ",\"baseline\":{base:?},\"baseline_cpu_s\":{bcpu},\"baseline_clocks_per_cpu_s\":{brate:.0},\"ratio\":{:.3}",
            rate / brate
        );
    }
    summary += "}\n";
    std::fs::write(dir.join("cosim-speed.json"), summary).unwrap();
}
