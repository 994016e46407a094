//! Static Protobuf: the lab's row messages compiled at build time with prost (the own API a
//! program using prost directly has), and which tables have them.
//!
//! The lab's tables have compiled messages ([`messages`]: `Bm1Row`, `Bm2Row`, `Bm3Row`,
//! `Bm5Row`, from `proto/lab_tables.proto` and the BM1 file `build.rs` writes). They follow
//! the dynamic mapping rules field for field (column `i` is field `i + 1`, narrow integers
//! as 32-bit varints — the same bytes as the 64-bit ones for in-range values), so a row has
//! one encoding whichever side writes it. [`LabMessage`] builds them from rows and visits
//! their columns, as a program using prost directly does; the row-format benchmark's
//! baseline is exactly that.

use prost::Message;
use shapeshift_types::{ColumnSchema, Member, PrimitiveType, TableSchema, Type, Value, ValueRef};

/// The prost-generated messages of the lab's tables.
#[allow(clippy::all, missing_docs)]
pub mod messages {
    include!(concat!(env!("OUT_DIR"), "/shapeshift.lab.rs"));

    /// The encoded `FileDescriptorSet` of the lab's messages (for reflection, e.g.
    /// prost-reflect's `DescriptorPool::decode`).
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/lab_tables.fds"));
}

use messages::{Bm1Row, Bm2Row, Bm3Row, Bm5DictEntry, Bm5Pair, Bm5Row};

/// The tables with a compiled message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StaticMessage {
    /// `Bm1Row`: 1000 numeric columns `c0..c999` cycling int8..int64, uint8..uint64, float, double.
    Bm1,
    /// `Bm2Row`: `{id: uint32, data: string}`.
    Bm2,
    /// `Bm3Row`: ten columns of numbers and strings.
    Bm3,
    /// `Bm5Row`: `optional<string>`, `list<double>`, `struct<foo:int32,bar:string>`,
    /// `dict<int64,string>`.
    Bm5,
}

impl StaticMessage {
    pub const ALL: [StaticMessage; 4] = [
        StaticMessage::Bm1,
        StaticMessage::Bm2,
        StaticMessage::Bm3,
        StaticMessage::Bm5,
    ];

    /// The protobuf message's full name.
    pub fn message_name(self) -> &'static str {
        match self {
            StaticMessage::Bm1 => "shapeshift.lab.Bm1Row",
            StaticMessage::Bm2 => "shapeshift.lab.Bm2Row",
            StaticMessage::Bm3 => "shapeshift.lab.Bm3Row",
            StaticMessage::Bm5 => "shapeshift.lab.Bm5Row",
        }
    }

    /// The table schema the message was compiled for (as crates/lab/src/datasets.rs).
    pub fn schema(self) -> TableSchema {
        let p = Type::Primitive;
        use PrimitiveType as P;
        let columns = match self {
            StaticMessage::Bm1 => {
                const CYCLE: [PrimitiveType; 10] = [
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
                ];
                (0..1000)
                    .map(|i| ColumnSchema::new(format!("c{i}"), p(CYCLE[i % CYCLE.len()])))
                    .collect()
            }
            StaticMessage::Bm2 => vec![
                ColumnSchema::new("id", p(P::Uint32)),
                ColumnSchema::new("data", p(P::String)),
            ],
            StaticMessage::Bm3 => vec![
                ColumnSchema::new("id", p(P::Int64)),
                ColumnSchema::new("counter", p(P::Int64)),
                ColumnSchema::new("user", p(P::String)),
                ColumnSchema::new("score", p(P::Double)),
                ColumnSchema::new("active", p(P::Bool)),
                ColumnSchema::new("country", p(P::String)),
                ColumnSchema::new("created", p(P::Timestamp)),
                ColumnSchema::new("code", p(P::Int32)),
                ColumnSchema::new("ratio", p(P::Float)),
                ColumnSchema::new("comment", p(P::Utf8)),
            ],
            StaticMessage::Bm5 => vec![
                ColumnSchema::new("maybe", Type::optional(p(P::String))),
                ColumnSchema::new("values", Type::list(p(P::Double))),
                ColumnSchema::new(
                    "pair",
                    Type::Struct(vec![
                        Member::new("foo", p(P::Int32)),
                        Member::new("bar", p(P::String)),
                    ]),
                ),
                ColumnSchema::new("dict", Type::dict(p(P::Int64), p(P::String))),
            ],
        };
        TableSchema::new(columns)
    }

    /// The compiled message for `schema`: same column names and types, in order.
    pub fn for_schema(schema: &TableSchema) -> Option<StaticMessage> {
        // Built once: building every lab table's schema (one of 1000 columns) on each call
        // cost ~40 us, which a stream of one small row (a Python `dumps([row])`) paid whole.
        static SCHEMAS: std::sync::OnceLock<Vec<(StaticMessage, TableSchema)>> =
            std::sync::OnceLock::new();
        let schemas = SCHEMAS.get_or_init(|| {
            StaticMessage::ALL
                .into_iter()
                .map(|m| (m, m.schema()))
                .collect()
        });
        schemas
            .iter()
            .find(|(_, own)| {
                own.columns.len() == schema.columns.len()
                    && own
                        .columns
                        .iter()
                        .zip(&schema.columns)
                        .all(|(a, b)| a.name == b.name && a.ty == b.ty)
            })
            .map(|(m, _)| *m)
    }
}

/// A lab table's generated message as a table row: what a program using prost directly
/// does to fill a message from a row and to read every column back.
pub trait LabMessage: Message + Default {
    /// The table the message was compiled for.
    const TABLE: StaticMessage;

    /// The message of one row of owned values (schema order).
    ///
    /// # Errors
    /// A message when a value does not fit its field (wrong kind, out of range, wrong
    /// width of the row).
    fn from_row(values: &[Value]) -> Result<Self, String>;

    /// Makes `self` the message of one row, as [`LabMessage::from_row`] does, reusing the
    /// message's buffers (a program filling one message per row allocates nothing once
    /// they are large enough). On error `self` is left partly filled.
    ///
    /// # Errors
    /// As [`LabMessage::from_row`].
    fn fill_from_row(&mut self, values: &[Value]) -> Result<(), String> {
        *self = Self::from_row(values)?;
        Ok(())
    }

    /// Calls `column` with each column's value in schema order, as the interface views it
    /// (`Null` for an absent optional); a composite column (a list, struct or dict) is one
    /// `Composite(&[])` call to `column` and one `inner` call per scalar inside it.
    fn visit_columns(&self, column: impl FnMut(ValueRef<'_>), inner: impl FnMut(ValueRef<'_>));
}

fn row_width(values: &[Value], columns: usize) -> Result<(), String> {
    if values.len() == columns {
        Ok(())
    } else {
        Err(format!(
            "row has {} values, the table {columns} columns",
            values.len()
        ))
    }
}

fn signed(value: &Value, lo: i64, hi: i64) -> Result<i64, String> {
    match value {
        Value::Int64(v) if (lo..=hi).contains(v) => Ok(*v),
        other => Err(format!("expected an int64 in {lo}..={hi}, found {other:?}")),
    }
}

fn unsigned(value: &Value, hi: u64) -> Result<u64, String> {
    match value {
        Value::Uint64(v) if *v <= hi => Ok(*v),
        other => Err(format!("expected a uint64 up to {hi}, found {other:?}")),
    }
}

fn double(value: &Value) -> Result<f64, String> {
    match value {
        Value::Double(v) => Ok(*v),
        other => Err(format!("expected a double, found {other:?}")),
    }
}

fn bytes(value: &Value) -> Result<Vec<u8>, String> {
    match value {
        Value::String(s) => Ok(s.clone()),
        other => Err(format!("expected a string, found {other:?}")),
    }
}

/// Copies a string value into `buffer`, keeping its allocation.
fn bytes_into(value: &Value, buffer: &mut Vec<u8>) -> Result<(), String> {
    match value {
        Value::String(s) => {
            buffer.clear();
            buffer.extend_from_slice(s);
            Ok(())
        }
        other => Err(format!("expected a string, found {other:?}")),
    }
}

include!(concat!(env!("OUT_DIR"), "/bm1_bridge.rs"));

impl LabMessage for Bm2Row {
    const TABLE: StaticMessage = StaticMessage::Bm2;

    fn from_row(values: &[Value]) -> Result<Self, String> {
        row_width(values, 2)?;
        Ok(Bm2Row {
            id: unsigned(&values[0], u32::MAX.into())? as u32,
            data: bytes(&values[1])?,
        })
    }

    fn fill_from_row(&mut self, values: &[Value]) -> Result<(), String> {
        row_width(values, 2)?;
        self.id = unsigned(&values[0], u32::MAX.into())? as u32;
        bytes_into(&values[1], &mut self.data)
    }

    fn visit_columns(&self, mut column: impl FnMut(ValueRef<'_>), _: impl FnMut(ValueRef<'_>)) {
        column(ValueRef::Uint64(u64::from(self.id)));
        column(ValueRef::String(&self.data));
    }
}

/// YT's largest timestamp: just before 2106-01-01 (49673 days), in microseconds.
const TIMESTAMP_MAX: u64 = 49_673 * 86_400 * 1_000_000 - 1;

impl LabMessage for Bm3Row {
    const TABLE: StaticMessage = StaticMessage::Bm3;

    fn from_row(values: &[Value]) -> Result<Self, String> {
        row_width(values, 10)?;
        let comment = String::from_utf8(bytes(&values[9])?)
            .map_err(|e| format!("comment: invalid UTF-8: {e}"))?;
        Ok(Bm3Row {
            id: signed(&values[0], i64::MIN, i64::MAX)?,
            counter: signed(&values[1], i64::MIN, i64::MAX)?,
            user: bytes(&values[2])?,
            score: Some(double(&values[3])?),
            active: match &values[4] {
                Value::Bool(v) => *v,
                other => return Err(format!("expected a bool, found {other:?}")),
            },
            country: bytes(&values[5])?,
            created: unsigned(&values[6], TIMESTAMP_MAX)?,
            code: signed(&values[7], i32::MIN.into(), i32::MAX.into())? as i32,
            ratio: Some(double(&values[8])? as f32),
            comment,
        })
    }

    fn fill_from_row(&mut self, values: &[Value]) -> Result<(), String> {
        row_width(values, 10)?;
        self.id = signed(&values[0], i64::MIN, i64::MAX)?;
        self.counter = signed(&values[1], i64::MIN, i64::MAX)?;
        bytes_into(&values[2], &mut self.user)?;
        self.score = Some(double(&values[3])?);
        self.active = match &values[4] {
            Value::Bool(v) => *v,
            other => return Err(format!("expected a bool, found {other:?}")),
        };
        bytes_into(&values[5], &mut self.country)?;
        self.created = unsigned(&values[6], TIMESTAMP_MAX)?;
        self.code = signed(&values[7], i32::MIN.into(), i32::MAX.into())? as i32;
        self.ratio = Some(double(&values[8])? as f32);
        match &values[9] {
            Value::String(s) => {
                let comment =
                    std::str::from_utf8(s).map_err(|e| format!("comment: invalid UTF-8: {e}"))?;
                self.comment.clear();
                self.comment.push_str(comment);
                Ok(())
            }
            other => Err(format!("expected a string, found {other:?}")),
        }
    }

    fn visit_columns(&self, mut column: impl FnMut(ValueRef<'_>), _: impl FnMut(ValueRef<'_>)) {
        column(ValueRef::Int64(self.id));
        column(ValueRef::Int64(self.counter));
        column(ValueRef::String(&self.user));
        column(ValueRef::Double(self.score.unwrap_or_default()));
        column(ValueRef::Bool(self.active));
        column(ValueRef::String(&self.country));
        column(ValueRef::Uint64(self.created));
        column(ValueRef::Int64(i64::from(self.code)));
        column(ValueRef::Double(f64::from(self.ratio.unwrap_or_default())));
        column(ValueRef::String(self.comment.as_bytes()));
    }
}

impl LabMessage for Bm5Row {
    const TABLE: StaticMessage = StaticMessage::Bm5;

    fn from_row(values: &[Value]) -> Result<Self, String> {
        row_width(values, 4)?;
        let maybe = match &values[0] {
            Value::Null => None,
            other => Some(bytes(other)?),
        };
        let Value::List(items) = &values[1] else {
            return Err(format!("values: expected a list, found {:?}", values[1]));
        };
        let values_field = items.iter().map(double).collect::<Result<_, _>>()?;
        let pair = match &values[2] {
            Value::Tuple(members) if members.len() == 2 => Bm5Pair {
                foo: signed(&members[0], i32::MIN.into(), i32::MAX.into())? as i32,
                bar: bytes(&members[1])?,
            },
            other => return Err(format!("pair: expected a 2-member struct, found {other:?}")),
        };
        let Value::Dict(pairs) = &values[3] else {
            return Err(format!("dict: expected a dict, found {:?}", values[3]));
        };
        let dict = pairs
            .iter()
            .map(|(key, value)| {
                Ok(Bm5DictEntry {
                    key: signed(key, i64::MIN, i64::MAX)?,
                    value: bytes(value)?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Bm5Row {
            maybe,
            values: values_field,
            pair: Some(pair),
            dict,
        })
    }

    fn fill_from_row(&mut self, values: &[Value]) -> Result<(), String> {
        row_width(values, 4)?;
        match &values[0] {
            Value::Null => self.maybe = None,
            other => bytes_into(other, self.maybe.get_or_insert_with(Vec::new))?,
        }
        let Value::List(items) = &values[1] else {
            return Err(format!("values: expected a list, found {:?}", values[1]));
        };
        self.values.clear();
        for item in items {
            self.values.push(double(item)?);
        }
        let Value::Tuple(members) = &values[2] else {
            return Err(format!(
                "pair: expected a 2-member struct, found {:?}",
                values[2]
            ));
        };
        let [foo, bar] = members.as_slice() else {
            return Err(format!(
                "pair: expected a 2-member struct, found {:?}",
                values[2]
            ));
        };
        let pair = self.pair.get_or_insert_with(Bm5Pair::default);
        pair.foo = signed(foo, i32::MIN.into(), i32::MAX.into())? as i32;
        bytes_into(bar, &mut pair.bar)?;
        let Value::Dict(pairs) = &values[3] else {
            return Err(format!("dict: expected a dict, found {:?}", values[3]));
        };
        // Entries are kept (with their buffers) and overwritten; extra ones are dropped.
        self.dict.truncate(pairs.len());
        for (i, (key, value)) in pairs.iter().enumerate() {
            if i == self.dict.len() {
                self.dict.push(Bm5DictEntry::default());
            }
            let entry = &mut self.dict[i];
            entry.key = signed(key, i64::MIN, i64::MAX)?;
            bytes_into(value, &mut entry.value)?;
        }
        Ok(())
    }

    fn visit_columns(
        &self,
        mut column: impl FnMut(ValueRef<'_>),
        mut inner: impl FnMut(ValueRef<'_>),
    ) {
        column(match &self.maybe {
            Some(s) => ValueRef::String(s),
            None => ValueRef::Null,
        });
        column(ValueRef::Composite(&[]));
        for v in &self.values {
            inner(ValueRef::Double(*v));
        }
        column(ValueRef::Composite(&[]));
        let pair = self.pair.as_ref();
        inner(ValueRef::Int64(i64::from(pair.map_or(0, |p| p.foo))));
        inner(ValueRef::String(pair.map_or(&[][..], |p| &p.bar)));
        column(ValueRef::Composite(&[]));
        for entry in &self.dict {
            inner(ValueRef::Int64(entry.key));
            inner(ValueRef::String(&entry.value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use shapeshift_types::testing::arb_value;

    fn rows(message: StaticMessage) -> impl Strategy<Value = Vec<Vec<Value>>> {
        let row = message
            .schema()
            .columns
            .iter()
            .map(|c| arb_value(&c.ty))
            .collect::<Vec<_>>();
        proptest::collection::vec(row, 1..6)
    }

    /// One message refilled row after row equals the message built from each row alone
    /// (buffers reused, nothing of an earlier row left over).
    fn refills_match<M: LabMessage + PartialEq + std::fmt::Debug>(
        rows: &[Vec<Value>],
    ) -> Result<(), TestCaseError> {
        let mut message = M::default();
        for row in rows {
            message.fill_from_row(row).map_err(TestCaseError::fail)?;
            prop_assert_eq!(&message, &M::from_row(row).map_err(TestCaseError::fail)?);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn refilled_bm2_messages_match(rows in rows(StaticMessage::Bm2)) {
            refills_match::<Bm2Row>(&rows)?;
        }

        #[test]
        fn refilled_bm3_messages_match(rows in rows(StaticMessage::Bm3)) {
            refills_match::<Bm3Row>(&rows)?;
        }

        #[test]
        fn refilled_bm5_messages_match(rows in rows(StaticMessage::Bm5)) {
            refills_match::<Bm5Row>(&rows)?;
        }
    }

    #[test]
    fn refilling_refuses_what_building_refuses() {
        let mut message = Bm3Row::default();
        let mut row: Vec<Value> = vec![
            Value::Int64(1),
            Value::Int64(2),
            Value::String(b"u".to_vec()),
            Value::Double(1.0),
            Value::Bool(true),
            Value::String(b"DE".to_vec()),
            Value::Uint64(3),
            Value::Int64(4),
            Value::Double(0.5),
            Value::String(vec![0xff]),
        ];
        assert!(message.fill_from_row(&row).is_err());
        assert!(Bm3Row::from_row(&row).is_err());
        row[9] = Value::String(b"ok".to_vec());
        row[7] = Value::Int64(1 << 40);
        assert!(message.fill_from_row(&row).is_err());
        row[7] = Value::Int64(4);
        message.fill_from_row(&row).unwrap();
        assert_eq!(message, Bm3Row::from_row(&row).unwrap());
    }
}
