//! MPA (RFC 5044, RFC 6581): FPDU framing, markers, MULPDU, request/reply frames.
