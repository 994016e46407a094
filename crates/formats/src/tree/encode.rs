//! Writing typed values and rows as tree items.

use shapeshift_types::{check_value, PrimitiveType, TableSchema, Type, Value};

use super::{is_text, mismatch, Dialect};
use crate::table::position::Control;
use crate::table::yson_binary;
use crate::table::FormatError;

/// Writes a control record.
pub(crate) fn encode_control<D: Dialect>(out: &mut Vec<u8>, control: Control) {
    D::map(out, 1);
    match control {
        Control::TableIndex(i) => {
            D::text(out, b"table_index");
            D::uint(out, i as u64);
        }
        Control::RowIndex(i) => {
            D::text(out, b"row_index");
            D::int(out, i);
        }
        Control::RangeIndex(i) => {
            D::text(out, b"range_index");
            D::int(out, i);
        }
        Control::KeySwitch => {
            D::text(out, b"key_switch");
            D::boolean(out, true);
        }
    }
}

/// Writes `value` of `ty` (the caller has checked it with `check_value`).
///
/// # Errors
/// A message when the value's shape does not fit the type.
pub(crate) fn encode_value<D: Dialect>(
    out: &mut Vec<u8>,
    value: &Value,
    ty: &Type,
) -> Result<(), String> {
    match (ty, value) {
        (Type::Tagged { item, .. }, _) => encode_value::<D>(out, value, item)?,
        (_, Value::Null) => D::nil(out),
        (Type::Primitive(PrimitiveType::Yson), Value::Any(node))
        | (Type::Optional(_), Value::Any(node)) => {
            let mut bytes = Vec::new();
            yson_binary::node(&mut bytes, node);
            D::yson(out, &bytes);
        }
        (Type::Optional(item), Value::Some(inner)) if item.is_nullable() => {
            D::array(out, 1);
            encode_value::<D>(out, inner, item)?;
        }
        (Type::Optional(item), _) => encode_value::<D>(out, value, item)?,
        (_, Value::Bool(v)) => D::boolean(out, *v),
        (_, Value::Int64(v)) => D::int(out, *v),
        (_, Value::Uint64(v)) => D::uint(out, *v),
        (_, Value::Double(v)) => D::double(out, *v),
        (_, Value::String(v)) if is_text(ty) => {
            let text =
                crate::utf8::text(v).map_err(|_| "invalid UTF-8 in a utf8 value".to_owned())?;
            D::text(out, text.as_bytes());
        }
        (_, Value::String(v)) => D::bytes(out, v),
        (Type::List(item), Value::List(items)) => {
            D::array(out, items.len());
            for v in items {
                encode_value::<D>(out, v, item)?;
            }
        }
        (Type::Struct(members), Value::Tuple(items)) if members.len() == items.len() => {
            D::array(out, items.len());
            for (member, v) in members.iter().zip(items) {
                encode_value::<D>(out, v, &member.ty)?;
            }
        }
        (Type::Tuple(elements), Value::Tuple(items)) if elements.len() == items.len() => {
            D::array(out, items.len());
            for (element, v) in elements.iter().zip(items) {
                encode_value::<D>(out, v, element)?;
            }
        }
        (Type::VariantStruct(members), Value::Variant(index, v)) => {
            let member = members
                .get(*index as usize)
                .ok_or_else(|| mismatch(value, ty))?;
            D::array(out, 2);
            D::uint(out, u64::from(*index));
            encode_value::<D>(out, v, &member.ty)?;
        }
        (Type::VariantTuple(elements), Value::Variant(index, v)) => {
            let element = elements
                .get(*index as usize)
                .ok_or_else(|| mismatch(value, ty))?;
            D::array(out, 2);
            D::uint(out, u64::from(*index));
            encode_value::<D>(out, v, element)?;
        }
        (Type::Dict { key, value: item }, Value::Dict(pairs)) => {
            D::map(out, pairs.len());
            for (k, v) in pairs {
                encode_value::<D>(out, k, key)?;
                encode_value::<D>(out, v, item)?;
            }
        }
        _ => return Err(mismatch(value, ty)),
    }
    Ok(())
}

/// Appends one row of `schema` to `out` as an array of its column items, each checked
/// against its column type; on error `out` is left as it was.
///
/// # Errors
/// A [`FormatError`] of `format` naming the column whose value does not fit, or a row of
/// the wrong width.
pub(crate) fn encode_row<D: Dialect>(
    format: &'static str,
    schema: &TableSchema,
    values: &[Value],
    out: &mut Vec<u8>,
) -> Result<(), FormatError> {
    if values.len() != schema.columns.len() {
        return Err(FormatError::new(
            format,
            format!(
                "the schema has {} columns, the row has {} values",
                schema.columns.len(),
                values.len()
            ),
        ));
    }
    let start = out.len();
    D::array(out, values.len());
    for (value, column) in values.iter().zip(&schema.columns) {
        let result = check_value(value, &column.ty)
            .map_err(|e| e.to_string())
            .and_then(|()| encode_value::<D>(out, value, &column.ty));
        if let Err(e) = result {
            out.truncate(start);
            return Err(FormatError::new(
                format,
                format!("column \"{}\": {e}", column.name),
            ));
        }
    }
    Ok(())
}
