//! A server process's CPU time, read from outside it through /proc (Linux), so every server
//! (ours and the peers) is measured the same way.

use std::io;

/// CPU time (user + system) of every thread of process `pid`, in nanoseconds: the sum of the
/// threads' `schedstat` run times (nanosecond resolution), or where the kernel has no
/// schedstat, `utime + stime` of `/proc/<pid>/stat` (clock ticks, 100 per second).
///
/// # Errors
/// The I/O error when the process is gone or /proc is not there.
pub fn process_cpu_ns(pid: u32) -> io::Result<u64> {
    match schedstat_ns(pid) {
        Ok(ns) => Ok(ns),
        Err(_) => stat_ns(pid),
    }
}

/// CPU time of the calling thread so far, in nanoseconds (its `schedstat` run time).
///
/// # Errors
/// The I/O error where /proc has no schedstat.
pub fn thread_cpu_ns() -> io::Result<u64> {
    first_number(&std::fs::read_to_string("/proc/thread-self/schedstat")?)
}

fn schedstat_ns(pid: u32) -> io::Result<u64> {
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let path = task?.path().join("schedstat");
        // A thread that ended between the listing and the read holds no time any more.
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        total += first_number(&text)?;
    }
    Ok(total)
}

fn stat_ns(pid: u32) -> io::Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name (which may hold spaces) start at state, field 3.
    let after_name = text.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |i: usize| -> io::Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unreadable /proc stat"))
    };
    // utime and stime are fields 14 and 15, i.e. 11 and 12 after the state field.
    Ok((ticks(11)? + ticks(12)?) * 10_000_000)
}

fn first_number(text: &str) -> io::Result<u64> {
    text.split_whitespace()
        .next()
        .and_then(|f| f.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unreadable schedstat"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_process_cpu_time_grows_with_work() {
        let pid = std::process::id();
        let before = process_cpu_ns(pid).unwrap();
        let mut x = 0u64;
        let started = std::time::Instant::now();
        while started.elapsed().as_millis() < 60 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
        let after = process_cpu_ns(pid).unwrap();
        assert!(after > before, "{before} -> {after}");
        assert!(stat_ns(pid).unwrap() > 0);
    }
}
