//! The stream convention of `docs/rtl.md` on the Rust side: beats of 8
//! octets in little-endian lanes (octet 0 of the frame in `data[7:0]`),
//! `keep` = number of valid octets of the beat (8 but on the last beat, where
//! it is 1..=8; an empty frame is one beat with `last` and `keep == 0`).

/// One beat of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Beat {
    /// Octets `8i..8i+8` of the frame, octet `8i` in bits 7:0.
    pub data: u64,
    /// Valid octets in this beat (0..=8).
    pub keep: u8,
    /// Last beat of the frame.
    pub last: bool,
}

/// The beats of `frame` in order.
pub fn beats(frame: &[u8]) -> Vec<Beat> {
    if frame.is_empty() {
        return vec![Beat {
            data: 0,
            keep: 0,
            last: true,
        }];
    }
    let n = frame.len().div_ceil(8);
    frame
        .chunks(8)
        .enumerate()
        .map(|(i, c)| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            Beat {
                data: u64::from_le_bytes(b),
                keep: c.len() as u8,
                last: i + 1 == n,
            }
        })
        .collect()
}

/// Why a beat could not be appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BeatError {
    /// `keep` above 8.
    KeepTooLarge(u8),
    /// A beat that is not the last with `keep != 8`.
    ShortMiddleBeat(u8),
}

/// Collects beats into frames.
#[derive(Debug, Default)]
pub struct Assembler {
    cur: Vec<u8>,
    /// Beats refused (the frame in progress is discarded with them).
    pub errors: u64,
}

impl Assembler {
    /// Appends a beat; returns the frame on its `last` beat. A malformed beat
    /// discards the frame in progress up to and including its last beat and
    /// is reported as an error (counted in `errors`).
    pub fn push(&mut self, b: Beat) -> Result<Option<Vec<u8>>, BeatError> {
        let err = if b.keep > 8 {
            Some(BeatError::KeepTooLarge(b.keep))
        } else if !b.last && b.keep != 8 {
            Some(BeatError::ShortMiddleBeat(b.keep))
        } else {
            None
        };
        if let Some(e) = err {
            self.errors += 1;
            self.cur.clear();
            return Err(e);
        }
        self.cur
            .extend_from_slice(&b.data.to_le_bytes()[..b.keep as usize]);
        Ok(if b.last {
            Some(std::mem::take(&mut self.cur))
        } else {
            None
        })
    }

    /// Octets of the frame in progress.
    pub fn pending(&self) -> usize {
        self.cur.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_every_length() {
        for len in 0..40usize {
            let f: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(37)).collect();
            let bs = beats(&f);
            assert_eq!(bs.len(), len.div_ceil(8).max(1));
            let mut a = Assembler::default();
            let mut out = None;
            for b in bs {
                out = a.push(b).unwrap();
            }
            assert_eq!(out.unwrap(), f);
        }
        // Byte 0 in data[7:0].
        assert_eq!(beats(&[0xAB, 0xCD])[0].data, 0xCDAB);
    }

    #[test]
    fn malformed_beats_are_refused() {
        let mut a = Assembler::default();
        a.push(Beat {
            data: 1,
            keep: 8,
            last: false,
        })
        .unwrap();
        assert_eq!(
            a.push(Beat {
                data: 1,
                keep: 3,
                last: false
            }),
            Err(BeatError::ShortMiddleBeat(3))
        );
        assert_eq!(a.pending(), 0);
        assert_eq!(
            a.push(Beat {
                data: 1,
                keep: 9,
                last: true
            }),
            Err(BeatError::KeepTooLarge(9))
        );
        assert_eq!(a.errors, 2);
    }
}
