//! RDMAP (RFC 5040, RFC 7306): control field, opcodes, Read Request.
