//! Terminate message and its error codes (RFC 5040 §5.3, §8; RFC 5041 §7; RFC 5044 §8).
