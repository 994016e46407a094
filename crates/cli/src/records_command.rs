//! `shapeshift records`: inspect, print and write ArrayRecord files.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Subcommand, ValueEnum};
use shapeshift_records::{Reader, SequentialReader, Writer};

#[derive(Subcommand)]
pub enum RecordsCommand {
    /// Records, chunks, group size, compression and sizes of a file (JSON with --json), after
    /// reading every chunk (hashes and decoding); exits non-zero if one is damaged.
    Info {
        file: PathBuf,
        #[arg(long)]
        json: bool,
        /// Skip reading the chunks (only the footer is read; the output says so).
        #[arg(long)]
        no_verify: bool,
    },
    /// Print the records of a file, one per line with `\` and newlines escaped as `\\` and
    /// `\n` (or length-prefixed with --output-format).
    Cat {
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = Framing::Lines)]
        output_format: Framing,
    },
    /// Write records read from standard input into FILE.
    Write {
        file: PathBuf,
        /// Writer options in ArrayRecord's grammar, e.g. `group_size:1,zstd:3`.
        #[arg(long, default_value = "")]
        options: String,
        #[arg(long, value_enum, default_value_t = Framing::Lines)]
        input_format: Framing,
    },
}

/// How records are framed on standard input/output.
#[derive(Clone, Copy, ValueEnum)]
pub enum Framing {
    /// One record per line; a backslash in a record is `\\`, a newline `\n`.
    Lines,
    /// Each record preceded by its length as a little-endian u32.
    LengthPrefixed,
}

/// Runs a `records` subcommand.
///
/// # Errors
/// A message for the user: which file, what went wrong.
pub fn run(command: RecordsCommand) -> Result<(), String> {
    match command {
        RecordsCommand::Info {
            file,
            json,
            no_verify,
        } => info(file, json, !no_verify),
        RecordsCommand::Cat {
            file,
            output_format,
        } => cat(file, output_format),
        RecordsCommand::Write {
            file,
            options,
            input_format,
        } => write(file, &options, input_format),
    }
}

/// Reads every chunk (hashes checked, data decoded): `Err` with the first damage found.
fn verify(reader: &Arc<Reader>) -> Result<(), String> {
    let mut records = SequentialReader::new(Arc::clone(reader));
    while let Some(record) = records.next_record() {
        record.map_err(|error| error.to_string())?;
    }
    Ok(())
}

fn info(file: PathBuf, json: bool, check: bool) -> Result<(), String> {
    let reader = Arc::new(Reader::open(&file).map_err(|error| error.to_string())?);
    let info = reader.info();
    let verified = if check { Some(verify(&reader)) } else { None };
    let failure = || match &verified {
        Some(Err(message)) => Err(format!("verification failed: {message}")),
        _ => Ok(()),
    };
    if json {
        let value = serde_json::json!({
            "path": info.path.display().to_string(),
            "file_size": info.file_size,
            "num_records": info.num_records,
            "num_chunks": info.num_chunks,
            "group_size": info.group_size,
            "compression": info.compression,
            "writer_options": info.writer_options,
            "decoded_size": info.decoded_size,
            "footer_offset": info.footer_offset,
            "zstd_dictionary_size": info.zstd_dictionary_size,
            "transposed": info.transposed,
            "chunks_verified": verified.as_ref().map(Result::is_ok),
        });
        println!("{value}");
        return failure();
    }
    println!("file:            {}", info.path.display());
    println!("records:         {}", info.num_records);
    println!("chunks:          {}", info.num_chunks);
    match info.group_size {
        Some(group_size) => println!("group size:      {group_size}"),
        None => println!("group size:      (chunks differ in size)"),
    }
    println!("compression:     {}", info.compression);
    if info.transposed {
        println!("chunk layout:    transposed (written with transpose:true)");
    }
    println!("writer options:  {}", info.writer_options);
    println!("file size:       {} bytes", info.file_size);
    println!("records size:    {} bytes", info.decoded_size);
    if info.decoded_size > 0 {
        println!(
            "ratio:           {:.2}% of the records' size",
            100.0 * info.file_size as f64 / info.decoded_size as f64
        );
    }
    if let Some(size) = info.zstd_dictionary_size {
        println!("zstd dictionary: {size} bytes (shapeshift extension; array_record cannot read this file)");
    }
    match &verified {
        None => println!("verified:        no (--no-verify: only the footer was read)"),
        Some(Ok(())) => println!(
            "verified:        all {} chunks read, hashes and decoding checked",
            info.num_chunks
        ),
        Some(Err(_)) => println!("verified:        FAILED (see the error)"),
    }
    failure()
}

/// A record as one line: `\` and newline escaped, so every record is exactly one line.
fn escape_line(record: &[u8], out: &mut Vec<u8>) {
    for &byte in record {
        match byte {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            _ => out.push(byte),
        }
    }
    out.push(b'\n');
}

/// The record a line stands for (see [`escape_line`]); an unknown escape is an error.
fn unescape_line(line: &[u8], index: u64) -> Result<Vec<u8>, String> {
    let mut record = Vec::with_capacity(line.len());
    let mut bytes = line.iter();
    while let Some(&byte) = bytes.next() {
        if byte != b'\\' {
            record.push(byte);
            continue;
        }
        match bytes.next() {
            Some(b'\\') => record.push(b'\\'),
            Some(b'n') => record.push(b'\n'),
            other => {
                return Err(format!(
                    "standard input: line {} has {} after a backslash (lines escape only \\\\ and \\n; use --input-format length-prefixed for raw bytes)",
                    index + 1,
                    other.map_or("the end of the line".to_string(), |b| format!("{:?}", *b as char))
                ))
            }
        }
    }
    Ok(record)
}

fn cat(file: PathBuf, framing: Framing) -> Result<(), String> {
    let reader = Arc::new(Reader::open(&file).map_err(|error| error.to_string())?);
    let mut records = SequentialReader::new(reader);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut line = Vec::new();
    while let Some(record) = records.next_record() {
        let record = record.map_err(|error| error.to_string())?;
        let written = match framing {
            Framing::Lines => {
                line.clear();
                escape_line(record, &mut line);
                out.write_all(&line)
            }
            Framing::LengthPrefixed => {
                let len = u32::try_from(record.len()).map_err(|_| {
                    format!(
                        "a record of {} bytes does not fit a u32 prefix",
                        record.len()
                    )
                })?;
                out.write_all(&len.to_le_bytes())
                    .and_then(|()| out.write_all(record))
            }
        };
        if let Err(error) = written {
            if error.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(());
            }
            return Err(format!("standard output: {error}"));
        }
    }
    out.flush().or_else(|error| {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            Ok(())
        } else {
            Err(format!("standard output: {error}"))
        }
    })
}

fn write(file: PathBuf, options: &str, framing: Framing) -> Result<(), String> {
    let mut writer = Writer::create(&file, options).map_err(|error| error.to_string())?;
    let stdin = std::io::stdin();
    let mut input = BufReader::with_capacity(1 << 20, stdin.lock());
    let mut count = 0u64;
    let stdin_error = |error: std::io::Error| format!("standard input: {error}");
    match framing {
        Framing::Lines => {
            let mut line = Vec::new();
            loop {
                line.clear();
                if input.read_until(b'\n', &mut line).map_err(stdin_error)? == 0 {
                    break;
                }
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                let record = unescape_line(&line, count)?;
                writer.write(&record).map_err(|error| error.to_string())?;
                count += 1;
            }
        }
        Framing::LengthPrefixed => {
            let mut record = Vec::new();
            loop {
                let mut prefix = [0u8; 4];
                match input.read_exact(&mut prefix) {
                    Ok(()) => {}
                    Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => break,
                    Err(error) => return Err(stdin_error(error)),
                }
                let len = u32::from_le_bytes(prefix) as u64;
                record.clear();
                let read = (&mut input)
                    .take(len)
                    .read_to_end(&mut record)
                    .map_err(stdin_error)?;
                if read as u64 != len {
                    return Err(format!(
                        "standard input: record {count} declares {len} bytes but input ends after {read}"
                    ));
                }
                writer.write(&record).map_err(|error| error.to_string())?;
                count += 1;
            }
        }
    }
    writer.close().map_err(|error| error.to_string())?;
    eprintln!("wrote {count} records to {}", file.display());
    Ok(())
}
