//! The two places Skiff needs YSON: yson32 payloads as [`Node`]s, and [`Node`]s as yson32.

use shapeshift_types::Node;

use super::error::{SkiffError, SkiffErrorKind};

/// Parses a yson32 payload (binary or text YSON, as YT accepts both).
pub(crate) fn parse(bytes: &[u8]) -> Result<Node, SkiffError> {
    let _ = bytes;
    Err(SkiffError::new(
        SkiffErrorKind::Corrupt,
        "yson32 payload: YSON decoding is not wired yet",
    ))
}

/// Encodes a node as binary YSON for a yson32 field.
pub(crate) fn encode(node: &Node, out: &mut Vec<u8>) -> Result<(), SkiffError> {
    let _ = (node, out);
    Err(SkiffError::value(
        "yson32 value: YSON encoding is not wired yet",
    ))
}
