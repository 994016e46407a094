//! `shapeshift`: convert, inspect and measure data formats.

use clap::{Parser, Subcommand};

mod advise_command;
mod bench_command;
mod bench_rpc;
mod bench_serializers;
mod convert_command;
mod document_command;
mod generate_command;
mod job_command;
mod records_command;
mod sql_command;
mod table_rows;

#[derive(Parser)]
#[command(
    name = "shapeshift",
    version,
    about = "Choose and use data formats well"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the rows of a YSON or Skiff table stream readably (one row per line).
    Cat(convert_command::CatArgs),
    /// Convert a table stream between formats, standard input to standard output (or one
    /// whole YSON/JSON/YAML document, when either side is yaml).
    Convert(convert_command::ConvertArgs),
    /// Print the format, schema and row count of a table file, or the summary of an ArrayRecord
    /// file (format sniffed if not given).
    Inspect(convert_command::InspectArgs),
    /// ArrayRecord files: info, cat, write.
    #[command(subcommand)]
    Records(records_command::RecordsCommand),
    /// Measure every format choice on your own files and recommend one per use (runs the
    /// Python advisor: `shapeshift advise --help`).
    Advise(advise_command::AdviseArgs),
    /// Native measurements for the lab (JSON on standard output).
    #[command(subcommand)]
    Bench(bench_command::BenchCommand),
    /// Write a seeded table of the format study to standard output.
    Generate(generate_command::GenerateArgs),
    /// Run SQL over files in any format shapeshift reads (Parquet, Arrow, CSV, JSON lines,
    /// YT tables in every row format, ArrayRecord files); print or write the result.
    Sql(sql_command::SqlArgs),
    /// Run one map job of the format study (input on stdin, output on stdout).
    Job(job_command::JobArgs),
}

fn main() {
    // Rust ignores SIGPIPE, so writing into a closed pipe (`shapeshift cat ... | head`) would
    // surface as an error; with the default action the process ends quietly, as Unix tools do.
    #[cfg(unix)]
    // SAFETY: restoring a signal's default disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Cat(args) => convert_command::cat(args),
        Command::Convert(args) => convert_command::convert(args),
        Command::Inspect(args) => convert_command::inspect(args),
        Command::Records(command) => records_command::run(command),
        Command::Advise(args) => advise_command::run(args),
        Command::Bench(command) => bench_command::run(command),
        Command::Generate(args) => generate_command::run(args),
        Command::Job(args) => job_command::run(args),
        Command::Sql(args) => sql_command::run(args),
    };
    if let Err(message) = result {
        eprintln!("shapeshift: {message}");
        std::process::exit(1);
    }
}
