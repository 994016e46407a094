//! The `.proto` text of a schema's row message, for other protobuf libraries.

use std::fmt::Write as _;

use shapeshift_types::{PrimitiveType, TableSchema, Type};

/// The `.proto` (proto3) file describing the row message of `schema`, named `message_name`,
/// as the dynamic codec writes it. Helper messages are named `<message_name>_<n>`; fields of
/// columns or members whose names are not protobuf identifiers are named `field_<number>`
/// (the original name is in a comment). `null`/`void` columns have no field (their number is
/// reserved).
pub fn proto_schema(schema: &TableSchema, message_name: &str) -> String {
    let mut generator = Generator {
        prefix: message_name.to_owned(),
        messages: Vec::new(),
    };
    let fields: Vec<(String, &Type)> = schema
        .columns
        .iter()
        .map(|c| (c.name.clone(), &c.ty))
        .collect();
    let body = generator.message_body(&fields, false);
    let mut out = String::from("syntax = \"proto3\";\n\n");
    let _ = writeln!(out, "message {message_name} {{\n{body}}}\n");
    for (name, body) in &generator.messages {
        let _ = writeln!(out, "message {name} {{\n{body}}}\n");
    }
    out
}

struct Generator {
    prefix: String,
    messages: Vec<(String, String)>,
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn may_be_empty(ty: &Type) -> bool {
    matches!(
        ty.untagged(),
        Type::Primitive(PrimitiveType::Null | PrimitiveType::Void)
            | Type::Optional(_)
            | Type::List(_)
            | Type::Dict { .. }
    )
}

fn scalar_name(ty: &Type) -> Option<&'static str> {
    Some(match ty.untagged() {
        Type::Primitive(p) => match p {
            PrimitiveType::Float => "float",
            PrimitiveType::Double => "double",
            PrimitiveType::Bool => "bool",
            PrimitiveType::Utf8 | PrimitiveType::Json => "string",
            PrimitiveType::String | PrimitiveType::Uuid | PrimitiveType::Yson => "bytes",
            PrimitiveType::Null | PrimitiveType::Void => return None,
            other => match other.physical() {
                shapeshift_types::PhysicalType::Uint64 => "uint64",
                _ => "int64",
            },
        },
        Type::Decimal { .. } => "bytes",
        _ => return None,
    })
}

impl Generator {
    fn new_message(&mut self, body: String) -> String {
        let name = format!("{}_{}", self.prefix, self.messages.len() + 1);
        self.messages.push((name.clone(), body));
        name
    }

    /// A message `{ T value = 1; }`.
    fn wrapper(&mut self, ty: &Type) -> String {
        let body = self.message_body(&[("value".to_owned(), ty)], false);
        self.new_message(body)
    }

    /// The (label, type name) of a field of type `ty`; `None` for null types.
    fn field_type(&mut self, ty: &Type) -> Option<(&'static str, String)> {
        if let Some(scalar) = scalar_name(ty) {
            return Some(("", scalar.to_owned()));
        }
        Some(match ty.untagged() {
            Type::Primitive(_) => return None,
            Type::Optional(item) => {
                if may_be_empty(item) {
                    ("", self.wrapper(item))
                } else {
                    let (_, name) = self.field_type(item)?;
                    (
                        if scalar_name(item).is_some() {
                            "optional "
                        } else {
                            ""
                        },
                        name,
                    )
                }
            }
            Type::List(item) => {
                let name = if may_be_empty(item) {
                    self.wrapper(item)
                } else {
                    self.field_type(item)?.1
                };
                ("repeated ", name)
            }
            Type::Struct(members) => {
                let fields: Vec<(String, &Type)> =
                    members.iter().map(|m| (m.name.clone(), &m.ty)).collect();
                let body = self.message_body(&fields, false);
                ("", self.new_message(body))
            }
            Type::Tuple(elements) => {
                let fields: Vec<(String, &Type)> = elements
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (format!("_{}", i + 1), t))
                    .collect();
                let body = self.message_body(&fields, false);
                ("", self.new_message(body))
            }
            Type::VariantStruct(members) => {
                let fields: Vec<(String, &Type)> =
                    members.iter().map(|m| (m.name.clone(), &m.ty)).collect();
                let body = self.message_body(&fields, true);
                ("", self.new_message(body))
            }
            Type::VariantTuple(elements) => {
                let fields: Vec<(String, &Type)> = elements
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (format!("_{}", i + 1), t))
                    .collect();
                let body = self.message_body(&fields, true);
                ("", self.new_message(body))
            }
            Type::Dict { key, value } => {
                let body = self.message_body(
                    &[("key".to_owned(), key), ("value".to_owned(), value)],
                    false,
                );
                ("repeated ", self.new_message(body))
            }
            Type::Tagged { .. } | Type::Decimal { .. } => {
                unreachable!("untagged; decimals are scalars")
            }
        })
    }

    fn message_body(&mut self, fields: &[(String, &Type)], oneof: bool) -> String {
        let mut body = String::new();
        let indent = if oneof { "    " } else { "  " };
        let mut reserved = Vec::new();
        for (i, (name, ty)) in fields.iter().enumerate() {
            let number = i + 1;
            // In a oneof, presence is the point: types that may write nothing are wrapped.
            let field_type = if oneof && may_be_empty(ty) {
                Some(("", self.wrapper(ty)))
            } else {
                self.field_type(ty)
            };
            let Some((label, type_name)) = field_type else {
                reserved.push(number);
                continue;
            };
            let label = if oneof { "" } else { label };
            let field_name = if is_identifier(name) {
                name.clone()
            } else {
                format!("field_{number}")
            };
            let comment = if is_identifier(name) {
                String::new()
            } else {
                format!(" // {name:?}")
            };
            let _ = writeln!(
                body,
                "{indent}{label}{type_name} {field_name} = {number};{comment}"
            );
        }
        if oneof {
            body = format!("  oneof alternative {{\n{body}  }}\n");
        }
        if !reserved.is_empty() {
            let list: Vec<String> = reserved.iter().map(|n| n.to_string()).collect();
            let _ = writeln!(body, "  reserved {};", list.join(", "));
        }
        body
    }
}
