//! A contender's four steps (jvm-serializers' `BenchmarkRunner`): *forward* builds the
//! library's own object from the reference object, *serialize*, *deserialize*, and the
//! *reverse* steps rebuild the reference object, in full (`deep`) or only its Media part
//! (`shallow`); and the timing of jvm-serializers' columns from those steps.

use std::hint::black_box;
use std::time::Instant;

use serde::Serialize;

use super::media::{Media, MediaContent};

/// One library's (or one of our formats') steps for MediaContent.
pub trait Contender {
    /// What the forward step builds (the library's object, or a borrow of the reference
    /// object for libraries that serialize it as it is).
    type Built<'a>;
    /// What deserializing gives before any reverse step.
    type Decoded;
    fn forward<'a>(&self, value: &'a MediaContent) -> Result<Self::Built<'a>, String>;
    fn serialize(&self, built: &Self::Built<'_>) -> Result<Vec<u8>, String>;
    fn deserialize(&self, bytes: &[u8]) -> Result<Self::Decoded, String>;
    fn shallow(&self, decoded: Self::Decoded) -> Result<Media, String>;
    fn deep(&self, decoded: Self::Decoded) -> Result<MediaContent, String>;
}

/// How many iterations a trial runs and how many trials are kept.
#[derive(Clone, Copy, Debug)]
pub struct Trials {
    /// Timed trials (jvm-serializers: 20); one more runs first as warm-up.
    pub trials: usize,
    /// Iterations per trial (jvm-serializers: 2,000) ...
    pub iterations: usize,
    /// ... cut to what fits in this many seconds when a call is slow.
    pub trial_budget_s: f64,
}

/// One column: the minimum over trials (jvm-serializers' figure) and every trial, in
/// nanoseconds per operation.
#[derive(Clone, Debug, Serialize)]
pub struct Column {
    pub min_ns: f64,
    pub trials_ns: Vec<f64>,
    pub iterations: usize,
}

/// jvm-serializers' row for one contender and value.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub create: Column,
    pub ser: Column,
    #[serde(rename = "+same")]
    pub same: Column,
    pub deser: Column,
    #[serde(rename = "+shal")]
    pub shal: Column,
    #[serde(rename = "+deep")]
    pub deep: Column,
    /// ser + +deep, trial by trial (the minimum is the sum of the two minima).
    pub total: Column,
    pub size: usize,
    /// Size after zlib (deflate) level 6, jvm-serializers' "+dfl".
    #[serde(rename = "+dfl")]
    pub deflate: usize,
    /// Size after zstd level 3.
    pub zstd: usize,
}

/// The round trip of `value`: forward, serialize, deserialize, then both reverse steps must
/// give back the value (and its Media).
///
/// # Errors
/// What differs, or a step's error.
pub fn check_round_trip<C: Contender>(c: &C, value: &MediaContent) -> Result<Vec<u8>, String> {
    let bytes = c.serialize(&c.forward(value)?)?;
    let deep = c.deep(c.deserialize(&bytes)?)?;
    if &deep != value {
        return Err(format!("round trip gave {deep:?}, expected {value:?}"));
    }
    let shallow = c.shallow(c.deserialize(&bytes)?)?;
    if shallow != value.media {
        return Err(format!(
            "shallow round trip gave {shallow:?}, expected {:?}",
            value.media
        ));
    }
    Ok(bytes)
}

/// jvm-serializers' timed columns: create, ser, +same, deser, +shal, +deep.
pub const COLUMNS: usize = 6;

/// A contender's columns on one value, calibrated and warmed up, ready to be timed beside
/// the other contenders' ([`interleave`]).
pub struct Prepared<'a> {
    /// create, ser, +same, deser, +shal, +deep, in [`Row`]'s order.
    pub columns: Vec<Timed<'a>>,
    /// The serialized value.
    pub bytes: Vec<u8>,
}

impl Prepared<'_> {
    /// The row of the six columns [`interleave`] timed (in `columns`' order).
    ///
    /// # Errors
    /// A compressor's error, or not six columns.
    pub fn row(&self, columns: Vec<Column>) -> Result<Row, String> {
        let [create, ser, same, deser, shal, deep]: [Column; COLUMNS] = columns
            .try_into()
            .map_err(|c: Vec<Column>| format!("{} columns timed, expected {COLUMNS}", c.len()))?;
        let total = Column {
            min_ns: ser.min_ns + deep.min_ns,
            trials_ns: ser
                .trials_ns
                .iter()
                .zip(&deep.trials_ns)
                .map(|(a, b)| a + b)
                .collect(),
            iterations: ser.iterations.min(deep.iterations),
        };
        let (deflate, zstd) = compressed_sizes(&self.bytes)?;
        Ok(Row {
            create,
            ser,
            same,
            deser,
            shal,
            deep,
            total,
            size: self.bytes.len(),
            deflate,
            zstd,
        })
    }
}

/// Every column of `c` on `value` (after [`check_round_trip`]), calibrated and warmed up.
///
/// # Errors
/// A step's error (or a failed round trip).
pub fn prepare<'a, C: Contender>(
    c: &'a C,
    value: &'a MediaContent,
    trials: Trials,
) -> Result<Prepared<'a>, String> {
    let bytes = check_round_trip(c, value)?;
    let built = c.forward(value)?;
    let create = timed(trials, move || c.forward(value).map(|b| drop(black_box(b))))?;
    let ser = timed(trials, move || {
        let built = c.forward(black_box(value))?;
        c.serialize(&built).map(|b| drop(black_box(b)))
    })?;
    let same = timed(trials, move || {
        c.serialize(black_box(&built)).map(|b| drop(black_box(b)))
    })?;
    let input = bytes.clone();
    let deser = timed(trials, move || {
        c.deserialize(black_box(&input)).map(|d| drop(black_box(d)))
    })?;
    let input = bytes.clone();
    let shal = timed(trials, move || {
        c.shallow(c.deserialize(black_box(&input))?)
            .map(|m| drop(black_box(m)))
    })?;
    let input = bytes.clone();
    let deep = timed(trials, move || {
        c.deep(c.deserialize(black_box(&input))?)
            .map(|m| drop(black_box(m)))
    })?;
    Ok(Prepared {
        columns: vec![create, ser, same, deser, shal, deep],
        bytes,
    })
}

/// Sizes of `bytes` after zlib level 6 and zstd level 3.
///
/// # Errors
/// A compressor's error.
pub fn compressed_sizes(bytes: &[u8]) -> Result<(usize, usize), String> {
    let deflate = zlib_size(bytes, 6)?;
    let zstd = zstd::bulk::compress(bytes, 3)
        .map_err(|e| format!("zstd: {e}"))?
        .len();
    Ok((deflate, zstd))
}

/// The size of `bytes` after zlib's `compress2` at `level` (zlib itself: the ports compress
/// to other sizes, see the workspace's Cargo.toml).
fn zlib_size(bytes: &[u8], level: i32) -> Result<usize, String> {
    let source_len = libz_sys::uLong::try_from(bytes.len()).map_err(|e| e.to_string())?;
    // SAFETY: compressBound only computes a bound.
    let bound = unsafe { libz_sys::compressBound(source_len) };
    let mut out = vec![0u8; usize::try_from(bound).map_err(|e| e.to_string())?];
    let mut out_len = bound;
    // SAFETY: `out` holds `out_len` writable bytes and `bytes` `source_len` readable ones;
    // zlib writes at most `out_len` bytes and stores the count written in `out_len`.
    let status = unsafe {
        libz_sys::compress2(
            out.as_mut_ptr(),
            &mut out_len,
            bytes.as_ptr(),
            source_len,
            level,
        )
    };
    if status != libz_sys::Z_OK {
        return Err(format!("zlib compress2 failed with status {status}"));
    }
    usize::try_from(out_len).map_err(|e| e.to_string())
}

/// An operation calibrated to its iteration count: each call of `trial` runs one trial and
/// gives nanoseconds per operation.
pub struct Timed<'a> {
    trial: Box<dyn FnMut() -> Result<f64, String> + 'a>,
    iterations: usize,
}

/// `operation` run once, timed once to fit a trial in `trials.trial_budget_s` (at most
/// `trials.iterations` iterations), then one untimed warm-up trial.
///
/// # Errors
/// The operation's error.
pub fn timed<'a>(
    trials: Trials,
    mut operation: impl FnMut() -> Result<(), String> + 'a,
) -> Result<Timed<'a>, String> {
    operation()?;
    let start = Instant::now();
    operation()?;
    let one = start.elapsed().as_secs_f64().max(1e-9);
    let iterations = ((trials.trial_budget_s / one) as usize).clamp(1, trials.iterations.max(1));
    // The iteration loop is compiled per operation: the box is called once per trial.
    let mut trial = move || -> Result<f64, String> {
        let start = Instant::now();
        for _ in 0..iterations {
            operation()?;
        }
        Ok(start.elapsed().as_secs_f64() * 1e9 / iterations as f64)
    };
    trial()?;
    Ok(Timed {
        trial: Box::new(trial),
        iterations,
    })
}

/// `trials` timed trials of every operation in `ops`, in rounds: a round runs one trial of
/// each, starting one further along every round. A slow moment of the machine then falls on
/// all contenders alike instead of on every trial of the one being timed, which is what the
/// ratios between them need (timing each contender's trials back to back, as jvm-serializers
/// did, moved single ratios by a third between runs on a shared host).
///
/// # Errors
/// An operation's error.
pub fn interleave(trials: usize, ops: &mut [Timed<'_>]) -> Result<Vec<Column>, String> {
    let trials = trials.max(1);
    let mut samples = vec![Vec::with_capacity(trials); ops.len()];
    for round in 0..trials {
        for k in 0..ops.len() {
            let at = (round + k) % ops.len();
            samples[at].push((ops[at].trial)()?);
        }
    }
    Ok(samples
        .into_iter()
        .zip(ops.iter())
        .map(|(trials_ns, op)| Column {
            min_ns: trials_ns.iter().copied().fold(f64::INFINITY, f64::min),
            trials_ns,
            iterations: op.iterations,
        })
        .collect())
}
