//! `shapeshift`: convert, inspect and measure data formats.

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "shapeshift", version, about = "Choose and use data formats well")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {}

fn main() {
    let cli = Cli::parse();
    match cli.command {}
}
