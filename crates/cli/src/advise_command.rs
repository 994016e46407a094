//! `shapeshift advise`: runs the Python advisor (`python -m shapeshift.advisor`), which
//! measures every format choice on the user's files with the peer libraries of the lab. The
//! measuring lives in Python because the peers (pyarrow, pcodec, Vortex, array_record,
//! fastavro, ...) are Python packages; this command finds the interpreter that has shapeshift
//! installed and hands it the arguments unchanged.

use clap::Args;
use std::path::PathBuf;
use std::process::Command;

#[derive(Args)]
#[command(disable_help_flag = true)]
pub struct AdviseArgs {
    /// Arguments of `python -m shapeshift.advisor` (`shapeshift advise --help` lists them).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// Imports the advisor and runs it; an interpreter without shapeshift says so in one line.
const LAUNCHER: &str = "import sys
try:
    from shapeshift.advisor.__main__ import main
except ImportError as error:
    sys.exit(f'shapeshift advise: the Python package shapeshift (with pyarrow) is not importable by {sys.executable}: {error}. Run `make build`, or set SHAPESHIFT_PYTHON to a Python that has it.')
sys.exit(main(sys.argv[1:]))
";

/// `$SHAPESHIFT_PYTHON`, else the `python` beside this binary (the venv's, where `make build`
/// installs both), else `python3` on `PATH`.
fn interpreter() -> PathBuf {
    if let Some(python) = std::env::var_os("SHAPESHIFT_PYTHON") {
        return PathBuf::from(python);
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(dir) = exe.parent() {
            let beside = dir.join("python");
            if beside.is_file() {
                return beside;
            }
        }
    }
    PathBuf::from("python3")
}

pub fn run(args: AdviseArgs) -> Result<(), String> {
    let python = interpreter();
    let status = Command::new(&python)
        .arg("-c")
        .arg(LAUNCHER)
        .args(&args.args)
        .status()
        .map_err(|error| {
            format!(
                "advise needs Python with the shapeshift package; could not run {}: {error} \
                 (set SHAPESHIFT_PYTHON, or run `make build`)",
                python.display()
            )
        })?;
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => std::process::exit(code),
        None => Err(format!("{} was ended by a signal", python.display())),
    }
}
