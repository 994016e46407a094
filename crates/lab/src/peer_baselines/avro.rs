//! apache-avro used directly: `Writer` and `Reader` of `apache_avro::types::Value` (see the
//! module docs of [`super`] for the work both sides do).

use std::hint::black_box;

use shapeshift_types::{TableSchema, Value, ValueRef};

use crate::measure::Touch;

/// apache-avro: `rows` converted to `apache_avro::types::Value` records and written by a
/// `Writer` of the interface's Avro schema (no compression).
///
/// # Errors
/// A message when apache-avro refuses the schema or a value.
pub fn avro_write(schema: &TableSchema, rows: &[Vec<Value>]) -> Result<Vec<u8>, String> {
    let avro_schema = avro_schema_of(schema)?;
    let RecordShape { names, schemas } = record_shape(&avro_schema)?;
    let mut writer = apache_avro::Writer::new(&avro_schema, Vec::new());
    for row in rows {
        let fields = names
            .iter()
            .zip(&schemas)
            .zip(row)
            .map(|((name, s), v)| Ok((name.clone(), to_avro(v, s)?)))
            .collect::<Result<Vec<_>, String>>()?;
        writer
            .append(AvroValue::Record(fields))
            .map_err(avro_error)?;
    }
    writer.into_inner().map_err(avro_error)
}

/// apache-avro `Reader` to `apache_avro::types::Value`s, every value touched: rows read and
/// their checksum.
///
/// # Errors
/// A message for a file apache-avro cannot read.
pub fn avro_read(bytes: &[u8]) -> Result<(usize, u64), String> {
    let (mut touch, mut leaves, mut rows) = (Touch::default(), Touch::default(), 0);
    let reader = apache_avro::Reader::new(bytes).map_err(avro_error)?;
    for value in reader {
        match value.map_err(avro_error)? {
            AvroValue::Record(fields) => {
                for (_, v) in &fields {
                    touch_avro(v, &mut touch, &mut leaves, false);
                }
            }
            other => {
                return Err(format!(
                    "apache-avro: a row that is not a record: {other:?}"
                ))
            }
        }
        rows += 1;
    }
    black_box(leaves.total());
    Ok((rows, touch.total()))
}

use apache_avro::types::Value as AvroValue;

fn avro_error(e: impl std::fmt::Display) -> String {
    format!("apache-avro: {e}")
}

fn avro_schema_of(schema: &TableSchema) -> Result<apache_avro::Schema, String> {
    apache_avro::Schema::parse_str(&shapeshift_formats::avro::avro_schema(schema))
        .map_err(avro_error)
}

struct RecordShape {
    names: Vec<String>,
    schemas: Vec<apache_avro::Schema>,
}

fn record_shape(schema: &apache_avro::Schema) -> Result<RecordShape, String> {
    match schema {
        apache_avro::Schema::Record(record) => Ok(RecordShape {
            names: record.fields.iter().map(|f| f.name.clone()).collect(),
            schemas: record.fields.iter().map(|f| f.schema.clone()).collect(),
        }),
        _ => Err("apache-avro: the table schema is not a record".into()),
    }
}

/// A value of the lab's tables as apache-avro's value of `schema` (the interface's mapping).
fn to_avro(value: &Value, schema: &apache_avro::Schema) -> Result<AvroValue, String> {
    use apache_avro::Schema as S;
    let mismatch = || format!("apache-avro baseline: value {value:?} for schema {schema:?}");
    Ok(match (schema, value) {
        (S::Union(union), Value::Null) => {
            let _ = union;
            AvroValue::Union(0, Box::new(AvroValue::Null))
        }
        (S::Union(union), v) => {
            let inner = union.variants().get(1).ok_or_else(mismatch)?;
            AvroValue::Union(1, Box::new(to_avro(v, inner)?))
        }
        (S::Null, Value::Null) => AvroValue::Null,
        (S::Int, Value::Int64(v)) => AvroValue::Int(*v as i32),
        (S::Int, Value::Uint64(v)) => AvroValue::Int(*v as i32),
        (S::Long, Value::Int64(v)) => AvroValue::Long(*v),
        (S::Long, Value::Uint64(v)) => AvroValue::Long(*v as i64),
        (S::TimestampMicros, Value::Uint64(v)) => AvroValue::TimestampMicros(*v as i64),
        (S::TimestampMicros, Value::Int64(v)) => AvroValue::TimestampMicros(*v),
        (S::Date, Value::Uint64(v)) => AvroValue::Date(*v as i32),
        (S::Date, Value::Int64(v)) => AvroValue::Date(*v as i32),
        (S::Float, Value::Double(v)) => AvroValue::Float(*v as f32),
        (S::Double, Value::Double(v)) => AvroValue::Double(*v),
        (S::Boolean, Value::Bool(v)) => AvroValue::Boolean(*v),
        (S::Bytes, Value::String(v)) => AvroValue::Bytes(v.clone()),
        (S::String, Value::String(v)) => {
            AvroValue::String(String::from_utf8(v.clone()).map_err(avro_error)?)
        }
        (S::Array(array), Value::List(items)) => AvroValue::Array(
            items
                .iter()
                .map(|v| to_avro(v, &array.items))
                .collect::<Result<_, _>>()?,
        ),
        (S::Array(array), Value::Dict(pairs)) => {
            let entry = record_shape(&array.items)?;
            AvroValue::Array(
                pairs
                    .iter()
                    .map(|(k, v)| {
                        Ok(AvroValue::Record(vec![
                            (entry.names[0].clone(), to_avro(k, &entry.schemas[0])?),
                            (entry.names[1].clone(), to_avro(v, &entry.schemas[1])?),
                        ]))
                    })
                    .collect::<Result<_, String>>()?,
            )
        }
        (S::Record(_), Value::Tuple(values)) => {
            let shape = record_shape(schema)?;
            AvroValue::Record(
                shape
                    .names
                    .iter()
                    .zip(&shape.schemas)
                    .zip(values)
                    .map(|((n, s), v)| Ok((n.clone(), to_avro(v, s)?)))
                    .collect::<Result<_, String>>()?,
            )
        }
        _ => return Err(mismatch()),
    })
}

/// Touches an apache-avro value as the interface's view of it is touched: a top-level
/// scalar into `touch`, a top-level composite as one composite in `touch` with its leaves in
/// `leaves`.
fn touch_avro(value: &AvroValue, touch: &mut Touch, leaves: &mut Touch, inside: bool) {
    let scalar = |v: ValueRef<'_>, touch: &mut Touch, leaves: &mut Touch| {
        if inside {
            leaves.value(v)
        } else {
            touch.value(v)
        }
    };
    match value {
        AvroValue::Null => {}
        AvroValue::Boolean(v) => scalar(ValueRef::Bool(*v), touch, leaves),
        AvroValue::Int(v) | AvroValue::Date(v) => {
            scalar(ValueRef::Int64((*v).into()), touch, leaves)
        }
        AvroValue::Long(v) | AvroValue::TimestampMicros(v) => {
            scalar(ValueRef::Int64(*v), touch, leaves)
        }
        AvroValue::Float(v) => scalar(ValueRef::Double((*v).into()), touch, leaves),
        AvroValue::Double(v) => scalar(ValueRef::Double(*v), touch, leaves),
        AvroValue::Bytes(v) | AvroValue::Fixed(_, v) => scalar(ValueRef::String(v), touch, leaves),
        AvroValue::String(v) => scalar(ValueRef::String(v.as_bytes()), touch, leaves),
        AvroValue::Union(_, inner) => touch_avro(inner, touch, leaves, inside),
        AvroValue::Array(items) => {
            for item in items {
                touch_avro(item, touch, leaves, true);
            }
            scalar(ValueRef::Composite(&[]), touch, leaves);
        }
        AvroValue::Record(fields) => {
            for (_, v) in fields {
                touch_avro(v, touch, leaves, true);
            }
            scalar(ValueRef::Composite(&[]), touch, leaves);
        }
        AvroValue::Map(entries) => {
            for v in entries.values() {
                touch_avro(v, touch, leaves, true);
            }
            scalar(ValueRef::Composite(&[]), touch, leaves);
        }
        other => leaves.value(ValueRef::String(format!("{other:?}").as_bytes())),
    }
}
