//! The DMA server against a scripted device (a Rust test double of the
//! `dma_*` ports) and a plain `Vec<u8>` shadow of host memory: byte-exact
//! writes at unaligned addresses, reads per tag with out-of-order
//! completions, latencies and bandwidth measured by the device, faults.

use std::collections::{HashMap, VecDeque};

use rnic_sim::dma::{
    CplBeat, DmaConfig, DmaFaultKind, DmaPins, DmaServer, RdReq, WrBeat, MAX_DMA_LEN,
};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::rng::Rng;

/// A device that sends scripted write beats and read requests and collects
/// completions, recording the cycle of every handshake.
#[derive(Default)]
struct Dev {
    wr_q: VecDeque<WrBeat>,
    wr_ready: bool,
    rd_q: VecDeque<RdReq>,
    rd_ready: bool,
    cpl: CplBeat,
    cpl_ready: bool,
    cycle: u64,
    /// Cycle of each accepted write's last beat, in order.
    wr_done: Vec<u64>,
    req_cycle: HashMap<u8, u64>,
    first_cpl: HashMap<u8, u64>,
    cur: Option<(u8, Vec<u8>)>,
    /// Completed reads in completion order.
    done: Vec<(u8, Vec<u8>)>,
}

impl DmaPins for Dev {
    fn wr(&self) -> WrBeat {
        self.wr_q.front().copied().unwrap_or_default()
    }
    fn set_wr_ready(&mut self, r: bool) {
        self.wr_ready = r;
    }
    fn rd_req(&self) -> RdReq {
        self.rd_q.front().copied().unwrap_or_default()
    }
    fn set_rd_req_ready(&mut self, r: bool) {
        self.rd_ready = r;
    }
    fn set_cpl(&mut self, b: CplBeat) {
        self.cpl = b;
    }
    fn cpl_ready(&self) -> bool {
        self.cpl_ready
    }
}

impl Dev {
    fn write(&mut self, addr: u64, data: &[u8]) {
        self.wr_q.push_back(WrBeat {
            valid: true,
            hdr: true,
            len: data.len() as u16,
            data: addr,
            keep: 0,
            last: false,
        });
        self.data_beats(data);
    }
    fn data_beats(&mut self, data: &[u8]) {
        let n = data.len().div_ceil(8);
        for (i, c) in data.chunks(8).enumerate() {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            self.wr_q.push_back(WrBeat {
                valid: true,
                hdr: false,
                len: 0,
                data: u64::from_le_bytes(b),
                keep: c.len() as u8,
                last: i + 1 == n,
            });
        }
    }
    fn read(&mut self, addr: u64, len: usize, tag: u8) {
        self.rd_q.push_back(RdReq {
            valid: true,
            addr,
            len: len as u16,
            tag,
        });
    }
    /// The clock edge, as the device sees it.
    fn clock(&mut self) {
        if self.wr_ready {
            if let Some(b) = self.wr_q.pop_front() {
                if b.last {
                    self.wr_done.push(self.cycle);
                }
            }
        }
        if self.rd_ready {
            if let Some(r) = self.rd_q.pop_front() {
                self.req_cycle.insert(r.tag, self.cycle);
            }
        }
        if self.cpl.valid {
            self.first_cpl.entry(self.cpl.tag).or_insert(self.cycle);
        }
        if self.cpl.valid && self.cpl_ready {
            let b = self.cpl;
            match &mut self.cur {
                Some((t, _)) => assert_eq!(*t, b.tag, "completions interleaved"),
                None => self.cur = Some((b.tag, Vec::new())),
            }
            let (_, d) = self.cur.as_mut().unwrap();
            assert!(b.keep <= 8 && (b.last || b.keep == 8));
            d.extend_from_slice(&b.data.to_le_bytes()[..b.keep as usize]);
            if b.last {
                self.done.push(self.cur.take().unwrap());
            }
        }
        self.cycle += 1;
    }
}

/// One cycle: server drives, (device has no combinational paths), server
/// samples, clock edge.
fn cycle(srv: &mut DmaServer, dev: &mut Dev, mem: &mut HostMemory) {
    srv.step(dev, mem);
    dev.clock();
}

fn run_until_idle(
    srv: &mut DmaServer,
    dev: &mut Dev,
    mem: &mut HostMemory,
    rng: &mut Rng,
    ready_pct: u64,
) {
    for _ in 0..2_000_000 {
        dev.cpl_ready = rng.below(100) < ready_pct;
        cycle(srv, dev, mem);
        if dev.wr_q.is_empty() && dev.rd_q.is_empty() && srv.idle() {
            return;
        }
    }
    panic!("DMA did not finish");
}

fn mem_with_buffer(len: u64) -> (HostMemory, u64) {
    let mut mem = HostMemory::new(0x10_0000, 1 << 40);
    mem.alloc(0x1000, 4096).unwrap(); // not DMA-able, below the buffer
    let buf = mem.alloc_dma(len, 4096).unwrap();
    mem.alloc(0x1000, 4096).unwrap(); // not DMA-able, above
    (mem, buf)
}

#[test]
fn writes_land_byte_exact_at_unaligned_addresses() {
    let mut rng = Rng::new(11);
    let (mut mem, buf) = mem_with_buffer(64 * 1024);
    let mut shadow = vec![0u8; 64 * 1024];
    let mut srv = DmaServer::new(DmaConfig::default());
    let mut dev = Dev::default();
    for i in 0..400 {
        let len = if i % 50 == 0 {
            MAX_DMA_LEN
        } else {
            1 + rng.below(700) as usize
        };
        let off = rng.below((shadow.len() - len) as u64 + 1) as usize;
        let data = rng.bytes(len);
        shadow[off..off + len].copy_from_slice(&data);
        dev.write(buf + off as u64, &data);
    }
    run_until_idle(&mut srv, &mut dev, &mut mem, &mut rng, 100);
    let mut back = vec![0u8; shadow.len()];
    mem.read(buf, &mut back).unwrap();
    assert!(back == shadow, "host memory differs from the shadow");
    assert!(mem
        .nonzero_outside(&[(buf, shadow.len() as u64)])
        .is_empty());
    assert!(srv.faults().is_empty(), "{:?}", srv.faults());
    assert_eq!(srv.stats().writes, 400);
}

#[test]
fn reads_return_the_octets_per_tag_out_of_order() {
    let mut rng = Rng::new(12);
    let (mut mem, buf) = mem_with_buffer(32 * 1024);
    let content = rng.bytes(32 * 1024);
    mem.write(buf, &content).unwrap();
    let mut srv = DmaServer::new(DmaConfig {
        read_jitter: 20,
        seed: 99,
        max_outstanding: 64,
        ..DmaConfig::default()
    });
    let mut dev = Dev::default();
    let mut want = HashMap::new();
    for tag in 0..64u8 {
        let len = 1 + rng.below(600) as usize;
        let off = rng.below((content.len() - len) as u64) as usize;
        dev.read(buf + off as u64, len, tag);
        want.insert(tag, content[off..off + len].to_vec());
    }
    run_until_idle(&mut srv, &mut dev, &mut mem, &mut rng, 70);
    assert_eq!(dev.done.len(), 64);
    for (tag, data) in &dev.done {
        assert_eq!(data, &want[tag], "tag {tag}");
    }
    let order: Vec<u8> = dev.done.iter().map(|(t, _)| *t).collect();
    let inversions = order.windows(2).filter(|w| w[0] > w[1]).count();
    assert!(inversions > 5, "completions came back in order: {order:?}");
    assert!(srv.faults().is_empty());

    // Reordering also happens with no jitter when several requests are due
    // at once (long completions queue up), and not at all with reorder off.
    for reorder in [true, false] {
        let mut srv = DmaServer::new(DmaConfig {
            reorder,
            ..DmaConfig::default()
        });
        let mut dev = Dev::default();
        for tag in 0..16u8 {
            dev.read(buf + tag as u64 * 1001, 1000, tag);
        }
        run_until_idle(&mut srv, &mut dev, &mut mem, &mut rng, 100);
        let order: Vec<u8> = dev.done.iter().map(|(t, _)| *t).collect();
        assert_eq!(order == (0..16).collect::<Vec<u8>>(), !reorder, "{order:?}");
        for (tag, data) in &dev.done {
            let off = *tag as usize * 1001;
            assert_eq!(data[..], content[off..off + 1000]);
        }
    }
}

#[test]
fn latency_in_cycles_equals_the_configuration() {
    for (rl, wl) in [(78, 39), (1, 0), (200, 7)] {
        let (mut mem, buf) = mem_with_buffer(8192);
        let mut srv = DmaServer::new(DmaConfig {
            read_latency: rl,
            write_latency: wl,
            ..DmaConfig::default()
        });
        let mut dev = Dev {
            cpl_ready: true,
            ..Dev::default()
        };
        dev.read(buf + 3, 100, 7);
        dev.write(buf + 4097, &[0xA5; 13]);
        let mut seen = None;
        for _ in 0..1000 {
            cycle(&mut srv, &mut dev, &mut mem);
            let mut b = [0u8; 13];
            mem.read(buf + 4097, &mut b).unwrap();
            if seen.is_none() && b == [0xA5; 13] {
                seen = Some(dev.cycle - 1);
            }
        }
        assert_eq!(dev.first_cpl[&7] - dev.req_cycle[&7], rl, "read latency");
        assert_eq!(seen.unwrap() - dev.wr_done[0], wl, "write latency");
        assert_eq!(srv.config().read_latency, rl);
    }
    // The default is 500 ns at 156.25 MHz.
    assert_eq!(DmaConfig::default().read_latency, 78);
}

#[test]
fn bandwidth_in_octets_per_cycle() {
    for bw in [8.0, 4.0, 2.5, 1.0] {
        let (mut mem, buf) = mem_with_buffer(64 * 1024);
        let mut rng = Rng::new(1);
        let mut srv = DmaServer::new(DmaConfig {
            write_bw: bw,
            read_bw: bw,
            read_latency: 0,
            write_latency: 0,
            ..DmaConfig::default()
        });
        let mut dev = Dev::default();
        let total = 16 * MAX_DMA_LEN;
        for i in 0..16 {
            dev.write(buf + (i * MAX_DMA_LEN) as u64, &rng.bytes(MAX_DMA_LEN));
        }
        run_until_idle(&mut srv, &mut dev, &mut mem, &mut rng, 100);
        let cycles = dev.wr_done.last().unwrap() + 1;
        // 16 header beats are extra cycles at full rate, hidden otherwise.
        let rate = total as f64 / cycles as f64;
        assert!(
            (rate - bw).abs() / bw < 0.02,
            "write: {rate} octets/cycle vs {bw}"
        );

        let mut dev = Dev::default();
        let start = srv.cycle();
        for tag in 0..16u8 {
            dev.read(buf + tag as u64 * 4096, MAX_DMA_LEN, tag);
        }
        run_until_idle(&mut srv, &mut dev, &mut mem, &mut rng, 100);
        let cycles = srv.cycle() - start;
        let rate = total as f64 / cycles as f64;
        assert!(
            (rate - bw).abs() / bw < 0.02,
            "read: {rate} octets/cycle vs {bw}"
        );
    }
}

#[test]
fn out_of_range_and_malformed_accesses_are_faults() {
    let mut rng = Rng::new(5);
    let (mut mem, buf) = mem_with_buffer(4096);
    let secret = [0x5Au8; 64];
    mem.write(buf - 64, &secret).unwrap(); // host data below the buffer
    let before = mem.nonzero_outside(&[]);
    let mut srv = DmaServer::new(DmaConfig::default());
    let mut dev = Dev::default();
    dev.write(buf + 4090, &[1; 7]); // one octet past the end
    dev.write(buf - 1, &[1; 2]); // one octet before
    dev.write(0, &[1; 8]); // nowhere
    dev.write(u64::MAX - 3, &[1; 8]); // wraps
    dev.read(buf - 64, 64, 1); // host data outside
    dev.read(buf + 4000, 97, 2); // one past the end
    run_until_idle(&mut srv, &mut dev, &mut mem, &mut rng, 100);
    let faults = srv.faults();
    assert_eq!(faults.len(), 6);
    assert!(faults.iter().all(|f| f.kind == DmaFaultKind::OutOfRange));
    assert_eq!(faults.iter().filter(|f| f.read).count(), 2);
    assert_eq!(mem.nonzero_outside(&[]), before, "nothing was written");
    // Reads outside are answered with zeros, never with host data.
    assert_eq!(dev.done.len(), 2);
    for (_, d) in &dev.done {
        assert!(d.iter().all(|&b| b == 0));
    }

    // Protocol errors.
    let mut srv = DmaServer::new(DmaConfig::default());
    let mut dev = Dev::default();
    dev.data_beats(&[1; 8]); // data without header
    dev.wr_q.push_back(WrBeat {
        valid: true,
        hdr: true,
        len: 0,
        data: buf,
        keep: 0,
        last: false,
    });
    dev.data_beats(&[1; 3]); // after a len-0 header
    dev.wr_q.push_back(WrBeat {
        valid: true,
        hdr: true,
        len: 10,
        data: buf,
        keep: 0,
        last: false,
    });
    dev.data_beats(&[1; 16]); // 16 octets for len 10
    dev.wr_q.push_back(WrBeat {
        valid: true,
        hdr: true,
        len: 20,
        data: buf,
        keep: 0,
        last: false,
    });
    dev.data_beats(&[1; 12]); // 12 octets for len 20
    dev.wr_q.push_back(WrBeat {
        valid: true,
        hdr: true,
        len: 16,
        data: buf,
        keep: 0,
        last: false,
    });
    dev.wr_q.push_back(WrBeat {
        valid: true,
        hdr: false,
        len: 0,
        data: 0,
        keep: 5,
        last: false,
    });
    dev.wr_q.push_back(WrBeat {
        valid: true,
        hdr: false,
        len: 0,
        data: 0,
        keep: 8,
        last: true,
    });
    dev.read(buf, 0, 3); // bad length
    dev.read(buf, 5000, 4); // bad length
    dev.read(buf, 100, 5);
    dev.read(buf, 100, 5); // tag in use
    run_until_idle(&mut srv, &mut dev, &mut mem, &mut rng, 100);
    let mut kinds: Vec<_> = srv.faults().iter().map(|f| f.kind).collect();
    kinds.sort_by_key(|k| format!("{k:?}"));
    let mut want = vec![
        DmaFaultKind::DataWithoutHeader,
        DmaFaultKind::BadLength,
        DmaFaultKind::LengthMismatch,
        DmaFaultKind::LengthMismatch,
        DmaFaultKind::BadKeep,
        DmaFaultKind::BadLength,
        DmaFaultKind::BadLength,
        DmaFaultKind::TagInUse,
    ];
    want.sort_by_key(|k| format!("{k:?}"));
    assert_eq!(kinds, want);
    let mut b = [0u8; 32];
    mem.read(buf, &mut b).unwrap();
    assert_eq!(b, [0u8; 32], "no malformed write landed");
    assert_eq!(dev.done.len(), 1, "only the good read of tag 5 completes");

    // After all that the server still serves a good write.
    dev.write(buf + 1, &[7, 8, 9]);
    run_until_idle(&mut srv, &mut dev, &mut mem, &mut rng, 100);
    mem.read(buf, &mut b).unwrap();
    assert_eq!(&b[..5], &[0, 7, 8, 9, 0]);
}

#[test]
fn a_read_does_not_pass_an_earlier_write() {
    let mut rng = Rng::new(8);
    let (mut mem, buf) = mem_with_buffer(4096);
    let mut srv = DmaServer::new(DmaConfig {
        read_latency: 2,
        write_latency: 100,
        ..DmaConfig::default()
    });
    let mut dev = Dev::default();
    dev.write(buf + 8, &[0xEE; 16]);
    // The read is requested in the cycle right after the write's last beat
    // was taken, long before the write would land on its own.
    while !dev.wr_q.is_empty() {
        cycle(&mut srv, &mut dev, &mut mem);
    }
    dev.read(buf, 32, 9);
    run_until_idle(&mut srv, &mut dev, &mut mem, &mut rng, 100);
    assert!(dev.req_cycle[&9] < dev.wr_done[0] + 100);
    let mut want = vec![0u8; 32];
    want[8..24].fill(0xEE);
    assert_eq!(dev.done[0].1, want);
}

/// `impl_dma_pins!` maps the contract's port names; checked on a stand-in
/// with the accessor names a Verilated model would have.
#[derive(Default)]
struct PortNames {
    v: HashMap<&'static str, u64>,
}
#[allow(dead_code)]
impl PortNames {
    fn eval(&mut self) {}
    fn get_dma_wr_valid(&self) -> u64 {
        self.v["wv"]
    }
    fn get_dma_wr_hdr(&self) -> u64 {
        1
    }
    fn get_dma_wr_len(&self) -> u64 {
        12
    }
    fn get_dma_wr_data(&self) -> u64 {
        0x1234
    }
    fn get_dma_wr_keep(&self) -> u64 {
        0
    }
    fn get_dma_wr_last(&self) -> u64 {
        0
    }
    fn set_dma_wr_ready(&mut self, v: u64) {
        self.v.insert("wr", v);
    }
    fn get_dma_rd_req_valid(&self) -> u64 {
        0
    }
    fn get_dma_rd_req_addr(&self) -> u64 {
        0
    }
    fn get_dma_rd_req_len(&self) -> u64 {
        0
    }
    fn get_dma_rd_req_tag(&self) -> u64 {
        0
    }
    fn set_dma_rd_req_ready(&mut self, v: u64) {
        self.v.insert("rr", v);
    }
    fn set_dma_rd_cpl_valid(&mut self, v: u64) {
        self.v.insert("cv", v);
    }
    fn set_dma_rd_cpl_data(&mut self, _: u64) {}
    fn set_dma_rd_cpl_keep(&mut self, _: u64) {}
    fn set_dma_rd_cpl_last(&mut self, _: u64) {}
    fn set_dma_rd_cpl_tag(&mut self, _: u64) {}
    fn get_dma_rd_cpl_ready(&self) -> u64 {
        1
    }
}
rnic_sim::impl_dma_pins!(PortNames);

#[test]
fn impl_dma_pins_maps_port_names() {
    let mut p = PortNames::default();
    p.v.insert("wv", 1);
    let w = DmaPins::wr(&p);
    assert!(w.valid && w.hdr && w.len == 12 && w.data == 0x1234);
    let (mut mem, _) = mem_with_buffer(4096);
    let mut srv = DmaServer::new(DmaConfig::default());
    srv.step(&mut p, &mut mem);
    assert_eq!(p.v["wr"], 1);
    assert_eq!(p.v["rr"], 1);
    assert_eq!(p.v["cv"], 0);
}
