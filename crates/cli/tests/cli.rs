//! The `shapeshift` binary end to end: conversions between every pair of formats, Skiff's
//! system columns, inspect's sniffing, and errors on bad input (non-zero exit, a message
//! naming the format and the position).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const FORMATS: [&str; 12] = [
    "yson",
    "yson-text",
    "skiff",
    "protobuf",
    "protobuf-dynamic",
    "arrow",
    "json",
    "msgpack",
    "cbor",
    "avro",
    "thrift",
    "thrift-compact",
];

/// Every kind of column: signed and unsigned integers, strings, optional, decimal, a nested
/// composite and a yson value.
const SCHEMA: &str = r#"[
  {name=id; type_v3=int64};
  {name=count; type_v3=uint64};
  {name=name; type_v3={type_name=optional; item=utf8}};
  {name=price; type_v3={type_name=decimal; precision=9; scale=2}};
  {name=tags; type_v3={type_name=list; item={type_name=struct; members=[{name=k; type=string}; {name=v; type=double}]}}};
  {name=meta; type_v3={type_name=optional; item=yson}};
]"#;

/// The rows as `shapeshift convert --to yson-text` spells them.
const ROWS: &str = concat!(
    "{\"id\"=-5;\"count\"=18446744073709551615u;\"name\"=\"caf\\xC3\\xA9\";\"price\"=\"\\x80\\0\\1\\xF4\";",
    "\"tags\"=[{\"k\"=\"a\";\"v\"=1.5;};];\"meta\"=<\"x\"=1;>[%true;#;];};\n",
    "{\"id\"=7;\"count\"=0u;\"name\"=#;\"price\"=\"\\x7F\\xFF\\xFF\\xFF\";\"tags\"=[];\"meta\"=#;};\n",
);

fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_shapeshift")
}

fn run(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(binary())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().expect("the binary finishes");
    writer.join().expect("the writer thread ends");
    output
}

fn ok(args: &[&str], input: &[u8]) -> Vec<u8> {
    let output = run(args, input);
    assert!(
        output.status.success(),
        "shapeshift {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

fn schema_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("schema.yson");
    std::fs::write(&path, text).expect("write the schema");
    path
}

fn convert(schema: &Path, from: &str, to: &str, input: &[u8]) -> Output {
    run(
        &[
            "convert",
            "--schema",
            schema.to_str().unwrap(),
            "--from",
            from,
            "--to",
            to,
        ],
        input,
    )
}

/// The formats the binary converts to; every one must be (checked by the caller).
fn available(schema: &Path) -> Vec<&'static str> {
    FORMATS
        .into_iter()
        .filter(|format| {
            let output = convert(schema, "yson-text", format, ROWS.as_bytes());
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                output.status.success() || stderr.contains("not available"),
                "yson-text -> {format}: {stderr}"
            );
            output.status.success()
        })
        .collect()
}

#[test]
fn every_pair_of_formats_converts_losslessly() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema_file(dir.path(), SCHEMA);
    let formats = available(&schema);
    for must in FORMATS {
        assert!(formats.contains(&must), "{must} is not available");
    }
    for from in &formats {
        let a = convert(&schema, "yson-text", from, ROWS.as_bytes());
        for to in &formats {
            let output = convert(&schema, from, to, &a.stdout);
            assert!(
                output.status.success(),
                "{from} -> {to}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let back = ok(
                &[
                    "convert",
                    "--schema",
                    schema.to_str().unwrap(),
                    "--from",
                    to,
                    "--to",
                    "yson-text",
                ],
                &output.stdout,
            );
            assert_eq!(
                String::from_utf8_lossy(&back),
                ROWS,
                "{from} -> {to} -> yson-text"
            );
        }
    }
}

#[test]
fn json_follows_yt_conventions() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema_file(dir.path(), SCHEMA);
    let json = ok(
        &[
            "convert",
            "--schema",
            schema.to_str().unwrap(),
            "--from",
            "yson-text",
            "--to",
            "json",
        ],
        ROWS.as_bytes(),
    );
    let text = String::from_utf8(json).unwrap();
    let first = text.lines().next().unwrap();
    // uint64 exactly, UTF-8 text as its bytes (encode_utf8), yson with $attributes/$value.
    assert!(first.contains("\"count\":18446744073709551615"), "{first}");
    assert!(first.contains("\"name\":\"caf\u{c3}\u{a9}\""), "{first}");
    assert!(
        first.contains("\"meta\":{\"$attributes\":{\"x\":1},\"$value\":[true,null]}"),
        "{first}"
    );
}

#[test]
fn yson_to_yson_needs_no_schema_and_keeps_control_records() {
    let input = b"<table_index=1>#;\n<row_index=10>#;\n{a=1;b=[x;];};\n";
    let out = ok(
        &["convert", "--from", "yson-text", "--to", "yson-text"],
        input,
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "<\"table_index\"=1;>#;\n<\"row_index\"=10;>#;\n{\"a\"=1;\"b\"=[\"x\";];};\n"
    );
}

#[test]
fn skiff_carries_positions_only_with_system_columns() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema_file(dir.path(), "[{name=x; type_v3=int64}]");
    let schema = schema.to_str().unwrap();
    let input =
        b"<range_index=2>#;\n<row_index=10>#;\n{x=1};\n{x=2};\n<key_switch=%true>#;\n{x=3};\n";
    let skiff = ok(
        &[
            "convert",
            "--schema",
            schema,
            "--system-columns",
            "--from",
            "yson-text",
            "--to",
            "skiff",
        ],
        input,
    );
    let back = ok(
        &[
            "convert",
            "--schema",
            schema,
            "--system-columns",
            "--from",
            "skiff",
            "--to",
            "yson-text",
        ],
        &skiff,
    );
    assert_eq!(
        String::from_utf8(back).unwrap(),
        "<\"range_index\"=2;>#;\n<\"row_index\"=10;>#;\n{\"x\"=1;};\n{\"x\"=2;};\n<\"key_switch\"=%true;>#;\n{\"x\"=3;};\n"
    );
    let refused = run(
        &[
            "convert",
            "--schema",
            schema,
            "--from",
            "yson-text",
            "--to",
            "skiff",
        ],
        input,
    );
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(
        message.contains("skiff") && message.contains("--system-columns"),
        "{message}"
    );
}

#[test]
fn bad_input_exits_non_zero_naming_format_and_position() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema_file(dir.path(), SCHEMA);
    for format in ["yson", "skiff", "json", "msgpack", "cbor", "protobuf"] {
        let good = convert(&schema, "yson-text", format, ROWS.as_bytes()).stdout;
        let cut = &good[..good.len() - 3];
        let output = convert(&schema, format, "yson", cut);
        assert!(
            !output.status.success(),
            "{format}: a truncated stream was accepted"
        );
        let message = String::from_utf8_lossy(&output.stderr);
        assert!(message.contains(format), "{format}: {message}");
        assert!(
            message.contains("byte") || message.contains("row"),
            "{format}: {message}"
        );
    }
    let output = convert(&schema, "json", "yson", b"{\"id\":1,\"count\":-1}\n");
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        message.contains("json: at byte 0, row 0") && message.contains("count"),
        "{message}"
    );
}

#[test]
fn inspect_sniffs_the_format_and_counts_rows() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema_file(dir.path(), SCHEMA);
    let schema_arg = schema.to_str().unwrap();
    for format in ["json", "msgpack", "cbor", "yson"] {
        let bytes = convert(&schema, "yson-text", format, ROWS.as_bytes()).stdout;
        let file = dir.path().join(format!("rows.{format}"));
        std::fs::write(&file, bytes).unwrap();
        let report = ok(
            &["inspect", file.to_str().unwrap(), "--schema", schema_arg],
            b"",
        );
        let report = String::from_utf8(report).unwrap();
        assert!(
            report.contains(&format!("format: {format} (sniffed)")),
            "{report}"
        );
        assert!(report.contains("rows: 2"), "{report}");
        assert!(report.contains("\"name\"=\"price\""), "{report}");
    }
    let file = dir.path().join("rows.json");
    let report = String::from_utf8(ok(&["inspect", file.to_str().unwrap()], b"")).unwrap();
    assert!(
        report.contains("columns seen: id, count, name, price, tags, meta"),
        "{report}"
    );
    let skiff = convert(&schema, "yson-text", "skiff", ROWS.as_bytes()).stdout;
    let file = dir.path().join("rows.skiff");
    std::fs::write(&file, skiff).unwrap();
    let report = ok(
        &[
            "inspect",
            file.to_str().unwrap(),
            "--format",
            "skiff",
            "--schema",
            schema_arg,
        ],
        b"",
    );
    assert!(String::from_utf8(report).unwrap().contains("rows: 2"));
    let refused = run(
        &["inspect", file.to_str().unwrap(), "--format", "skiff"],
        b"",
    );
    assert!(!refused.status.success());
}

#[test]
fn inspect_reads_arrow_and_avro_schemas_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema_file(dir.path(), SCHEMA);
    let schema_arg = schema.to_str().unwrap();
    for format in ["arrow", "avro"] {
        let bytes = convert(&schema, "yson-text", format, ROWS.as_bytes()).stdout;
        let file = dir.path().join(format!("rows.{format}"));
        std::fs::write(&file, bytes).unwrap();
        let given = String::from_utf8(ok(
            &["inspect", file.to_str().unwrap(), "--schema", schema_arg],
            b"",
        ))
        .unwrap();
        let found = String::from_utf8(ok(&["inspect", file.to_str().unwrap()], b"")).unwrap();
        assert!(
            found.contains(&format!("format: {format} (sniffed)")),
            "{found}"
        );
        assert!(
            found.contains("table 0: rows: 2") && found.contains("\nrows: 2"),
            "{found}"
        );
        // The YT types come back exactly: the same schema text as the one given.
        let schema_line = |report: &str| {
            report
                .lines()
                .find(|l| l.starts_with("table 0: schema"))
                .and_then(|l| l.split_once(": ").map(|(_, rest)| rest.to_owned()))
                .and_then(|rest| rest.split_once(": ").map(|(_, text)| text.to_owned()))
                .unwrap()
        };
        assert_eq!(schema_line(&found), schema_line(&given), "{format}");
        // A truncated file is refused with the format and a position.
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
        let refused = run(&["inspect", file.to_str().unwrap()], b"");
        let message = String::from_utf8_lossy(&refused.stderr).into_owned();
        assert!(!refused.status.success());
        assert!(
            message.contains(format) && message.contains("byte"),
            "{message}"
        );
    }
}

#[test]
fn cat_shows_rows_of_any_format() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema_file(dir.path(), SCHEMA);
    let cbor = convert(&schema, "yson-text", "cbor", ROWS.as_bytes()).stdout;
    let text = ok(
        &[
            "cat",
            "--format",
            "cbor",
            "--schema",
            schema.to_str().unwrap(),
        ],
        &cbor,
    );
    assert_eq!(
        String::from_utf8(text).unwrap(),
        ROWS.replace("};\n", "}\n")
    );
}

#[test]
fn avro_output_is_compressed_with_the_codec_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let schema = schema_file(dir.path(), SCHEMA);
    let schema_arg = schema.to_str().unwrap();
    let plain = ok(
        &[
            "convert",
            "--schema",
            schema_arg,
            "--from",
            "yson-text",
            "--to",
            "yson",
        ],
        ROWS.as_bytes(),
    );
    let to_avro = |spec: &'static str| {
        [
            "convert",
            "--schema",
            schema_arg,
            "--from",
            "yson-text",
            "--to",
            "avro",
            "--avro-codec",
            spec,
        ]
    };
    for (spec, name) in [
        ("null", "null"),
        ("deflate:9", "deflate"),
        ("snappy", "snappy"),
        ("zstd:7", "zstandard"),
    ] {
        let avro = ok(&to_avro(spec), ROWS.as_bytes());
        // The header names the codec: the `avro.codec` key, then its value as Avro bytes
        // (zigzag length, then the name).
        let mut entry = b"avro.codec".to_vec();
        entry.push((name.len() * 2) as u8);
        entry.extend_from_slice(name.as_bytes());
        assert!(
            avro.windows(entry.len()).any(|w| w == entry.as_slice()),
            "{spec}: no avro.codec = {name} in the header"
        );
        let back = ok(
            &[
                "convert", "--schema", schema_arg, "--from", "avro", "--to", "yson",
            ],
            &avro,
        );
        assert_eq!(back, plain, "{spec}: the rows come back unchanged");
    }
    let refused = run(&to_avro("zstd:99"), ROWS.as_bytes());
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("zstd:99"));
}

/// Records as `records write --input-format length-prefixed` reads them.
fn length_prefixed(records: &[&[u8]]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for record in records {
        bytes.extend_from_slice(&(record.len() as u32).to_le_bytes());
        bytes.extend_from_slice(record);
    }
    bytes
}

fn record_file(dir: &Path, name: &str, records: &[&[u8]]) -> PathBuf {
    let path = dir.join(name);
    let input = length_prefixed(records);
    ok(
        &[
            "records",
            "write",
            "--input-format",
            "length-prefixed",
            "--options",
            "group_size:2",
            path.to_str().unwrap(),
        ],
        &input,
    );
    path
}

#[test]
fn records_info_verifies_every_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let path = record_file(dir.path(), "f.ar", &[b"one", b"two", b"three"]);
    let text = String::from_utf8(ok(&["records", "info", path.to_str().unwrap()], b"")).unwrap();
    assert!(
        text.contains("verified:        all 2 chunks read"),
        "{text}"
    );
    let skipped = ok(
        &["records", "info", "--no-verify", path.to_str().unwrap()],
        b"",
    );
    assert!(String::from_utf8(skipped)
        .unwrap()
        .contains("verified:        no"));

    // A damaged data chunk: the footer still reads, the verification does not.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[70] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let output = run(&["records", "info", path.to_str().unwrap()], b"");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("verification failed") && stderr.contains("at byte"),
        "{stderr}"
    );
    let output = run(&["records", "info", "--json", path.to_str().unwrap()], b"");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("\"chunks_verified\":false"));
}

#[test]
fn records_cat_escapes_newlines_and_write_reads_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let records: [&[u8]; 4] = [b"one\ntwo", b"back\\slash", b"", b"plain"];
    let path = record_file(dir.path(), "f.ar", &records);
    let lines = ok(&["records", "cat", path.to_str().unwrap()], b"");
    assert_eq!(lines, b"one\\ntwo\nback\\\\slash\n\nplain\n");
    let copy = dir.path().join("copy.ar");
    ok(&["records", "write", copy.to_str().unwrap()], &lines);
    let framed = ok(
        &[
            "records",
            "cat",
            "--output-format",
            "length-prefixed",
            copy.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(framed, length_prefixed(&records));
    let output = run(&["records", "write", copy.to_str().unwrap()], b"a\\tb\n");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("line 1"));
}

#[test]
fn inspect_recognises_record_files_and_truncation_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = record_file(dir.path(), "f.ar", &[b"one", b"two", b"three"]);
    let text = String::from_utf8(ok(&["inspect", path.to_str().unwrap()], b"")).unwrap();
    assert!(text.starts_with("format:          ArrayRecord"), "{text}");
    assert!(text.contains("records:         3"), "{text}");

    let bytes = std::fs::read(&path).unwrap();
    for cut in [30_000, 65_536] {
        let truncated = dir.path().join(format!("cut{cut}.ar"));
        std::fs::write(&truncated, &bytes[..cut]).unwrap();
        let output = run(&["records", "info", truncated.to_str().unwrap()], b"");
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("truncated"), "cut at {cut}: {stderr}");
    }
}

#[test]
fn writing_into_a_closed_pipe_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let many: Vec<Vec<u8>> = (0..200_000)
        .map(|i| format!("record {i}").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = many.iter().map(Vec::as_slice).collect();
    let records = record_file(dir.path(), "big.ar", &refs);
    let table = dir.path().join("big.yson");
    std::fs::write(&table, ROWS.repeat(50_000)).unwrap();
    for args in [
        vec!["records", "cat", records.to_str().unwrap()],
        vec!["cat", table.to_str().unwrap()],
    ] {
        let mut child = Command::new(binary())
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 16];
        std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
        drop(stdout); // what `| head` does once it has its lines
        let output = child.wait_with_output().unwrap();
        assert!(
            output.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn cat_help_lists_every_format_it_reads() {
    let help = String::from_utf8(ok(&["cat", "--help"], b"")).unwrap();
    for format in FORMATS {
        assert!(
            help.contains(format),
            "{format} is missing from `cat --help`: {help}"
        );
    }
}

/// With `yaml` on either side, `convert` takes one whole document: YSON -> YAML -> YSON and
/// JSON -> YAML -> JSON keep it, a YAML config reads, and a row format is refused.
#[test]
fn convert_turns_documents_into_yaml_and_back() {
    let document = b"<\"kind\"=\"spec\";>{\"big\"=18446744073709551615u;\"raw\"=\"\\xFF\\0\";\"x\"=[%nan;#;-1.5;\"1\";];}";
    let yaml = ok(
        &["convert", "--from", "yson-text", "--to", "yaml"],
        document,
    );
    let text = String::from_utf8(yaml.clone()).unwrap();
    for needle in ["!attributes", "!uint64", "!!binary", ".nan", "\"1\""] {
        assert!(text.contains(needle), "{needle:?} missing in {text}");
    }
    // yson -> yson is a table-stream conversion, which ends the one item with `;`.
    let mut binary = ok(
        &["convert", "--from", "yson-text", "--to", "yson"],
        document,
    );
    assert_eq!(binary.pop(), Some(b';'));
    let back = ok(&["convert", "--from", "yaml", "--to", "yson"], &yaml);
    assert_eq!(back, binary);
    assert_eq!(
        ok(&["convert", "--from", "yson", "--to", "yaml"], &back),
        yaml
    );

    let json = b"{\"$attributes\":{\"a\":1},\"$value\":{\"u\":{\"$type\":\"uint64\",\"$value\":\"5\"},\"l\":[true,null]}}\n";
    let yaml = ok(&["convert", "--from", "json", "--to", "yaml"], json);
    assert_eq!(
        ok(&["convert", "--from", "yaml", "--to", "json"], &yaml),
        json
    );

    let config = b"cluster_name: 'Test Cluster'\nnum_tokens: 256\nseeds:\n  - 127.0.0.1\n";
    let yson = ok(&["convert", "--from", "yaml", "--to", "yson-text"], config);
    let yson = String::from_utf8(yson).unwrap();
    assert!(yson.contains("\"num_tokens\" = 256"), "{yson}");

    let refused = run(&["convert", "--from", "yaml", "--to", "msgpack"], config);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("row format"));
    let bad = run(&["convert", "--from", "yaml", "--to", "yson"], b"a: [1\n");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("yaml: at byte"));
}

#[test]
fn advise_names_the_python_it_could_not_run() {
    let output = Command::new(binary())
        .args(["advise", "data.parquet"])
        .env("SHAPESHIFT_PYTHON", "/nonexistent/python")
        .output()
        .expect("the binary runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("could not run /nonexistent/python")
            && stderr.contains("SHAPESHIFT_PYTHON"),
        "{stderr}"
    );
}

#[test]
fn advise_hands_its_arguments_to_the_python_advisor() {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/python");
    if !python.is_file() {
        eprintln!("no .venv (run `make build`): skipped");
        return;
    }
    let output = Command::new(binary())
        .args(["advise", "--help"])
        .env("SHAPESHIFT_PYTHON", &python)
        .output()
        .expect("the binary runs");
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("usage: shapeshift advise") && stdout.contains("--access"),
        "{stdout}"
    );
}

/// `shapeshift sql` over a Skiff table (schema file) and a YSON table of the same rows: a
/// join printed as a table, the result written to Parquet and read back, and clear errors.
#[test]
fn sql_queries_tables_in_our_formats() {
    let dir = tempfile::tempdir().expect("temp dir");
    let schema = dir.path().join("people.yson");
    std::fs::write(
        &schema,
        "[{name=id; type_v3=int64}; {name=colour; type_v3=utf8}; \
         {name=score; type_v3={type_name=optional; item=double}}]",
    )
    .unwrap();
    let rows = b"{id=1;colour=red;score=2.5};\n{id=2;colour=blue;score=#};\n{id=3;colour=red;score=4.0};\n";
    let skiff = dir.path().join("people.skiff");
    std::fs::write(
        &skiff,
        ok(
            &[
                "convert",
                "--schema",
                schema.to_str().unwrap(),
                "--from",
                "yson-text",
                "--to",
                "skiff",
            ],
            rows,
        ),
    )
    .unwrap();
    let yson = dir.path().join("people.bin");
    std::fs::write(&yson, rows).unwrap();
    let table =
        |name: &str, path: &Path, format: &str| format!("{name}={}{format}", path.display());
    let schema_arg = |name: &str| format!("{name}={}", schema.display());
    let query =
        "SELECT p.colour, count(*) AS n, sum(q.score) AS total FROM p JOIN q ON p.id = q.id \
                 GROUP BY p.colour ORDER BY p.colour";
    // The join of p (Skiff) with q, both with the schema file, and any further arguments.
    let join = |q: &str, more: &[&str]| {
        let (p, schema_p, schema_q) = (table("p", &skiff, ""), schema_arg("p"), schema_arg("q"));
        let mut args = vec!["sql", query, "--table", &p, "--table", q];
        args.extend(["--schema", &schema_p, "--schema", &schema_q]);
        args.extend(more);
        ok(&args, b"")
    };
    let printed = String::from_utf8(join(&table("q", &yson, ":yson-text"), &[])).unwrap();
    assert!(printed.contains("| blue   | 1 |       |"), "{printed}");
    assert!(printed.contains("| red    | 2 | 6.5   |"), "{printed}");

    let out = dir.path().join("result.parquet");
    join(&table("q", &skiff, ""), &["--out", out.to_str().unwrap()]);
    let back = String::from_utf8(ok(
        &["sql", "SELECT * FROM r", "--table", &table("r", &out, "")],
        b"",
    ))
    .unwrap();
    assert!(back.contains("| red    | 2 | 6.5   |"), "{back}");

    let fails = |args: &[&str], wanted: &str| {
        let output = run(args, b"");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains(wanted),
            "{args:?}: {stderr}"
        );
    };
    fails(
        &["sql", "SELECT 1", "--table", "x=/nonexistent/file.parquet"],
        "table x: /nonexistent/file.parquet",
    );
    fails(
        &["sql", "SELEC * FROM p", "--table", &table("p", &out, "")],
        "SELEC",
    );
    fails(
        &["sql", "SELECT * FROM p", "--table", &table("p", &skiff, "")],
        "skiff does not describe its rows",
    );
    fails(
        &[
            "sql",
            "SELECT * FROM p",
            "--table",
            &table("p", &skiff, ":nope"),
        ],
        "unknown format 'nope'",
    );
    fails(
        &[
            "sql",
            "SELECT * FROM p",
            "--table",
            &table("p", &out, ""),
            "--out",
            dir.path().join("x.unknown").to_str().unwrap(),
        ],
        "--to",
    );
}
