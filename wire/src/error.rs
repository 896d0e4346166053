use core::fmt;

/// Why a buffer could not be parsed or emitted. Every parser in this crate
/// returns one of these for bad input; none of them panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// The buffer is shorter than the header, or than a length field says.
    Truncated,
    /// A length field is inconsistent with the format (e.g. an MPA ULPDU
    /// length that does not fit, private data over RFC 5044's 512 octets).
    BadLength,
    /// A version field this implementation does not speak (DDP/RDMAP
    /// version other than 1, MPA revision other than 1 or 2).
    BadVersion,
    /// An opcode or code point that is reserved or unknown.
    BadOpcode,
    /// The MPA CRC field does not match the CRC32c of the FPDU.
    BadCrc,
    /// The MPA request/reply key is not the one RFC 5044 §7.1 defines.
    BadKey,
    /// A field holds a value outside its defined range, or reserved bits
    /// that must be zero are set.
    BadField,
    /// A marker's FPDU pointer does not point to an FPDU header.
    BadMarker,
    /// The output buffer is too small for `emit`.
    BufferTooSmall,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Error::Truncated => "buffer truncated",
            Error::BadLength => "inconsistent length field",
            Error::BadVersion => "unsupported version",
            Error::BadOpcode => "reserved or unknown opcode",
            Error::BadCrc => "MPA CRC mismatch",
            Error::BadKey => "bad MPA request/reply key",
            Error::BadField => "field out of range or reserved bits set",
            Error::BadMarker => "MPA marker does not point to an FPDU header",
            Error::BufferTooSmall => "output buffer too small",
        };
        f.write_str(s)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// Result with this crate's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;
