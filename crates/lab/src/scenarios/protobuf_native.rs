//! The scenarios on static Protobuf's fast path: prost-generated messages, decoded and
//! encoded directly, with fields read and set by name as compiled user code would.
//!
//! The input messages are those of `shapeshift_formats::protobuf::messages`; BM4's two output
//! messages are declared here with prost's derive, laid out by the same rule as the dynamic
//! codec (column `i` is field `i + 1`), so the interface path reads what this path writes.
//! The framing (u32 LE length then the message; `FFFFFFFx` control markers; `FFFFFFFB` at
//! the end) is YT's; control markers in the input are skipped, since a map job's output
//! carries none.

use std::io::{BufWriter, Read, Write};

use prost::Message;
use shapeshift_formats::protobuf::messages::{Bm1Row, Bm2Row, Bm3Row, Bm5Row};

use super::{extra_value, mix, JobSummary, Scenario, ScenarioError, APPENDED_ELEMENT};
use crate::datasets::bm6_fixed_row;
use shapeshift_types::Value;

include!(concat!(env!("OUT_DIR"), "/bm1_zeros.rs"));

/// BM4's output row, the new column last (field 11).
#[derive(Clone, PartialEq, Message)]
pub struct Bm4Row {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(int64, tag = "2")]
    pub counter: i64,
    #[prost(bytes = "vec", tag = "3")]
    pub user: Vec<u8>,
    #[prost(double, optional, tag = "4")]
    pub score: Option<f64>,
    #[prost(bool, tag = "5")]
    pub active: bool,
    #[prost(bytes = "vec", tag = "6")]
    pub country: Vec<u8>,
    #[prost(uint64, tag = "7")]
    pub created: u64,
    #[prost(int32, tag = "8")]
    pub code: i32,
    #[prost(float, optional, tag = "9")]
    pub ratio: Option<f32>,
    #[prost(string, tag = "10")]
    pub comment: String,
    #[prost(int64, tag = "11")]
    pub extra: i64,
}

/// BM4-mid's output row: the new column is the sixth (field 6), the later ones move up.
#[derive(Clone, PartialEq, Message)]
pub struct Bm4MidRow {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(int64, tag = "2")]
    pub counter: i64,
    #[prost(bytes = "vec", tag = "3")]
    pub user: Vec<u8>,
    #[prost(double, optional, tag = "4")]
    pub score: Option<f64>,
    #[prost(bool, tag = "5")]
    pub active: bool,
    #[prost(int64, tag = "6")]
    pub extra: i64,
    #[prost(bytes = "vec", tag = "7")]
    pub country: Vec<u8>,
    #[prost(uint64, tag = "8")]
    pub created: u64,
    #[prost(int32, tag = "9")]
    pub code: i32,
    #[prost(float, optional, tag = "10")]
    pub ratio: Option<f32>,
    #[prost(string, tag = "11")]
    pub comment: String,
}

/// The stats row of BM1/BM2 (`{rows: uint64, total: uint64}`).
#[derive(Clone, PartialEq, Message)]
pub struct StatsRow {
    #[prost(uint64, tag = "1")]
    pub rows: u64,
    #[prost(uint64, tag = "2")]
    pub total: u64,
}

const TABLE_INDEX: u32 = 0xFFFF_FFFF;
const KEY_SWITCH: u32 = 0xFFFF_FFFE;
const RANGE_INDEX: u32 = 0xFFFF_FFFD;
const ROW_INDEX: u32 = 0xFFFF_FFFC;
const END_OF_STREAM: u32 = 0xFFFF_FFFB;
const MAX_MESSAGE_LEN: u32 = 128 << 20;
/// Messages up to this size are read into a buffer sized up front.
const SMALL_MESSAGE: u32 = 1 << 20;

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Reads the row messages of a framed stream into one reused buffer.
struct Frames {
    input: Box<dyn Read>,
    offset: u64,
    message: Vec<u8>,
    message_offset: u64,
}

impl Frames {
    fn new(input: Box<dyn Read>) -> Frames {
        Frames {
            input: Box::new(std::io::BufReader::with_capacity(1 << 16, input)),
            offset: 0,
            message: Vec::new(),
            message_offset: 0,
        }
    }

    fn error(&self, message: impl std::fmt::Display) -> ScenarioError {
        ScenarioError::new(format!("protobuf: at byte {}: {message}", self.offset))
    }

    /// Reads exactly `n` bytes (n <= 8); `Ok(false)` at a clean end of input when `n` bytes
    /// are a frame's first.
    fn read_word(&mut self, buf: &mut [u8], at_frame_start: bool) -> Result<bool, ScenarioError> {
        let mut got = 0;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) if got == 0 && at_frame_start => return Ok(false),
                Ok(0) => return Err(self.error("the stream ends inside a frame")),
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(format!("read: {e}"))),
            }
        }
        self.offset += buf.len() as u64;
        Ok(true)
    }

    /// The next row message, or `false` at the end of the stream.
    fn next(&mut self) -> Result<bool, ScenarioError> {
        loop {
            let mut word = [0u8; 4];
            if !self.read_word(&mut word, true)? {
                return Ok(false);
            }
            match u32::from_le_bytes(word) {
                END_OF_STREAM => return Ok(false),
                KEY_SWITCH => {}
                TABLE_INDEX | RANGE_INDEX => {
                    self.read_word(&mut word, false)?;
                }
                ROW_INDEX => {
                    let mut wide = [0u8; 8];
                    self.read_word(&mut wide, false)?;
                }
                length if length > MAX_MESSAGE_LEN => {
                    return Err(self.error(format!(
                        "unknown control marker or message length {length:#x}"
                    )))
                }
                length => {
                    self.message.clear();
                    self.message_offset = self.offset;
                    let read = if length <= SMALL_MESSAGE {
                        // Bounded by a constant, not by the input: read straight into place.
                        self.message.resize(length as usize, 0);
                        read_full(&mut self.input, &mut self.message)
                    } else {
                        // Grows only by bytes really read, whatever the length claims.
                        (&mut self.input)
                            .take(u64::from(length))
                            .read_to_end(&mut self.message)
                    }
                    .map_err(|e| self.error(format!("read: {e}")))?;
                    self.message.truncate(read);
                    self.offset += read as u64;
                    if read != length as usize {
                        return Err(
                            self.error(format!("the stream ends inside a {length}-byte message"))
                        );
                    }
                    return Ok(true);
                }
            }
        }
    }

    fn decode<M: Message + Default>(&self, into: &mut M) -> Result<(), ScenarioError> {
        into.clear();
        into.merge(self.message.as_slice()).map_err(|e| {
            ScenarioError::new(format!(
                "protobuf: at byte {}: row message: {e}",
                self.message_offset
            ))
        })
    }
}

struct FrameOut {
    output: BufWriter<Box<dyn Write>>,
    message: Vec<u8>,
}

impl FrameOut {
    fn write<M: Message>(&mut self, message: &M) -> Result<(), ScenarioError> {
        self.message.clear();
        message
            .encode(&mut self.message)
            .map_err(|e| ScenarioError::new(format!("protobuf: encode: {e}")))?;
        let length = u32::try_from(self.message.len())
            .ok()
            .filter(|&l| l <= MAX_MESSAGE_LEN)
            .ok_or_else(|| ScenarioError::new("protobuf: a row message is too long"))?;
        self.output.write_all(&length.to_le_bytes())?;
        self.output.write_all(&self.message)?;
        Ok(())
    }

    fn finish(mut self) -> Result<(), ScenarioError> {
        self.output.write_all(&END_OF_STREAM.to_le_bytes())?;
        self.output.flush()?;
        Ok(())
    }
}

fn bm3_fixed() -> Result<Bm3Row, ScenarioError> {
    let row = bm6_fixed_row();
    let bad = || ScenarioError::new("BM6 fixed row does not fit Bm3Row");
    let int = |i: usize| match row[i] {
        Value::Int64(v) => Ok(v),
        _ => Err(bad()),
    };
    let bytes = |i: usize| match &row[i] {
        Value::String(s) => Ok(s.clone()),
        _ => Err(bad()),
    };
    let double = |i: usize| match row[i] {
        Value::Double(v) => Ok(v),
        _ => Err(bad()),
    };
    Ok(Bm3Row {
        id: int(0)?,
        counter: int(1)?,
        user: bytes(2)?,
        score: Some(double(3)?),
        active: matches!(row[4], Value::Bool(true)),
        country: bytes(5)?,
        created: match row[6] {
            Value::Uint64(v) => v,
            _ => return Err(bad()),
        },
        code: i32::try_from(int(7)?).map_err(|_| bad())?,
        ratio: Some(double(8)? as f32),
        comment: String::from_utf8(bytes(9)?).map_err(|_| bad())?,
    })
}

pub(super) fn run(
    scenario: Scenario,
    input: Box<dyn Read>,
    output: Box<dyn Write>,
    bm6_rows: u64,
) -> Result<JobSummary, ScenarioError> {
    let mut out = FrameOut {
        output: BufWriter::with_capacity(1 << 16, output),
        message: Vec::with_capacity(1024),
    };
    let mut summary = JobSummary::default();
    if scenario == Scenario::Bm6 {
        let fixed = bm3_fixed()?;
        for _ in 0..bm6_rows {
            // Built from the fixed data every time, as the scenario asks.
            let row = Bm3Row {
                user: fixed.user.clone(),
                country: fixed.country.clone(),
                comment: fixed.comment.clone(),
                ..fixed
            };
            out.write(&row)?;
        }
        summary.rows_out = bm6_rows;
        summary.stat = bm6_rows;
        out.finish()?;
        return Ok(summary);
    }
    let mut frames = Frames::new(input);
    let mut total = 0u64;
    match scenario {
        Scenario::Bm1 => {
            let mut row = Bm1Row::default();
            while frames.next()? {
                frames.decode(&mut row)?;
                summary.rows_in += 1;
                total += bm1_zeros(&row);
            }
        }
        Scenario::Bm2 => {
            let mut row = Bm2Row::default();
            while frames.next()? {
                frames.decode(&mut row)?;
                summary.rows_in += 1;
                total += row.data.len() as u64;
            }
        }
        Scenario::Bm3 => {
            let mut row = Bm3Row::default();
            while frames.next()? {
                frames.decode(&mut row)?;
                summary.rows_in += 1;
                row.counter = row.counter.wrapping_add(1);
                summary.stat = mix(summary.stat, row.counter as u64);
                out.write(&row)?;
            }
        }
        Scenario::Bm4 | Scenario::Bm4Mid => {
            let mut row = Bm3Row::default();
            let mut end = Bm4Row::default();
            let mut mid = Bm4MidRow::default();
            while frames.next()? {
                frames.decode(&mut row)?;
                summary.rows_in += 1;
                let extra = extra_value(row.counter);
                summary.stat = mix(summary.stat, extra as u64);
                if scenario == Scenario::Bm4 {
                    end.id = row.id;
                    end.counter = row.counter;
                    std::mem::swap(&mut end.user, &mut row.user);
                    end.score = row.score;
                    end.active = row.active;
                    std::mem::swap(&mut end.country, &mut row.country);
                    end.created = row.created;
                    end.code = row.code;
                    end.ratio = row.ratio;
                    std::mem::swap(&mut end.comment, &mut row.comment);
                    end.extra = extra;
                    out.write(&end)?;
                } else {
                    mid.id = row.id;
                    mid.counter = row.counter;
                    std::mem::swap(&mut mid.user, &mut row.user);
                    mid.score = row.score;
                    mid.active = row.active;
                    mid.extra = extra;
                    std::mem::swap(&mut mid.country, &mut row.country);
                    mid.created = row.created;
                    mid.code = row.code;
                    mid.ratio = row.ratio;
                    std::mem::swap(&mut mid.comment, &mut row.comment);
                    out.write(&mid)?;
                }
            }
        }
        Scenario::Bm5 => {
            let mut row = Bm5Row::default();
            while frames.next()? {
                frames.decode(&mut row)?;
                summary.rows_in += 1;
                for v in row.values.iter_mut() {
                    *v += 1.0;
                    summary.stat = mix(summary.stat, v.to_bits());
                }
                row.values.push(APPENDED_ELEMENT);
                summary.stat = mix(summary.stat, APPENDED_ELEMENT.to_bits());
                out.write(&row)?;
            }
        }
        Scenario::Bm6 => unreachable!("BM6 returned above"),
    }
    if matches!(scenario, Scenario::Bm1 | Scenario::Bm2) {
        out.write(&StatsRow {
            rows: summary.rows_in,
            total,
        })?;
        summary.rows_out = 1;
        summary.stat = total;
    } else {
        summary.rows_out = summary.rows_in;
    }
    out.finish()?;
    Ok(summary)
}
