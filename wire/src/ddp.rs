//! Direct Data Placement (RFC 5041): tagged and untagged headers.
