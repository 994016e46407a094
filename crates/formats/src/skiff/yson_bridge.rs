//! The two places Skiff needs YSON: yson32 payloads as [`Node`]s, and [`Node`]s as yson32.

use shapeshift_types::Node;

use super::error::{SkiffError, SkiffErrorKind};
use crate::yson::{self, YsonFormat};

/// Parses a yson32 payload (binary or text YSON: YT writes binary, some peers write text).
pub(crate) fn parse(bytes: &[u8]) -> Result<Node, SkiffError> {
    yson::from_slice(bytes).map_err(|e| {
        SkiffError::new(
            SkiffErrorKind::Corrupt,
            format!("bad YSON in yson32 payload: {e}"),
        )
    })
}

/// Appends a node as binary YSON (what YT writes into yson32 fields).
pub(crate) fn encode(node: &Node, out: &mut Vec<u8>) -> Result<(), SkiffError> {
    out.extend_from_slice(&yson::to_vec(node, YsonFormat::Binary));
    Ok(())
}
