//! The study's Q1 (`GROUP BY day, month, colour`, count, sort) over the same generated rows
//! in Parquet and in our Skiff and Arrow streams, through the engine: medians of a few
//! interleaved runs and the ratio of each format to Parquet, printed as JSON lines.
//!
//! `cargo bench -p shapeshift-engine --bench q1_formats -- ROWS FILES RUNS [FORMAT]`
//! (defaults 3000000 4 5; FORMAT `skiff` or `arrow` runs that format and Parquet only, for a
//! profile of one path). The files go to a temporary directory.

use std::fs::File;
use std::path::Path;
use std::time::Instant;

use shapeshift_engine::datafusion::parquet::arrow::ArrowWriter;
use shapeshift_engine::{Engine, TableFormat, TableSource};
use shapeshift_formats::arrow::rows::rows_to_batch;
use shapeshift_formats::registry::{open_sink, FormatKind};
use shapeshift_formats::table::RowPosition;
use shapeshift_types::{ColumnSchema, PrimitiveType as P, TableSchema, Type, Value};

const Q1: &str = "SELECT day, month, colour, count(*) AS n FROM t \
                  GROUP BY day, month, colour ORDER BY month, day";
const COLOURS: [&str; 7] = [
    "red", "orange", "yellow", "green", "blue", "indigo", "violet",
];

fn schema() -> TableSchema {
    let p = |p: P| Type::Primitive(p);
    TableSchema::new(vec![
        ColumnSchema::new("object_id", p(P::Int64)),
        ColumnSchema::new("guid", p(P::Utf8)),
        ColumnSchema::new("uni_id", p(P::Int64)),
        ColumnSchema::new("intercept_at", p(P::Timestamp64)),
        ColumnSchema::new("day", p(P::Int32)),
        ColumnSchema::new("month", p(P::Int32)),
        ColumnSchema::new("colour", p(P::Utf8)),
    ])
}

/// Rows `first..first + count` of the seeded table (splitmix64 of the row number).
fn rows(first: u64, count: u64) -> Vec<Vec<Value>> {
    let mix = |mut z: u64| {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (first..first + count)
        .map(|i| {
            let (a, b) = (mix(i), mix(i ^ 0x5555_5555));
            vec![
                Value::Int64(i as i64),
                Value::String(format!("{:016x}{:016x}", a, b).into_bytes()),
                Value::Int64((a % 1_000_000) as i64),
                Value::Int64(1_600_000_000_000_000 + (b % 31_536_000_000_000) as i64),
                Value::Int64((a % 31 + 1) as i64),
                Value::Int64((b % 12 + 1) as i64),
                Value::String(
                    COLOURS[(a >> 40) as usize % COLOURS.len()]
                        .as_bytes()
                        .to_vec(),
                ),
            ]
        })
        .collect()
}

fn write_part(dir: &Path, part: usize, table: &TableSchema, rows: &[Vec<Value>]) {
    let batch = rows_to_batch(table, rows).expect("rows fit the schema");
    let file = File::create(dir.join(format!("part-{part}.parquet"))).expect("create");
    let mut writer = ArrowWriter::try_new(file, batch.schema(), None).expect("parquet writer");
    writer.write(&batch).expect("write parquet");
    writer.close().expect("close parquet");
    for kind in [FormatKind::Skiff, FormatKind::Arrow] {
        let file = File::create(dir.join(format!("part-{part}.{kind}"))).expect("create");
        let mut sink = open_sink(kind, std::slice::from_ref(table), Box::new(file)).expect("sink");
        for row in rows {
            sink.write_owned_row(&RowPosition::default(), row)
                .expect("write");
        }
        sink.finish().expect("finish");
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    // `cargo bench` adds `--bench`.
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let only = words.get(3).cloned();
    let args: Vec<u64> = words
        .iter()
        .take(3)
        .map(|a| a.parse().expect("ROWS FILES RUNS are numbers"))
        .collect();
    let total = args.first().copied().unwrap_or(3_000_000);
    let files = args.get(1).copied().unwrap_or(4).max(1);
    let runs = args.get(2).copied().unwrap_or(5).max(1);
    let dir = tempfile::tempdir().expect("temp dir");
    let table = schema();
    let per_file = total.div_ceil(files);
    for part in 0..files {
        let first = part * per_file;
        let count = per_file.min(total.saturating_sub(first));
        write_part(dir.path(), part as usize, &table, &rows(first, count));
    }
    let formats = [
        ("parquet", TableFormat::Parquet),
        ("skiff", TableFormat::Rows(FormatKind::Skiff)),
        ("arrow", TableFormat::Rows(FormatKind::Arrow)),
    ];
    let mut engines = Vec::new();
    for (extension, format) in formats {
        if only
            .as_deref()
            .is_some_and(|o| extension != "parquet" && extension != o)
        {
            continue;
        }
        let engine = Engine::new().expect("engine");
        engine
            .register(&TableSource {
                name: "t".into(),
                location: format!("{}/part-*.{extension}", dir.path().display()),
                format: Some(format),
                schema: Some(table.clone()),
            })
            .expect("register");
        engines.push((extension, engine));
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); engines.len()];
    let mut answers: Vec<String> = vec![String::new(); engines.len()];
    // One warm-up round (page cache, allocator), then interleaved timed rounds.
    for round in 0..=runs {
        for (i, (_, engine)) in engines.iter().enumerate() {
            let start = Instant::now();
            let (_, batches) = engine.query(Q1).expect("Q1 runs");
            let seconds = start.elapsed().as_secs_f64();
            if round == 0 {
                // Q1 sorts by (month, day) only: colours within a day come in any order.
                let text =
                    shapeshift_engine::datafusion::arrow::util::pretty::pretty_format_batches(
                        &batches,
                    )
                    .expect("format")
                    .to_string();
                let mut lines: Vec<&str> = text.lines().collect();
                lines.sort_unstable();
                answers[i] = lines.join("\n");
            } else {
                times[i].push(seconds);
            }
        }
    }
    assert!(
        answers.iter().all(|a| *a == answers[0]),
        "the formats disagree on Q1"
    );
    let parquet = median(times[0].clone());
    for ((name, _), samples) in engines.iter().zip(&times) {
        let m = median(samples.clone());
        println!(
            "{{\"query\":\"Q1\",\"rows\":{total},\"files\":{files},\"format\":\"{name}\",\"median_s\":{m:.4},\"min_s\":{:.4},\"ratio_to_parquet\":{:.3},\"runs\":{runs}}}",
            samples.iter().copied().fold(f64::INFINITY, f64::min),
            m / parquet
        );
    }
}
