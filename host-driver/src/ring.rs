//! Ring bookkeeping shared by work queues and completion queues: free-running
//! 32-bit indices (as the doorbells carry them, `abi::doorbell`) and the
//! owner/phase rule for device-written rings (`abi::cqe`).

/// Producer side of a work queue ring in host memory.
#[derive(Debug, Clone)]
pub struct WorkRing {
    entries: u32,
    producer: u32,
    consumer: u32,
}

impl WorkRing {
    /// A ring of `entries` slots (a power of two).
    pub fn new(entries: u32) -> Option<Self> {
        entries.is_power_of_two().then_some(WorkRing {
            entries,
            producer: 0,
            consumer: 0,
        })
    }
    /// Slots free for new work requests.
    pub fn free(&self) -> u32 {
        self.entries - self.producer.wrapping_sub(self.consumer)
    }
    /// Claims the next slot; returns its index in the ring, or `None` when full.
    pub fn claim(&mut self) -> Option<u32> {
        (self.free() > 0).then(|| {
            let slot = self.producer & (self.entries - 1);
            self.producer = self.producer.wrapping_add(1);
            slot
        })
    }
    /// The slot `ahead` places past the next free one, if that many are
    /// free (to fill several slots before claiming them all at once).
    pub fn peek(&self, ahead: u32) -> Option<u32> {
        (ahead < self.free()).then(|| self.producer.wrapping_add(ahead) & (self.entries - 1))
    }
    /// The free-running producer index to write to the doorbell.
    pub fn producer(&self) -> u32 {
        self.producer
    }
    /// Retires `n` slots whose completions have been seen (or flushed).
    pub fn retire(&mut self, n: u32) {
        debug_assert!(n <= self.producer.wrapping_sub(self.consumer));
        self.consumer = self
            .consumer
            .wrapping_add(n.min(self.producer.wrapping_sub(self.consumer)));
    }
}

/// Consumer side of a device-written ring (CQ or event queue): an entry is new
/// when its owner bit equals the current phase, which starts at 1 and flips
/// each time the consumer index wraps.
#[derive(Debug, Clone)]
pub struct CompletionRing {
    entries: u32,
    consumer: u32,
}

impl CompletionRing {
    /// A ring of `entries` slots (a power of two).
    pub fn new(entries: u32) -> Option<Self> {
        entries.is_power_of_two().then_some(CompletionRing {
            entries,
            consumer: 0,
        })
    }
    /// Slot index of the next entry to look at.
    pub fn slot(&self) -> u32 {
        self.consumer & (self.entries - 1)
    }
    /// The phase an entry at [`Self::slot`] has when it is new.
    pub fn phase(&self) -> bool {
        (self.consumer / self.entries).is_multiple_of(2)
    }
    /// Whether an entry with owner bit `owner` at the current slot is new.
    pub fn is_new(&self, owner: bool) -> bool {
        owner == self.phase()
    }
    /// Consumes the current entry.
    pub fn advance(&mut self) {
        self.consumer = self.consumer.wrapping_add(1);
    }
    /// The free-running consumer index to write to the CQ doorbell.
    pub fn consumer(&self) -> u32 {
        self.consumer
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnic_wire::abi::cqe::{Cqe, WcOpcode, WcStatus, CQE_SIZE};

    /// Writes CQEs as the ABI says the device does: the producer's phase
    /// starts at 1 and flips on each wrap.
    fn device_write(ring: &mut [u8], entries: u32, producer: u32, wr_id: u64) {
        let slot = (producer % entries) as usize;
        let phase = (producer / entries).is_multiple_of(2);
        let c = Cqe {
            wr_id,
            byte_len: 0,
            qpn: 1,
            opcode: WcOpcode::Send,
            status: WcStatus::Success,
            flags: 0,
            imm_or_inv: 0,
            term_cause: 0,
            phase,
        };
        c.emit(&mut ring[slot * CQE_SIZE..]).unwrap();
    }

    fn poll(r: &mut CompletionRing, ring: &[u8]) -> Option<u64> {
        let b = &ring[r.slot() as usize * CQE_SIZE..];
        if !r.is_new(Cqe::phase_of(b).unwrap()) {
            return None;
        }
        r.advance();
        Some(Cqe::parse(b).unwrap().wr_id)
    }

    #[test]
    fn completions_in_order_across_three_wraps() {
        let entries = 4;
        let mut mem = vec![0u8; entries as usize * CQE_SIZE];
        let mut r = CompletionRing::new(entries).unwrap();
        assert_eq!(poll(&mut r, &mem), None, "zeroed ring holds nothing");
        let mut next = 0u64;
        for round in 0..12u32 {
            // The device writes up to a full ring, the host drains it.
            let burst = 1 + round % entries;
            for i in 0..burst {
                device_write(&mut mem, entries, r.consumer() + i, next + i as u64);
            }
            for _ in 0..burst {
                assert_eq!(poll(&mut r, &mem), Some(next));
                next += 1;
            }
            assert_eq!(
                poll(&mut r, &mem),
                None,
                "round {round}: stale entries are not new"
            );
        }
    }

    #[test]
    fn work_ring_fills_and_drains() {
        assert!(WorkRing::new(6).is_none());
        let mut w = WorkRing::new(4).unwrap();
        let slots: Vec<u32> = (0..4).map(|_| w.claim().unwrap()).collect();
        assert_eq!(slots, vec![0, 1, 2, 3]);
        assert_eq!(w.claim(), None, "a full ring refuses");
        w.retire(2);
        assert_eq!(w.free(), 2);
        assert_eq!(w.peek(1), Some(1));
        assert_eq!(w.peek(2), None, "only two free");
        assert_eq!(w.claim(), Some(0));
        assert_eq!(w.producer(), 5);
    }

    #[test]
    fn work_ring_index_wraps_u32() {
        let mut w = WorkRing {
            entries: 8,
            producer: u32::MAX - 1,
            consumer: u32::MAX - 1,
        };
        for _ in 0..8 {
            w.claim().unwrap();
        }
        assert_eq!(w.claim(), None);
        w.retire(8);
        assert_eq!(w.free(), 8);
    }
}
