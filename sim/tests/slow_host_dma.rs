//! A host whose DMA cannot keep up with the wire (issue 37, item 4): the
//! receiving device drops the frames it cannot take before it acknowledges
//! them, and the sender's TCP recovers them.
//!
//! Two nodes over the link (`rtl_run::with_write_rig_link`, MTU 1500, a
//! 256 KiB receive window: the default 12 KiB fits `rx_fifo` whole); B's
//! host memory takes DMA writes at 4 octets a clock, half of what 10GbE
//! delivers. A 512 KiB RDMA Write, larger than the window, arrives at line
//! rate: B's `rx_fifo` fills and drops frames
//! (`cnt_rx_overflow`), none of them acknowledged, and A's fast retransmit
//! and RTO replay them. The Write completes, byte-exact, with nothing
//! written around it.

use rnic_driver::WcStatus;
use rnic_sim::link::LinkConfig;
use rnic_sim::rtl_run::{with_write_rig_link, CLOCKS_PER_US};

const LEN: usize = 512 << 10;
/// B's host: octets per clock its memory takes (10GbE is 8 at 156.25 MHz).
const SLOW_WRITE_BW: f64 = 4.0;

#[test]
fn frames_the_host_cannot_take_are_dropped_unacknowledged_and_resent() {
    with_write_rig_link(
        LinkConfig::default(),
        None,
        1500,
        LEN,
        Some(256 << 10),
        |i| (i * 29 + 7) as u8,
        |r| {
            let world = r.world;
            world.borrow().nodes[1]
                .hw
                .borrow_mut()
                .dma
                .set_write_bw(SLOW_WRITE_BW)
                .unwrap();
            r.post_write(9, true).unwrap();
            let (wc, clocks) = r.await_completion(20_000 * CLOCKS_PER_US);
            // A's completion means B acknowledged every octet; B's last DMA
            // writes may still be on their way to its memory.
            let settle = world.borrow().cycle();
            while world.borrow().cycle() - settle < 100 * CLOCKS_PER_US {
                world.borrow_mut().round();
                if world.borrow().nodes[1].hw.borrow().dma.idle() {
                    break;
                }
            }
            let w = world.borrow();
            let (a, b) = (w.nodes[0].hw.borrow(), w.nodes[1].hw.borrow());
            let dropped = b.core.get_cnt_rx_overflow();
            let fast = a.core.get_cnt_fretx_req();
            let timer = a.retx_writes.len();
            println!(
                "512 KiB Write into a host taking {SLOW_WRITE_BW} octets/clock: {clocks} clocks \
                 ({:.2} octets/clock), B dropped {dropped} frames at rx_fifo, A replayed \
                 {fast} times on duplicate ACKs and {timer} on its RTO",
                LEN as f64 / clocks as f64
            );
            let wc = wc.expect("A's Write completed");
            assert_eq!((wc.wr_id, wc.status), (9, WcStatus::Success));
            assert_eq!(r.first_wrong_octet(), None, "B's buffer: first wrong octet");
            assert!(dropped > 0, "the slow host made B drop frames");
            assert!(fast + timer as u64 > 0, "A resent what B dropped");
            assert!(b.dma.faults().is_empty(), "{:?}", b.dma.faults());
        },
    )
    .unwrap();
}
