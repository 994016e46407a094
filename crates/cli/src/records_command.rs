//! `shapeshift records`: inspect, print and write ArrayRecord files.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Subcommand, ValueEnum};
use shapeshift_records::{Reader, SequentialReader, Writer};

#[derive(Subcommand)]
pub enum RecordsCommand {
    /// Records, chunks, group size, compression and sizes of a file (JSON with --json).
    Info {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Print the records of a file, one per line (or length-prefixed with --output-format).
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
    /// One record per line, without the newline.
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
        RecordsCommand::Info { file, json } => info(file, json),
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

fn info(file: PathBuf, json: bool) -> Result<(), String> {
    let reader = Reader::open(&file).map_err(|error| error.to_string())?;
    let info = reader.info();
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
        });
        println!("{value}");
        return Ok(());
    }
    println!("file:            {}", info.path.display());
    println!("records:         {}", info.num_records);
    println!("chunks:          {}", info.num_chunks);
    match info.group_size {
        Some(group_size) => println!("group size:      {group_size}"),
        None => println!("group size:      (chunks differ in size)"),
    }
    println!("compression:     {}", info.compression);
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
    Ok(())
}

fn cat(file: PathBuf, framing: Framing) -> Result<(), String> {
    let reader = Arc::new(Reader::open(&file).map_err(|error| error.to_string())?);
    let mut records = SequentialReader::new(reader);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    while let Some(record) = records.next_record() {
        let record = record.map_err(|error| error.to_string())?;
        let written = match framing {
            Framing::Lines => out.write_all(record).and_then(|()| out.write_all(b"\n")),
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
                writer.write(&line).map_err(|error| error.to_string())?;
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
