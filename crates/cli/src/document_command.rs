//! Whole-document conversion for `shapeshift convert` when either side is `yaml`: one node
//! (a YSON, JSON or YAML document, such as a configuration file) read and written whole,
//! not a table stream. YAML's convention for what plain YAML cannot say (attributes, uint64,
//! non-UTF-8 strings) is in `shapeshift_formats::yaml`; JSON's is YT's (`$attributes`,
//! `$type`), as in `shapeshift_formats::json`.

use std::io::{Read, Write};

use shapeshift_formats::registry::FormatKind;
use shapeshift_formats::yson::{self, YsonFormat};
use shapeshift_formats::{json, yaml};
use shapeshift_types::Node;

/// A side of `shapeshift convert`: a row format of the registry, or YAML (documents only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvertFormat {
    Rows(FormatKind),
    Yaml,
}

/// Parses a `--from`/`--to` name for clap.
pub fn parse_convert_format(name: &str) -> Result<ConvertFormat, String> {
    if name == "yaml" {
        return Ok(ConvertFormat::Yaml);
    }
    FormatKind::from_name(name)
        .map(ConvertFormat::Rows)
        .ok_or_else(|| {
            let names: Vec<&str> = FormatKind::ALL.iter().map(|k| k.name()).collect();
            format!(
                "unknown format '{name}' (one of: {}, yaml)",
                names.join(", ")
            )
        })
}

fn unsupported(side: ConvertFormat) -> String {
    let name = match side {
        ConvertFormat::Rows(kind) => kind.name(),
        ConvertFormat::Yaml => "yaml",
    };
    format!(
        "{name} is a row format: a YAML conversion is of one whole document, in yson, \
         yson-text, json or yaml"
    )
}

fn read_node(format: ConvertFormat, bytes: &[u8]) -> Result<Node, String> {
    match format {
        ConvertFormat::Yaml => yaml::from_slice(bytes).map_err(|e| e.to_string()),
        ConvertFormat::Rows(FormatKind::Yson | FormatKind::YsonText) => {
            yson::from_slice(bytes).map_err(|e| format!("yson: {e}"))
        }
        ConvertFormat::Rows(FormatKind::Json) => {
            json::node_from_document(bytes).map_err(|e| e.to_string())
        }
        other => Err(unsupported(other)),
    }
}

fn write_node(format: ConvertFormat, node: &Node) -> Result<Vec<u8>, String> {
    Ok(match format {
        ConvertFormat::Yaml => yaml::to_string(node)
            .map_err(|e| e.to_string())?
            .into_bytes(),
        ConvertFormat::Rows(FormatKind::Yson) => yson::to_vec(node, YsonFormat::Binary),
        ConvertFormat::Rows(FormatKind::YsonText) => {
            let mut text = yson::to_vec(node, YsonFormat::Pretty);
            text.push(b'\n');
            text
        }
        ConvertFormat::Rows(FormatKind::Json) => {
            let mut text = json::node_to_document(node);
            text.push(b'\n');
            text
        }
        other => return Err(unsupported(other)),
    })
}

/// Converts the one document of `input` from `from` to `to`.
///
/// # Errors
/// A message naming the format, the byte offset (and for YAML line and column) and the
/// problem; or that a side is a row format with no document form.
pub fn convert(
    from: ConvertFormat,
    to: ConvertFormat,
    mut input: Box<dyn Read>,
    mut output: Box<dyn Write>,
) -> Result<(), String> {
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .map_err(|e| format!("reading the input: {e}"))?;
    let node = read_node(from, &bytes)?;
    let out = write_node(to, &node)?;
    output
        .write_all(&out)
        .and_then(|()| output.flush())
        .map_err(|e| format!("writing the output: {e}"))
}
