//! Thrift: checked against Apache Thrift's own Rust library (the `thrift` crate) both ways.
//!
//! The test walks a row through the library's `TBinaryProtocol`/`TCompactProtocol` field by
//! field, as code generated from the documented IDL would (field `i + 1` per column,
//! wrapper structs for nullable items, unions for variants, `list<struct{1: key, 2: value}>`
//! for dicts), and checks: the library reads what we write to the same values, we read what
//! the library writes, and both write the same bytes.

use std::io::Cursor;

use ::thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TFieldIdentifier, TInputProtocol, TListIdentifier, TOutputProtocol, TStructIdentifier, TType,
};
use proptest::prelude::*;
use shapeshift_formats::thrift::{Protocol, RowCodec};
use shapeshift_formats::yson::{self, YsonFormat};
use shapeshift_types::{ColumnSchema, PhysicalType, PrimitiveType as P, TableSchema, Type, Value};

use super::PROTOCOLS;
use crate::support::*;

type Peer<T> = ::thrift::Result<T>;

/// The IDL type of a present field of `ty` (`None`: never written).
fn field_ttype(ty: &Type) -> Option<TType> {
    Some(match ty.untagged() {
        Type::Primitive(p) => match p {
            P::Int8 => TType::I08,
            P::Int16 | P::Uint8 => TType::I16,
            P::Int32 | P::Uint16 | P::Date | P::Date32 => TType::I32,
            P::Float | P::Double => TType::Double,
            P::Bool => TType::Bool,
            P::String | P::Utf8 | P::Json | P::Uuid | P::Yson => TType::String,
            P::Null | P::Void => return None,
            _ => TType::I64,
        },
        Type::Decimal { .. } => TType::String,
        Type::Optional(item) if item.is_nullable() => TType::Struct,
        Type::Optional(item) => return field_ttype(item),
        Type::List(_) | Type::Dict { .. } => TType::List,
        _ => TType::Struct,
    })
}

fn element_ttype(ty: &Type) -> TType {
    if ty.is_nullable() {
        TType::Struct
    } else {
        field_ttype(ty).unwrap_or(TType::Struct)
    }
}

fn members(ty: &Type) -> Vec<&Type> {
    match ty {
        Type::Struct(m) | Type::VariantStruct(m) => m.iter().map(|m| &m.ty).collect(),
        Type::Tuple(t) | Type::VariantTuple(t) => t.iter().collect(),
        _ => Vec::new(),
    }
}

fn write_struct(o: &mut dyn TOutputProtocol, types: &[&Type], values: &[Value]) -> Peer<()> {
    o.write_struct_begin(&TStructIdentifier::new("S"))?;
    for (i, (ty, v)) in types.iter().zip(values).enumerate() {
        write_field(o, i as i16 + 1, ty, v)?;
    }
    o.write_field_stop()?;
    o.write_struct_end()
}

fn write_field(o: &mut dyn TOutputProtocol, id: i16, ty: &Type, v: &Value) -> Peer<()> {
    let ty = ty.untagged();
    match (ty, v) {
        (_, Value::Null) if ty.is_nullable() => Ok(()),
        (Type::Optional(item), Value::Some(inner)) => {
            o.write_field_begin(&TFieldIdentifier::new("f", TType::Struct, id))?;
            write_struct(o, &[item], std::slice::from_ref(inner))?;
            o.write_field_end()
        }
        (Type::Optional(item), v) => write_field(o, id, item, v),
        _ => {
            o.write_field_begin(&TFieldIdentifier::new("f", field_ttype(ty).unwrap(), id))?;
            write_value(o, ty, v)?;
            o.write_field_end()
        }
    }
}

fn write_element(o: &mut dyn TOutputProtocol, ty: &Type, v: &Value) -> Peer<()> {
    if ty.is_nullable() {
        return write_struct(o, &[ty], std::slice::from_ref(v));
    }
    write_value(o, ty.untagged(), v)
}

fn write_value(o: &mut dyn TOutputProtocol, ty: &Type, v: &Value) -> Peer<()> {
    let int = match v {
        Value::Int64(i) => *i,
        Value::Uint64(u) => *u as i64,
        _ => 0,
    };
    match (ty, v) {
        (Type::Primitive(p), _) => match (p, v) {
            (P::Int8, _) => o.write_i8(int as i8),
            (P::Int16 | P::Uint8, _) => o.write_i16(int as i16),
            (P::Int32 | P::Uint16 | P::Date | P::Date32, _) => o.write_i32(int as i32),
            (P::Float | P::Double, Value::Double(d)) => o.write_double(*d),
            (P::Bool, Value::Bool(b)) => o.write_bool(*b),
            (P::Utf8 | P::Json, Value::String(s)) => {
                o.write_string(std::str::from_utf8(s).unwrap())
            }
            (P::String | P::Uuid, Value::String(s)) => o.write_bytes(s),
            (P::Yson, Value::Any(node)) => o.write_bytes(&yson::to_vec(node, YsonFormat::Binary)),
            _ => o.write_i64(int),
        },
        (Type::Decimal { .. }, Value::String(s)) => o.write_bytes(s),
        (Type::List(item), Value::List(items)) => {
            o.write_list_begin(&TListIdentifier::new(
                element_ttype(item),
                items.len() as i32,
            ))?;
            items.iter().try_for_each(|v| write_element(o, item, v))?;
            o.write_list_end()
        }
        (Type::Dict { key, value }, Value::Dict(entries)) => {
            o.write_list_begin(&TListIdentifier::new(TType::Struct, entries.len() as i32))?;
            for (k, v) in entries {
                write_struct(o, &[key, value], &[k.clone(), v.clone()])?;
            }
            o.write_list_end()
        }
        (Type::VariantStruct(_) | Type::VariantTuple(_), Value::Variant(index, payload)) => {
            let alt = members(ty)[*index as usize];
            o.write_struct_begin(&TStructIdentifier::new("U"))?;
            o.write_field_begin(&TFieldIdentifier::new(
                "f",
                element_ttype(alt),
                *index as i16 + 1,
            ))?;
            write_element(o, alt, payload)?;
            o.write_field_end()?;
            o.write_field_stop()?;
            o.write_struct_end()
        }
        (_, Value::Tuple(items)) => write_struct(o, &members(ty), items),
        _ => panic!("value {v:?} of {ty:?}"),
    }
}

fn read_struct(i: &mut dyn TInputProtocol, types: &[&Type]) -> Peer<Vec<Value>> {
    i.read_struct_begin()?;
    let mut values = vec![Value::Null; types.len()];
    loop {
        let field = i.read_field_begin()?;
        if field.field_type == TType::Stop {
            break;
        }
        let index = field.id.expect("a field id") as usize - 1;
        let ty = types[index].untagged();
        assert_eq!(
            Some(field.field_type),
            field_ttype(ty),
            "field {}",
            index + 1
        );
        values[index] = match ty {
            Type::Optional(item) if item.is_nullable() => {
                Value::Some(Box::new(read_struct(i, &[item])?.remove(0)))
            }
            Type::Optional(item) => read_value(i, item.untagged())?,
            _ => read_value(i, ty)?,
        };
        i.read_field_end()?;
    }
    i.read_struct_end()?;
    Ok(values)
}

fn read_element(i: &mut dyn TInputProtocol, ty: &Type) -> Peer<Value> {
    if ty.is_nullable() {
        return Ok(read_struct(i, &[ty])?.remove(0));
    }
    read_value(i, ty.untagged())
}

fn read_value(i: &mut dyn TInputProtocol, ty: &Type) -> Peer<Value> {
    Ok(match ty {
        Type::Primitive(p) => {
            let int = match p {
                P::Int8 => i64::from(i.read_i8()?),
                P::Int16 | P::Uint8 => i64::from(i.read_i16()?),
                P::Int32 | P::Uint16 | P::Date | P::Date32 => i64::from(i.read_i32()?),
                P::Float | P::Double => return Ok(Value::Double(i.read_double()?)),
                P::Bool => return Ok(Value::Bool(i.read_bool()?)),
                P::Utf8 | P::Json => return Ok(Value::String(i.read_string()?.into_bytes())),
                P::String | P::Uuid => return Ok(Value::String(i.read_bytes()?)),
                P::Yson => return Ok(Value::Any(yson::from_slice(&i.read_bytes()?).unwrap())),
                P::Null | P::Void => return Ok(Value::Null),
                _ => i.read_i64()?,
            };
            match p.physical() {
                PhysicalType::Uint64 => Value::Uint64(int as u64),
                _ => Value::Int64(int),
            }
        }
        Type::Decimal { .. } => Value::String(i.read_bytes()?),
        Type::List(item) => {
            let header = i.read_list_begin()?;
            let items = (0..header.size)
                .map(|_| read_element(i, item))
                .collect::<Peer<_>>()?;
            i.read_list_end()?;
            Value::List(items)
        }
        Type::Dict { key, value } => {
            let header = i.read_list_begin()?;
            let mut entries = Vec::new();
            for _ in 0..header.size {
                let mut kv = read_struct(i, &[key, value])?;
                let v = kv.pop().unwrap();
                entries.push((kv.pop().unwrap(), v));
            }
            i.read_list_end()?;
            Value::Dict(entries)
        }
        Type::VariantStruct(_) | Type::VariantTuple(_) => {
            i.read_struct_begin()?;
            let field = i.read_field_begin()?;
            let index = field.id.expect("a field id") as usize - 1;
            let payload = read_element(i, members(ty)[index])?;
            i.read_field_end()?;
            assert_eq!(
                i.read_field_begin()?.field_type,
                TType::Stop,
                "a union holds one field"
            );
            i.read_struct_end()?;
            Value::Variant(index as u32, Box::new(payload))
        }
        Type::Tagged { item, .. } => read_value(i, item)?,
        _ => Value::Tuple(read_struct(i, &members(ty))?),
    })
}

fn peer_write(protocol: Protocol, types: &[&Type], row: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    match protocol {
        Protocol::Binary => {
            write_struct(&mut TBinaryOutputProtocol::new(&mut out, true), types, row)
        }
        Protocol::Compact => write_struct(&mut TCompactOutputProtocol::new(&mut out), types, row),
    }
    .unwrap();
    out
}

fn peer_read(protocol: Protocol, types: &[&Type], bytes: &[u8]) -> Vec<Value> {
    let mut input = Cursor::new(bytes);
    let values = match protocol {
        Protocol::Binary => read_struct(&mut TBinaryInputProtocol::new(&mut input, true), types),
        Protocol::Compact => read_struct(&mut TCompactInputProtocol::new(&mut input), types),
    }
    .unwrap();
    assert_eq!(
        input.position() as usize,
        bytes.len(),
        "the peer read the whole struct"
    );
    values
}

/// Checks one row both ways and for byte identity, in both protocols.
fn check_both_ways(schema: &TableSchema, row: &[Value]) -> Result<(), TestCaseError> {
    let types: Vec<&Type> = schema.columns.iter().map(|c| &c.ty).collect();
    for protocol in PROTOCOLS {
        let codec = RowCodec::new(schema, protocol).unwrap();
        let mut ours = Vec::new();
        codec.encode(row, &mut ours).unwrap();
        prop_assert_eq!(
            &peer_read(protocol, &types, &ours),
            row,
            "{:?}: the peer reads ours",
            protocol
        );
        let theirs = peer_write(protocol, &types, row);
        prop_assert_eq!(
            &codec.decode(&theirs).unwrap(),
            row,
            "{:?}: we read the peer's",
            protocol
        );
        prop_assert_eq!(ours, theirs, "{:?}: the same bytes", protocol);
    }
    Ok(())
}

/// One column of every primitive type, a decimal, and every composite (nullable items in
/// lists, variants and optionals included).
fn every_type_schema() -> TableSchema {
    let mut columns: Vec<ColumnSchema> = [
        P::Int8,
        P::Int16,
        P::Int32,
        P::Int64,
        P::Uint8,
        P::Uint16,
        P::Uint32,
        P::Uint64,
        P::Float,
        P::Double,
        P::Bool,
        P::String,
        P::Utf8,
        P::Json,
        P::Uuid,
        P::Date,
        P::Datetime,
        P::Timestamp,
        P::Interval,
        P::Date32,
        P::Datetime64,
        P::Timestamp64,
        P::Interval64,
        P::Yson,
        P::Null,
        P::Void,
    ]
    .into_iter()
    .map(|p| ColumnSchema::new(format!("{p:?}"), Type::Primitive(p)))
    .collect();
    let int = || Type::Primitive(P::Int32);
    let composites = [
        Type::Decimal {
            precision: 35,
            scale: 3,
        },
        Type::optional(Type::Primitive(P::Bool)),
        Type::optional(Type::optional(Type::Primitive(P::Utf8))),
        Type::optional(Type::Primitive(P::Null)),
        Type::list(Type::optional(int())),
        Type::list(Type::Primitive(P::Bool)),
        Type::list(Type::Primitive(P::Void)),
        Type::Struct(vec![
            shapeshift_types::Member::new("a", int()),
            shapeshift_types::Member::new("b", Type::optional(Type::Primitive(P::Bool))),
        ]),
        Type::Tuple(vec![Type::Primitive(P::Bool), Type::list(int())]),
        Type::VariantStruct(vec![
            shapeshift_types::Member::new("x", Type::Primitive(P::Bool)),
            shapeshift_types::Member::new("y", Type::optional(int())),
        ]),
        Type::VariantTuple(vec![Type::Primitive(P::Double), Type::Primitive(P::Null)]),
        Type::dict(Type::Primitive(P::Utf8), Type::optional(int())),
        Type::tagged("tag", Type::list(Type::Primitive(P::Uint64))),
    ];
    columns.extend(
        composites
            .into_iter()
            .enumerate()
            .map(|(i, ty)| ColumnSchema::new(format!("c{i}"), ty)),
    );
    TableSchema::new(columns)
}

fn every_type_rows() -> BoxedStrategy<(TableSchema, Vec<Vec<Value>>)> {
    let schema = every_type_schema();
    let rows = rows_of(&schema, 1..4);
    (Just(schema), rows).boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn every_type_matches_apache_thrift_both_ways((schema, rows) in every_type_rows()) {
        for row in &rows {
            check_both_ways(&schema, row)?;
        }
    }

    #[test]
    fn random_schemas_match_apache_thrift_both_ways((schema, rows) in schema_with_rows()) {
        for row in &rows {
            check_both_ways(&schema, row)?;
        }
    }
}

/// Field ids past 15 take the long header in the compact protocol, as the library writes.
#[test]
fn wide_rows_use_long_field_headers_like_the_library() {
    let schema = TableSchema::new(
        (0..40)
            .map(|i| ColumnSchema::new(format!("c{i}"), Type::optional(Type::Primitive(P::Int16))))
            .collect(),
    );
    // Every third column set: deltas of 3, and one jump of 20 (> 15).
    let row: Vec<Value> = (0..40)
        .map(|i| {
            if i % 3 == 0 && !(3..24).contains(&i) || i == 0 {
                Value::Int64(i - 7)
            } else {
                Value::Null
            }
        })
        .collect();
    check_both_ways(&schema, &row).unwrap();
}
