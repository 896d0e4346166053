//! The image's log channel: a SEGGER RTT up buffer (channel 0, "defmt")
//! that the defmt logger of the bare-metal image (`src/bin/rnic-fw.rs`)
//! writes, and that a debug probe (probe-rs), the co-simulator's store
//! snooper (`rnic-sim --fw cpu --fw-log`) or a reader on the debug port
//! empties. This module is the ring's arithmetic, kept apart from the
//! control block so that it is tested on the host.
//!
//! The mode is **NoBlockSkip** at the granularity of a defmt frame: a
//! frame's octets are copied after the published write position and the
//! write position is published at the frame's end only if every octet fit
//! before the reader's position; otherwise the frame is dropped whole (and
//! counted). The firmware never waits for a reader, and a reader never sees
//! a partial frame.

/// Octets of the up buffer.
pub const BUF_SIZE: usize = 4096;

/// SEGGER RTT channel mode (the low two bits of a channel's flags): skip a
/// write that does not fit.
pub const MODE_NO_BLOCK_SKIP: u32 = 0;

/// Free octets in an RTT ring of `size` octets with the target's write
/// position `write` and the host's read position `read` (one octet stays
/// free: `read == write` is empty).
pub const fn free(read: usize, write: usize, size: usize) -> usize {
    if read > write {
        read - write - 1
    } else {
        size - 1 - write + read
    }
}

/// One frame being written into the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Staging {
    /// Where the next octet goes.
    cursor: usize,
    /// The frame does not fit: it is dropped.
    skip: bool,
}

impl Staging {
    /// A frame starting at the published write position `write`.
    pub const fn new(write: usize) -> Self {
        Staging {
            cursor: write,
            skip: false,
        }
    }

    /// Copies `bytes` into the ring `buf` after the frame's octets so far,
    /// if they fit before the reader's position `read`; otherwise the frame
    /// is to be dropped. A `read` outside the ring (a confused reader)
    /// drops it too.
    pub fn stage(&mut self, buf: &mut [u8], read: usize, bytes: &[u8]) {
        let size = buf.len();
        if self.skip {
            return;
        }
        if read >= size || self.cursor >= size || bytes.len() > free(read, self.cursor, size) {
            self.skip = true;
            return;
        }
        let first = bytes.len().min(size - self.cursor);
        buf[self.cursor..self.cursor + first].copy_from_slice(&bytes[..first]);
        buf[..bytes.len() - first].copy_from_slice(&bytes[first..]);
        self.cursor = (self.cursor + bytes.len()) % size;
    }

    /// The write position to publish at the frame's end, or `None` if the
    /// frame is dropped.
    pub fn finish(&self) -> Option<usize> {
        (!self.skip).then_some(self.cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_leaves_one_octet() {
        assert_eq!(free(0, 0, 16), 15);
        assert_eq!(free(5, 4, 16), 0);
        assert_eq!(free(0, 15, 16), 0);
        assert_eq!(free(10, 5, 16), 4);
        assert_eq!(free(5, 10, 16), 10);
    }

    /// A frame that fits wraps around the ring's end and is published; one
    /// that does not is dropped whole, the published position unchanged.
    #[test]
    fn frames_wrap_or_are_skipped_whole() {
        let mut buf = [0u8; 8];
        let mut s = Staging::new(6);
        s.stage(&mut buf, 4, b"ab");
        s.stage(&mut buf, 4, b"cd");
        assert_eq!(s.finish(), Some(2));
        assert_eq!(&buf, b"cd\0\0\0\0ab");
        // 1 octet free between write 2 and read 4: a 3-octet frame is skipped
        let mut s = Staging::new(2);
        s.stage(&mut buf, 4, b"x");
        s.stage(&mut buf, 4, b"yz");
        assert_eq!(s.finish(), None);
        // later pieces of a skipped frame are not written either
        s.stage(&mut buf, 7, b"w");
        assert_eq!(s.finish(), None);
        assert_eq!(&buf, b"cdx\0\0\0ab");
        // a reader position outside the ring drops the frame
        let mut s = Staging::new(0);
        s.stage(&mut buf, 8, b"q");
        assert_eq!(s.finish(), None);
    }
}
